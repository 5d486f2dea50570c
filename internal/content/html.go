package content

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	readability "codeberg.org/readeck/go-readability/v2"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/content/metadata"
	"github.com/gatehouse-dev/gatehouse/internal/content/visibility"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// extractOptions are the knobs of the main-content step, so that the
// quality bench can compare variants; production code uses defaultExtract.
type extractOptions struct {
	focus          trafilatura.ExtractionFocus // trafilatura's precision/recall balance
	images         bool                        // keep <img> in trafilatura's content
	readabilityOff bool                        // trafilatura alone
	trafOff        bool                        // readability alone
	noMerge        bool                        // pick one extraction instead of merging
	keepTitleH1    bool                        // keep a leading heading that repeats the title
	directOff      bool                        // never use the direct rendering of the main container
	fallback       bool                        // go-trafilatura's own fallback (readability, dom-distiller) on
	keepComments   bool                        // comment sections are content
	byline         bool                        // put the byline and date of the article header in the markdown
	allCaptions    bool                        // keep every figure caption, not only sentences
	noRecords      bool                        // do not look for repeated records (records.go)
}

var defaultExtract = extractOptions{focus: trafilatura.FavorRecall}

// HTMLToMarkdown finds the main content of an HTML page and converts it to
// GitHub-flavoured markdown.
//
// Main content: go-trafilatura (favouring recall, its own fallback off) and
// readeck's go-readability v2 both extract the article; the two answers are
// merged block by block (see mergeExtractions): what both found, in
// trafilatura's order, plus prose paragraphs and images only readability
// found. Because the extractors rebuild the tree, every <pre> and <table> of
// their output is first swapped back for the page's original element with the
// same text, so code keeps its language class and exact bytes and table
// cells keep their <br>. Figure captions are left out.
//
// Small pages, where trafilatura finds under 250 characters of main content
// (its "baseline" rescue, which flattens the page to plain text, is
// discarded): the page's main container (its only <article>, else <main> or
// role="main", else <body>; navigation, site header, footer, sidebars,
// forms, scripts and hidden elements removed) is converted as is when it
// holds at least 90% of what readability found and at most 1.25 times as
// many words plus 12, or when readability found nothing; headings, lists,
// tables, code, quotes and links then come out as written. When nothing
// has words, the whole <body> minus navigation, scripts and forms is
// converted instead. Big pages get less extraction so that time stays
// about linear in their size: readability alone, or the whole <body>
// (limits in the package doc).
//
// Conversion (github.com/JohannesKaufmann/html-to-markdown/v2 with the GFM
// table and strikethrough plugins):
//   - <pre><code class="language-go"> becomes a ```go fence (longer when the
//     code itself holds ```) whose content is the code's text byte for byte:
//     nothing escaped, a line starting with '#' stays code; the language is
//     also read from "lang-x", "highlight-source-x", "brush: x",
//     "sourceCode x" and data-lang / data-language;
//   - links and images are absolute, resolved (RFC 3986) against the page's
//     first <base href> when that is http(s), else against base;
//   - tables become GFM tables; '|' is escaped, also inside code in a cell,
//     and a <br> inside a cell is written as an inline <br> so the row never
//     breaks;
//   - nested lists keep their nesting (two spaces per level for bullets)
//     and stay tight;
//   - a definition list's terms (<dt>) become bold lines above their
//     definitions (GFM has no definition lists).
//
// Pages that are not articles (nonarticle.go, fragment.go, linklist.go):
// when trafilatura's answer is one section of what readability found and
// not a titled article, readability's answer is used; when the answer has
// under half its words in prose, the page is extracted again with
// go-trafilatura's own fallback on and comment sections kept; a page of
// links laid out with tables is converted directly, each table row a list
// item, every link kept. On a page of repeated records (records.go: the
// posts of a thread, the stories of a front page, the cards of a grid) an
// answer holding one or a few of them gives way to one covering most, and
// a <noscript> holding most of the page is read as a client without
// scripts gets it (noscript.go). Extracted trees get back the page's nested blocks
// (content/markdown: nesting.go), and the article's headline leads the markdown when it is
// not the title (header.go). Escaping follows escape.go: only where GFM
// needs it, every entity decoded once.
//
// Title is the page's og:title or <title>, shortened to the extractor's
// metadata title when that is the same minus a " | Site" style suffix
// (see chooseTitle), else the extractor's title, else the first <h1>, with
// white space collapsed and a trailing permalink mark (¶) removed; a
// heading repeating it (or the extractor's title) at the top of Markdown
// is removed. Before extraction, permalink and edit controls next to
// headings and comment sections are removed (see preClean). base may be nil (links
// stay as written). It returns reason.EmptyContent when the page has no
// readable text beyond its title.
func HTMLToMarkdown(htmlText string, base *url.URL) (Document, error) {
	d, pass, pg, err := extract(htmlText, base, defaultExtract)
	if !pass.both || len(htmlText) > nonArticleMaxBytes {
		return d, err
	}
	other := err != nil || nonArticle(d.Markdown) || smallPart(d.Markdown, pass.pageTokens)
	frag := err == nil && pass.recs.fragmentOf(d.Markdown)
	if !other && !frag {
		return d, err
	}
	// Not an article (nonarticle.go), or one record of a page of
	// repeated records (records.go): trafilatura's own fallback and the
	// comment sections may hold the content.
	// The first pass's page serves when the second would prepare the
	// same tree (a page without comment sections): only the extractors
	// run again.
	var alt Document
	var aerr error
	if pg != nil && pg.reusableFor(nonArticleExtract) {
		alt, aerr = extractSafelyFrom(pg, nonArticleExtract)
	} else {
		alt, aerr = extractSafely(htmlText, base, nonArticleExtract)
	}
	if aerr != nil {
		return d, err
	}
	if !other && pass.recs.cover(alt.Markdown) <= pass.recs.cover(d.Markdown) {
		return d, err // (the records answer: only when it covers more of them)
	}
	return alt, nil
}

