// Package visibility decides which parts of a parsed page a browser would
// not render, so that internal/content never passes hidden text (how
// prompt injections are slipped to agents) to the markdown: the hidden
// attribute and inert elements, the page's own CSS cascade (inline styles
// and <style> rules, media queries, computed font sizes and colours, SVG
// presentation attributes) and the patterns that hide text from sight
// while it stays in the page (DropHidden). TextLen measures the text under
// a node; LoadingState tells when DropHidden kept hidden text as the start
// state of the page's load animations.
package visibility
