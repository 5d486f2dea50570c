// Package metadata reads what a page says about itself, apart from its
// main content, for internal/content: <meta>, Open Graph, canonical link,
// language and schema.org JSON-LD (Metadata), the page's links, main-content
// links first (Link, MaxLinks), and the signals of an application shell
// that needs its scripts (Shell). Read walks the parsed page before the
// extractors change it; Pending.Done orders the links once the main
// content is known.
package metadata