// htmlToMarkdown is one extraction pass with the given options.
func htmlToMarkdown(htmlText string, base *url.URL, opt extractOptions) (Document, error) {
	d, _, _, err := extract(htmlText, base, opt)
	return d, err
}

// extractSafely is extract with a recover: go-trafilatura's fallback
// builds trees that html-to-markdown can fail on (a text node its parent
// does not list); the first pass's answer then stands.
func extractSafely(htmlText string, base *url.URL, opt extractOptions) (d Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = Document{}, reason.New(reason.EmptyContent, "", "the page could not be converted")
		}
	}()
	d, _, _, err = extract(htmlText, base, opt)
	return d, err
}

// extractSafelyFrom is extractSafely on a page already prepared
// (page.reusableFor opt).
func extractSafelyFrom(p *page, opt extractOptions) (d Document, err error) {
	defer func() {
		if r := recover(); r != nil {
			d, err = Document{}, reason.New(reason.EmptyContent, "", "the page could not be converted")
		}
	}()
	d, _, err = p.extract(opt)
	return d, err
}

// passInfo is what HTMLToMarkdown learns from a pass besides its answer.
type passInfo struct {
	both       bool // both extractors ran (the page was small enough, see size.go)
	pageTokens int  // tokens of the page's main container outside chrome (when both)
	// recs is the page's dominant group of repeated records (records.go),
	// or nil.
	recs *records
}

// extract runs one extraction pass: preparePage, then the extractors
// (page.extract).
func extract(htmlText string, base *url.URL, opt extractOptions) (_ Document, pass passInfo, pg *page, _ error) {
	pg, err := preparePage(htmlText, base, opt)
	if err != nil {
		return Document{Kind: KindHTML}, pass, nil, err
	}
	d, pass, err := pg.extract(opt)
	return d, pass, pg, err
}

// page is an HTML page parsed and prepared for the extractors: the steps
// of an extraction pass before them, which cost about a third of a pass
// (parsing, the hidden-text cascade, metadata, links, pre-cleaning, the
// originals and records). HTMLToMarkdown's second pass reuses the page of
// the first when it would prepare the same tree (reusableFor), and with it
// readability's answer, which depends on nothing else.
type page struct {
	doc       *html.Node
	base      *url.URL // the document's base (<base href>, else the caller's)
	facts     *metadata.Pending
	originals *markdown.Originals
	recs      *records // the dominant group of repeated records, or nil
	strat     strategy

	// The options the page was prepared with that change the tree.
	keepComments, allCaptions, noRecords bool
	// foundComments: preClean found comment sections (dropped or not),
	// so a pass with another keepComments prepares another tree.
	foundComments bool
	// changed: a step after the extractors changed doc (wholeBody).
	changed bool

	// readability's answer on doc, once it ran (readabilityDone): its
	// markdown and title.
	readabilityDone                 bool
	readabilityMD, readabilityTitle string
}

// preparedPages and readabilityRuns count preparePage's pages and
// readability's runs (the tests check what the second pass reuses).
var preparedPages, readabilityRuns atomic.Int64

// preparePage parses htmlText and runs the steps of an extraction pass
// before the extractors, with the options that change the tree
// (keepComments, allCaptions, noRecords). It returns parseError's error
// when the page cannot be parsed.
func preparePage(htmlText string, base *url.URL, opt extractOptions) (*page, error) {
	doc, err := html.Parse(strings.NewReader(htmlText))
	if isDepthError(err) {
		// Nested deeper than the parser accepts: the page with its
		// nesting cut (payload.go) keeps its text.
		doc, err = html.Parse(strings.NewReader(flattenDeep(htmlText)))
		if err == nil && !hasWords(dom.TextContent(doc)) {
			err = fmt.Errorf("open stack of elements exceeds %d nodes, and no text is left above that depth", maxHTMLDepth)
		}
	}
	if err != nil {
		return nil, parseError(err)
	}
	preparedPages.Add(1)
	openNoscriptView(doc)      // noscript.go: the page as a client without scripts gets it
	visibility.DropHidden(doc) // hidden.go: text a browser would not render never reaches the agent
	p := &page{doc: doc, keepComments: opt.keepComments, allCaptions: opt.allCaptions, noRecords: opt.noRecords}
	p.base = dom.DocumentBase(doc, base)
	p.facts = metadata.Read(doc, p.base) // meta.go: before the extractors change the tree
	markdown.AbsolutizeLinks(doc, p.base)
	p.foundComments = preClean(doc, opt.keepComments)
	if opt.allCaptions {
		markdown.CaptionsToParagraphs(doc, false)
	}
	markdown.BreaksToParagraphs(doc) // markdown/breaks.go: "text<br><br>text" in a div becomes paragraphs
	markdown.Polish(doc)
	inlineImages := markdown.MarkInlineImages(doc) // markdown/inlineimg.go
	p.originals = markdown.CollectOriginals(doc)
	p.originals.Images = inlineImages
	if !opt.noRecords {
		p.recs = findRecords(doc)
	}
	// Big pages get less extraction, so that time stays about linear in
	// the page's size (see the package doc and size.go).
	p.strat = measurePage(doc).strategy()
	return p, nil
}

// reusableFor reports whether a pass with opt would prepare the same tree
// as p: the options that change the tree are the same (keepComments only
// matters on a page with comment sections), and nothing after the
// extractors changed the tree.
func (p *page) reusableFor(opt extractOptions) bool {
	return !p.changed && p.allCaptions == opt.allCaptions && p.noRecords == opt.noRecords &&
		(p.keepComments == opt.keepComments || !p.foundComments)
}

// extract runs the extractors on the prepared page and builds the answer.
func (p *page) extract(opt extractOptions) (_ Document, pass passInfo, _ error) {
	doc, base, facts, originals := p.doc, p.base, p.facts, p.originals
	pass.recs = p.recs
	strat := p.strat
	pass.both = strat == strategyFull && !opt.trafOff && !opt.readabilityOff
	if pass.both {
		if c := mainContainer(doc); c != nil {
			pass.pageTokens = containerTokens(c)
		}
	}
	switch strat {
	case strategySingle:
		opt.trafOff = true
	case strategyWhole:
		opt.trafOff, opt.readabilityOff = true, true
	}

	var title, primary, secondary string
	// small: trafilatura ran and found under 250 characters of main
	// content, or none.
	small := false
	if !opt.trafOff {
		res, err := trafilatura.ExtractDocument(doc, trafilatura.Options{
			OriginalURL:     base,
			Focus:           opt.focus,
			ExcludeComments: !opt.keepComments,
			IncludeImages:   opt.images,
			IncludeLinks:    true,
			HtmlDateMode:    trafilatura.Disabled,
			EnableFallback:  opt.fallback,
		})
		small = true
		if err == nil && res != nil && res.ContentNode != nil {
			title = res.Metadata.Title
			// Its baseline rescue flattens the page to plain text
			// (direct.go): better no answer than that one.
			if !trafilaturaRescued(res, doc) {
				primary = nodeToMarkdown(res.ContentNode, base, originals)
				small = false
			}
		}
	}
	if !opt.readabilityOff {
		if !p.readabilityDone {
			p.readabilityMD, p.readabilityTitle = p.readability()
			p.readabilityDone = true
		}
		if title == "" {
			title = p.readabilityTitle
		}
		secondary = p.readabilityMD
	}
	var md string
	var memo splitMemo // isFragment and the merge split the same two answers
	switch {
	case opt.noMerge:
		md = primary
		if len(strings.TrimSpace(md)) < 250 && len(secondary) > len(md) {
			md = secondary
		}
	case isFragmentWith(&memo, primary, secondary, chooseTitle(doc, title)):
		// A section of a multi-section page (fragment.go).
		md = secondary
	case pass.recs.fragmentOf(primary) && pass.recs.cover(secondary) >= max(recordMinCover, 2*pass.recs.cover(primary)):
		// One record of a page of repeated records (records.go): one
		// post of a thread, one story of a front page.
		md = secondary
	default:
		md = mergeWithinWith(&memo, primary, secondary, func() map[uint64]struct{} {
			c := mainContainer(doc)
			if c == nil || c.Data == "body" {
				return nil // the whole page: no help in choosing
			}
			return containerShingles(c)
		})
		if pass.recs != nil && pass.recs.cover(md) == 0 && pass.recs.cover(primary) >= recordMinCover {
			// The merge kept none of the page's records, which
			// trafilatura's answer holds (a product grid).
			md = primary
		}
		if pass.recs.sideSection(md, primary, secondary) {
			// A side section of a page of records (records.go).
			md = secondary
		}
	}
	metaTitle := dom.CollapseSpace(strings.TrimRight(dom.CollapseSpace(markdown.UnmarkText(title)), titleMarks))
	title = chooseTitle(doc, title)
	dropTitle := func(md string) string {
		if opt.keepTitleH1 {
			return md
		}
		// (The heading may repeat the extractor's title rather than
		// the page's.)
		return dropLeadingTitle(dropLeadingTitle(moveLeadingBadges(md), title), metaTitle)
	}
	md = dropTitle(md)
	// A small page (trafilatura found under 250 characters of main
	// content, or none): when its main container holds what readability
	// found and not much more, convert the container as is (direct.go).
	if small && !opt.directOff {
		if c := mainContainer(doc); c != nil {
			// (The container's count includes a title heading the
			// renderings are compared without.)
			eTok := countTokens(visibleText(md)) + countTokens(title)
			if directFits(eTok, containerTokens(c)) {
				if direct := dropTitle(directMarkdown(c, base)); preferDirect(md, direct) {
					md = direct
				}
			}
		}
	}
	if !hasWords(md) {
		// Both extractors gave up (a tiny page, a bare table or code
		// listing) or were skipped (a huge page): convert the whole body
		// rather than return nothing.
		p.changed = true // (wholeBody changes the tree)
		if body := wholeBody(doc); body != nil {
			if whole, err := markdown.Convert(body, base); err == nil {
				md = dropTitle(whole)
			}
		}
	}
	if list, ok := linkPageMarkdown(doc, base); ok {
		// A page of links laid out with tables (linklist.go).
		md = dropTitle(list)
	}
	if hasWords(md) {
		md = addArticleHeader(md, title, doc, opt.byline)
	}
	md = markdown.Tidy(md)
	// (Only short answers can be the title: collapsing the spaces of a
	// 10 MB answer to find out costs a full copy.)
	if len(md) <= 2*len(title)+1024 && normalizeForCompare(strings.Trim(md, "# \n")) == normalizeForCompare(title) {
		md = "" // nothing but the title (trafilatura's last resort reads <title>)
	}
	if !hasWords(md) && !strings.Contains(md, "```") {
		return Document{Kind: KindHTML, Title: title, Facts: facts.Done("")}, pass, reason.New(reason.EmptyContent, "", "no readable main content was found on the page; try the browser tools if it needs JavaScript")
	}
	return Document{Title: title, Markdown: md, Kind: KindHTML, Facts: facts.Done(md)}, pass, nil
}

// readability runs readeck's go-readability on the page (it works on a
// copy) and returns its answer as markdown and its title ("", "" when it
// finds no article).
func (p *page) readability() (md, title string) {
	readabilityRuns.Add(1)
	rp := readability.NewParser()
	rp.KeepClasses = true // code blocks keep their language class
	art, err := rp.ParseDocument(p.doc, p.base)
	if err != nil || art.Node == nil {
		return "", ""
	}
	// Captions are not article text (and trafilatura leaves them out);
	// the images themselves are merged back in.
	markdown.FiguresToImages(art.Node)
	return nodeToMarkdown(art.Node, p.base, p.originals), art.Title()
}

// nodeToMarkdown converts an extractor's content node: original <pre> and
// <table> elements are restored first, code languages normalised. A
// conversion failure gives "".
func nodeToMarkdown(node *html.Node, base *url.URL, o *markdown.Originals) string {
	markdown.RestoreOriginals(node, o)
	markdown.Prepare(node)
	md, err := markdown.Convert(node, base)
	if err != nil {
		return ""
	}
	return md
}

// wholeBody returns the page's <body> without scripts, navigation, forms
// and page chrome, or nil. It modifies doc (called last).
func wholeBody(doc *html.Node) *html.Node {
	var body *html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if body != nil {
			return false
		}
		if dom.IsElem(n, "body") {
			body = n
			return false
		}
		return true
	})

	if body == nil {
		return nil
	}
	markdown.RemoveElements(body, "script", "style", "noscript", "template", "nav", "footer", "aside", "form", "iframe", "svg", "button", "select")
	markdown.Prepare(body)
	return body
}

// pageTitle returns the text of <title>, else of the first <h1>.
func pageTitle(doc *html.Node) string {
	var title, h1 string
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Title:
			if title == "" {
				title = dom.CollapseSpace(dom.TextContent(n))
			}
			return false
		case atom.Svg, atom.Math:
			return false
		case atom.H1:
			if h1 == "" {
				h1 = dom.CollapseSpace(dom.TextContent(n))
			}
			return false
		}
		return true
	})

	if title != "" {
		return title
	}
	return h1
}

// dropLeadingTitle removes a first heading of the markdown whose text equals
// the title: the title travels in Document.Title.
func dropLeadingTitle(md, title string) string {
	if title == "" {
		return md
	}
	rest := strings.TrimLeft(md, "\n")
	line, after, _ := strings.Cut(rest, "\n")
	if !strings.HasPrefix(line, "#") {
		return md
	}
	h := strings.TrimLeft(line, "#")
	if !strings.HasPrefix(h, " ") {
		return md
	}
	if normalizeForCompare(h) == normalizeForCompare(title) {
		return after
	}
	return md
}

// moveLeadingBadges moves a first block made only of images (badges: linked
// images, no words) that comes right before the first heading to after
// that heading, so that the heading leads and a heading repeating the title
// can be dropped.
func moveLeadingBadges(md string) string {
	rest := strings.TrimLeft(md, "\n")
	first, after, ok := strings.Cut(rest, "\n\n")
	if !ok || !strings.Contains(first, "![") || hasWords(first) || strings.HasPrefix(first, "#") {
		return md
	}
	after = strings.TrimLeft(after, "\n")
	heading, tail, _ := strings.Cut(after, "\n")
	if h := strings.TrimLeft(heading, "#"); len(h) == len(heading) || !strings.HasPrefix(h, " ") {
		return md
	}
	return heading + "\n\n" + first + "\n\n" + strings.TrimLeft(tail, "\n")
}

func normalizeForCompare(s string) string {
	s = strings.ReplaceAll(s, "\\", "")
	return strings.ToLower(dom.CollapseSpace(s))
}

// hasWords reports whether md has at least one scorer-style token outside
// image syntax and link destinations (what tokenize(visibleText(md)) would
// find), without building the token list.
func hasWords(md string) bool {
	return strings.IndexFunc(visibleText(md), isTokenRune) >= 0
}

// permalinkClasses are classes of the permalink and edit controls that
// documentation generators, GitHub and MediaWiki put in or next to
// headings ("¶", "#", "[edit]"). The extractors drop a heading wrapped
// with one of them, or keep the control as a stray "[" line.
var permalinkClasses = []string{"anchor", "headerlink", "heading-anchor", "header-anchor", "anchorjs-link", "mw-editsection"}

// commentClasses are id and class values of a page's comment section
// (WordPress, Disqus and similar): comments are not the page's main content,
// and a long thread otherwise outweighs a short article.
var commentClasses = []string{"comments", "comment-list", "commentlist", "comments-area", "comment-section", "disqus_thread"}

// preClean prepares the parsed page for the extractors: it removes
// permalink and edit controls (see permalinkClasses), unwraps a heading
// from a wrapper <div> with "heading" in its class that only held it and
// such a control (GitHub's "markdown-heading", MediaWiki's "mw-heading"),
// removes comment sections (see commentClasses) unless keepComments or
// they are the page's content (commentsAreContent), and
// removes overlays: dialogs and cookie-consent banners (see isOverlay).
// A form that wraps the page's content becomes a <div> first
// (unwrapContentForms). It reports whether it found comment sections
// (when not keepComments; removed or not): without them keepComments
// changes nothing.
func preClean(doc *html.Node, keepComments bool) (foundComments bool) {
	unwrapContentForms(doc) // records.go
	var drop, unwrap, comments []*html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		if (n.Data == "a" || n.Data == "span") && dom.HasAnyClass(n, permalinkClasses) {
			drop = append(drop, n)
			return false
		}
		if !keepComments && n.Data != "body" && n.Data != "html" && n.Data != "main" && n.Data != "article" && (dom.HasAnyClass(n, commentClasses) || idIn(n, commentClasses)) {
			comments = append(comments, n)
			return false
		}
		if n.Data != "body" && n.Data != "html" && n.Data != "main" && n.Data != "article" && isOverlay(n) {
			drop = append(drop, n)
			return false
		}
		if v, _ := dom.Attr(n, "class"); n.Data == "div" && strings.Contains(v, "heading") {
			unwrap = append(unwrap, n)
		}
		return true
	})

	if len(comments) > 0 && !commentsAreContent(doc, comments) {
		drop = append(drop, comments...)
	}
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
	for _, n := range unwrap {
		var h *html.Node
		only := true
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			switch {
			case c.Type == html.TextNode && strings.TrimSpace(c.Data) == "":
			case c.Type == html.ElementNode && dom.IsHeading(c.DataAtom) && h == nil:
				h = c
			case c.Type == html.CommentNode:
			default:
				only = false
			}
		}
		if h != nil && only && n.Parent != nil {
			n.RemoveChild(h)
			n.Parent.InsertBefore(h, n)
			n.Parent.RemoveChild(n)
		}
	}
	return len(comments) > 0
}

// commentMinRest: a page whose main container holds fewer words than this
// outside its comment sections has no content besides them (a forum
// thread whose posts are marked up as comments).
const commentMinRest = 50

// commentsAreContent reports whether the comment sections are the page's
// content: the main container (mainContainer) has under commentMinRest
// words outside them, and they have more.
func commentsAreContent(doc *html.Node, comments []*html.Node) bool {
	c := mainContainer(doc)
	if c == nil {
		return false
	}
	all := containerTokens(c)
	in := 0
	for _, n := range comments {
		if n == c || hasAncestorNode(n, c) {
			in += containerTokens(n)
		}
	}
	return in >= commentMinRest && all-in < commentMinRest
}

// hasAncestorNode reports whether a is an ancestor of n.
func hasAncestorNode(n, a *html.Node) bool {
	for p := n.Parent; p != nil; p = p.Parent {
		if p == a {
			return true
		}
	}
	return false
}

// isOverlay reports whether n is an overlay laid over the page rather than
// its content: a dialog (role="dialog" or "alertdialog", aria-modal="true")
// that holds no <h1>, <main> or <article>, or a cookie-consent banner (an
// aria-label, id or class naming a cookie banner or consent box:
// OneTrust, Cookiebot, "cookie-consent", "cookie-notice", …). Consent
// banners are often the longest text of a forum or shop page, so the
// extractors take them for its content.
func isOverlay(n *html.Node) bool {
	role, _ := dom.Attr(n, "role")
	modal, _ := dom.Attr(n, "aria-modal")
	if r := strings.ToLower(strings.TrimSpace(role)); r == "dialog" || r == "alertdialog" || strings.EqualFold(strings.TrimSpace(modal), "true") {
		holds := false
		dom.Walk(n, func(c *html.Node) bool {
			if dom.IsElem(c, "h1") || dom.IsElem(c, "main") || dom.IsElem(c, "article") {
				holds = true
			}
			return !holds
		})

		return !holds
	}
	if v, _ := dom.Attr(n, "aria-label"); strings.Contains(strings.ToLower(v), "cookie") {
		return true
	}
	for _, key := range []string{"id", "class"} {
		v, _ := dom.Attr(n, key)
		for tok := range strings.FieldsSeq(strings.ToLower(v)) {
			switch {
			case strings.HasPrefix(tok, "onetrust"), strings.HasPrefix(tok, "cybotcookiebot"), strings.HasPrefix(tok, "cookiebot"):
				return true
			case strings.Contains(tok, "cookie") && (strings.Contains(tok, "banner") || strings.Contains(tok, "consent") ||
				strings.Contains(tok, "notice") || strings.Contains(tok, "popup") || strings.Contains(tok, "dialog") || strings.Contains(tok, "bar")):
				return true
			case strings.HasPrefix(tok, "consent-") || strings.HasSuffix(tok, "-consent") || strings.Contains(tok, "gdpr"):
				return true
			}
		}
	}
	return false
}

// idIn reports whether n's id is in names.
func idIn(n *html.Node, names []string) bool {
	v, ok := dom.Attr(n, "id")
	return ok && slices.Contains(names, strings.TrimSpace(v))
}

// titleMarks are permalink marks that heading-derived titles end with.
const titleMarks = "¶#§🔗 \t\n"

// chooseTitle picks the page title from the extractor's metadata title
// (extracted, possibly from the first <h1>) and the page's og:title or
// <title>: the page's own title wins (also over an extracted title that
// contains it), except that a " | Site", " - Site", " — Site" or " · Site"
// suffix is dropped when the rest equals the extracted title; with no page
// title the extracted one, else the first <h1>. Permalink marks (¶, #, §) at the end are removed and white space
// collapsed.
func chooseTitle(doc *html.Node, extracted string) string {
	clean := func(s string) string {
		s = markdown.UnmarkText(s)
		return dom.CollapseSpace(strings.TrimRight(dom.CollapseSpace(s), titleMarks))
	}
	extracted = clean(extracted)
	og, page := "", ""
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Body:
			return false
		case atom.Meta:
			if p, _ := dom.Attr(n, "property"); og == "" && strings.EqualFold(p, "og:title") {
				og, _ = dom.Attr(n, "content")
			}
		case atom.Title:
			if page == "" {
				page = dom.TextContent(n)
			}
			return false
		}
		return true
	})

	for _, t := range []string{clean(og), clean(page)} {
		if t == "" {
			continue
		}
		if extracted == "" || normalizeForCompare(t) == normalizeForCompare(extracted) {
			return t
		}
		for _, sep := range []string{" | ", " - ", " — ", " – ", " · ", " :: "} {
			if i := strings.LastIndex(t, sep); i > 0 && normalizeForCompare(t[:i]) == normalizeForCompare(extracted) {
				return extracted
			}
		}
		// The page's title, also when the extracted one (the <h1>)
		// merely contains it (title "App", <h1> "Rendered App"): the
		// <h1> then stays in the markdown (addArticleHeader).
		return t
	}
	if extracted != "" {
		return extracted
	}
	return clean(pageTitle(doc))
}
