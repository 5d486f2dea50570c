// Package feed reads RSS (0.9x, 2.0), RDF (RSS 0.90, 1.0) and Atom (RFC
// 4287) feeds as markdown for internal/content: the channel's description,
// then per item (at most 100) a heading linking the item's page, its date
// and authors, and its summary or content, HTML in it converted like a
// page's (hidden text dropped, scripts and forms removed, headings demoted
// under the item's, links absolute). The reader is lenient: it works
// token by token on XML that need not be well-formed.
package feed

import (
	"encoding/xml"
	"fmt"
	"html"
	"net/url"
	"strings"
	"unicode/utf8"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse-dev/gatehouse/internal/content/charset"
	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/content/markdown"
	"github.com/gatehouse-dev/gatehouse/internal/content/visibility"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Limits of the feed reader.
const (
	// maxFeedItems is how many items a feed Document lists; the total is
	// noted when the feed has more.
	maxFeedItems = 100
	// maxFieldBytes caps the bytes kept of one element's content (an
	// item's description, title, …); the rest is dropped.
	maxFieldBytes = 1 << 20
	// maxFeedDepth is the element nesting the feed reader tracks; deeper
	// elements only count towards their closing tags.
	maxFeedDepth = 128
)

// Format is a syndication format.
type Format int

const (
	FormatNone Format = iota // not a feed
	formatRSS                // RSS 0.9x / 2.0: <rss><channel><item>
	formatRDF                // RSS 0.90 / 1.0: <rdf:RDF><channel/><item>
	formatAtom               // Atom (RFC 4287): <feed><entry>
)

// FormatOf picks the format from the root element, else from the
// declared media type (application/rss+xml, application/atom+xml); it
// returns FormatNone for anything else.
func FormatOf(root xml.Name, mediaType string) Format {
	switch strings.ToLower(root.Local) {
	case "rss":
		return formatRSS
	case "rdf":
		return formatRDF
	case "feed":
		return formatAtom
	}
	switch mediaType {
	case "application/rss+xml", "application/rdf+xml":
		return formatRSS
	case "application/atom+xml":
		return formatAtom
	}
	return FormatNone
}

// markupType says how an element's content is read.
type markupType int

const (
	markupHTML  markupType = iota // text that is HTML (RSS description, Atom type="html")
	markupText                    // plain text (Atom's default)
	markupXHTML                   // XHTML child elements (Atom type="xhtml")
	markupOther                   // base64 or another media type: skipped
)

// atomMarkup maps an Atom type attribute (RFC 4287 §3.1.1, §4.1.3.1).
func atomMarkup(v string) markupType {
	switch t := strings.ToLower(strings.TrimSpace(v)); {
	case t == "" || t == "text" || strings.HasPrefix(t, "text/plain"):
		return markupText
	case t == "html" || strings.HasPrefix(t, "text/html"):
		return markupHTML
	case t == "xhtml" || strings.HasPrefix(t, "application/xhtml+xml"):
		return markupXHTML
	case strings.HasPrefix(t, "text/"):
		return markupText
	}
	return markupOther
}

// markup is an element's content with the way to read it.
type markup struct {
	s   string
	typ markupType
}

type feedItem struct {
	base      *url.URL
	title     string
	link      string // <link> text, or an Atom link rel="alternate"
	permalink string // guid / id / rdf:about that is an http(s) URL
	date      string // pubDate, published, issued
	updated   string // dc:date, updated, modified
	authors   []string
	summary   markup // description, summary
	content   markup // content:encoded, content
}

type feed struct {
	format      Format
	title       string
	description markup
	found       bool // a channel or a feed-level title was seen
	items       []feedItem
	total       int
}

// Convert reads an RSS, RDF or Atom feed from its decoded text (root is
// the document's root element, as charset.XMLRoot reads it; format is
// FormatOf's answer, never FormatNone) and returns the feed's title and
// the feed as markdown (renderFeed). ok is false when the body
// holds neither items nor channel information (RDF data that is not RSS, a
// feed type declared on other XML): the caller shows it as XML. A feed
// whose root is <rss> or <feed> but whose structure could not be read
// falls back to the XML's text content, without a title; when it has no
// text either, err is an EmptyContent refusal (internal/reason).
func Convert(text string, base *url.URL, format Format, root xml.Name) (title, md string, ok bool, err error) {
	f := parseFeed(text, base, format)
	if len(f.items) == 0 && !f.found {
		r := strings.ToLower(root.Local)
		if r != "rss" && r != "feed" {
			return "", "", false, nil
		}
		plain := xmlTextContent(text)
		if plain == "" {
			return "", "", true, reason.New(reason.EmptyContent, "", "the feed has no readable text; download it and inspect it locally")
		}
		return "", plain, true, nil
	}
	return f.title, renderFeed(f, base), true, nil
}

// frame is an open element.
type frame struct {
	name xml.Name
	base *url.URL
}

// capture collects the content of one element: raw is its text with
// nested tags re-serialised (for HTML carried as text, CDATA included),
// esc the same with the text HTML-escaped (for XHTML content), plain the
// text alone, name the text of a <name> child (Atom persons).
type capture struct {
	depth                int
	base                 *url.URL
	raw, esc, plain, sub strings.Builder
	nameDepth            int // depth of an open <name> child, or -1
	done                 func(*capture)
}

// add appends s to b, up to maxFieldBytes in all (cut at a rune start).
func (c *capture) add(b *strings.Builder, s string) {
	room := maxFieldBytes - b.Len()
	if room <= 0 {
		return
	}
	if len(s) > room {
		for room > 0 && !utf8.RuneStart(s[room]) {
			room--
		}
		s = s[:room]
	}
	b.WriteString(s)
}

func (c *capture) text(s string) {
	c.add(&c.raw, s)
	c.add(&c.esc, html.EscapeString(s))
	c.add(&c.plain, s)
	if c.nameDepth >= 0 {
		c.add(&c.sub, s)
	}
}

func (c *capture) open(t xml.StartElement, depth int) {
	var b strings.Builder
	b.WriteString("<" + t.Name.Local)
	for _, a := range t.Attr {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") || !validAttrName(a.Name.Local) {
			continue
		}
		b.WriteString(" " + a.Name.Local + `="` + html.EscapeString(a.Value) + `"`)
	}
	b.WriteString(">")
	c.add(&c.raw, b.String())
	c.add(&c.esc, b.String())
	if depth == c.depth+1 && t.Name.Local == "name" && c.nameDepth < 0 {
		c.nameDepth = depth
	}
}

func (c *capture) close(name xml.Name, depth int) {
	if depth == c.nameDepth {
		c.nameDepth = -1
	}
	if dom.VoidElements[strings.ToLower(name.Local)] {
		return // <br/> comes as a start and an end tag; "</br>" would be a second <br>
	}
	c.add(&c.raw, "</"+name.Local+">")
	c.add(&c.esc, "</"+name.Local+">")
}

// validAttrName reports whether s can be written as an HTML attribute name.
func validAttrName(s string) bool {
	return s != "" && !strings.ContainsAny(s, " \t\r\n\f\"'<>/=")
}

// xmlAttr returns the value of the attribute prefix:local ("" prefix: an
// unprefixed attribute), or "".
func xmlAttr(attrs []xml.Attr, prefix, local string) string {
	for _, a := range attrs {
		if a.Name.Space == prefix && a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// feedParser reads a feed token by token (see scanXML), matching end tags
// leniently: an end tag closes the innermost open element of its name and
// every element opened after it; an end tag with no open element is
// ignored. An item still open at the end of the text is kept.
type feedParser struct {
	f         *feed
	itemName  string
	base      *url.URL
	stack     []frame
	open      map[xml.Name]int // how many elements of each name are on stack
	overflow  int              // open elements deeper than maxFeedDepth
	itemDepth int              // stack index of the open item, or -1
	item      *feedItem        // the open item; nil past maxFeedItems
	capt      *capture
}

// parseFeed reads text as a feed of the given format; links resolve
// against base and xml:base attributes.
func parseFeed(text string, base *url.URL, format Format) *feed {
	p := &feedParser{f: &feed{format: format}, itemName: "item", base: base, itemDepth: -1, open: map[xml.Name]int{}}
	if format == formatAtom {
		p.itemName = "entry"
	}
	charset.ScanDecodedXML(sanitizeXML(text), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			p.start(t)
		case xml.EndElement:
			p.end(t.Name)
		case xml.CharData:
			if p.capt != nil {
				p.capt.text(string(t))
			}
		}
		return true
	})

	for len(p.stack) > 0 {
		p.pop()
	}
	return p.f
}

func (p *feedParser) start(t xml.StartElement) {
	d := len(p.stack)
	if d >= maxFeedDepth {
		p.overflow++
		if p.capt != nil {
			p.capt.open(t, d+p.overflow-1)
		}
		return
	}
	base := p.base
	if d > 0 {
		base = p.stack[d-1].base
	}
	if v := xmlAttr(t.Attr, "xml", "base"); v != "" {
		if u := resolveLink(base, v); u != "" {
			if pu, err := url.Parse(u); err == nil && pu.IsAbs() {
				base = pu
			}
		}
	}
	p.stack = append(p.stack, frame{name: t.Name, base: base})
	p.open[t.Name]++
	if p.capt != nil {
		p.capt.open(t, d)
		return
	}
	local := t.Name.Local
	switch {
	case p.itemDepth < 0 && local == p.itemName:
		p.f.total++
		p.itemDepth = d
		if p.f.total <= maxFeedItems {
			p.item = &feedItem{base: base}
			if about := xmlAttr(t.Attr, "rdf", "about"); isWebURL(about) {
				p.item.permalink = about
			}
		}
	case p.itemDepth >= 0:
		if p.item != nil && d == p.itemDepth+1 {
			p.itemField(t, d, base)
		}
	default:
		if local == "channel" {
			p.f.found = true
		}
		parent := ""
		if d > 0 {
			parent = p.stack[d-1].name.Local
		}
		if parent != "channel" && (p.f.format != formatAtom || d != 1) {
			return
		}
		typ := markupHTML
		if p.f.format == formatAtom {
			typ = atomMarkup(xmlAttr(t.Attr, "", "type"))
		}
		switch local {
		case "title":
			p.capture(d, base, func(c *capture) {
				if p.f.title == "" {
					p.f.title = p.titleText(c, typ)
					p.f.found = p.f.found || p.f.title != ""
				}
			})
		case "description", "subtitle":
			p.capture(d, base, func(c *capture) {
				if p.f.description.s == "" {
					p.f.description = fieldMarkup(c, typ)
				}
			})
		}
	}
}

// itemField starts reading a child of the open item.
func (p *feedParser) itemField(t xml.StartElement, d int, base *url.URL) {
	it := p.item
	atomFeed := p.f.format == formatAtom
	typ := markupHTML
	if atomFeed {
		typ = atomMarkup(xmlAttr(t.Attr, "", "type"))
	}
	switch t.Name.Local {
	case "title":
		p.capture(d, base, func(c *capture) {
			if it.title == "" {
				it.title = p.titleText(c, typ)
			}
		})
	case "link":
		if href := xmlAttr(t.Attr, "", "href"); href != "" {
			// Atom (also atom:link in RSS): the alternate link is the
			// item's page (RFC 4287 §4.2.7.2: no rel means alternate).
			if rel := strings.TrimSpace(xmlAttr(t.Attr, "", "rel")); (rel == "" || rel == "alternate") && it.link == "" {
				it.link = resolveLink(base, href)
			}
			return
		}
		p.capture(d, base, func(c *capture) {
			if it.link == "" {
				it.link = resolveLink(c.base, c.plain.String())
			}
		})
	case "guid", "id":
		if strings.EqualFold(strings.TrimSpace(xmlAttr(t.Attr, "", "isPermaLink")), "false") {
			return
		}
		p.capture(d, base, func(c *capture) {
			if v := strings.TrimSpace(c.plain.String()); it.permalink == "" && isWebURL(v) {
				it.permalink = v
			}
		})
	case "description", "summary":
		p.capture(d, base, func(c *capture) {
			if it.summary.s == "" {
				it.summary = fieldMarkup(c, typ)
			}
		})
	case "encoded", "content":
		if xmlAttr(t.Attr, "", "src") != "" {
			return // Atom out-of-line content
		}
		if t.Name.Local == "content" && !atomFeed {
			return // RSS has no <content>; content:encoded is "encoded"
		}
		p.capture(d, base, func(c *capture) {
			if it.content.s == "" {
				it.content = fieldMarkup(c, typ)
			}
		})
	case "pubDate", "published", "issued":
		p.capture(d, base, func(c *capture) {
			if it.date == "" {
				it.date = dom.CollapseSpace(c.plain.String())
			}
		})
	case "date", "updated", "modified":
		p.capture(d, base, func(c *capture) {
			if it.updated == "" {
				it.updated = dom.CollapseSpace(c.plain.String())
			}
		})
	case "author", "creator", "contributor":
		if t.Name.Local == "contributor" && len(it.authors) > 0 {
			return
		}
		p.capture(d, base, func(c *capture) {
			name := c.sub.String()
			if strings.TrimSpace(name) == "" {
				name = c.plain.String()
			}
			if name = dom.CollapseSpace(name); name != "" && !containsString(it.authors, name) {
				it.authors = append(it.authors, name)
			}
		})
	}
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func (p *feedParser) capture(d int, base *url.URL, done func(*capture)) {
	p.capt = &capture{depth: d, base: base, nameDepth: -1, done: done}
}

// titleText reads a title: Atom's type="html" is HTML (its text is
// taken); RSS titles are plain text, but an entity escaped twice
// ("&amp;amp;", common in RSS) is unescaped once.
func (p *feedParser) titleText(c *capture, typ markupType) string {
	switch {
	case p.f.format == formatAtom && typ == markupHTML:
		return htmlText(c.raw.String())
	case p.f.format != formatAtom && strings.Contains(c.plain.String(), "&"):
		return dom.CollapseSpace(html.UnescapeString(c.plain.String()))
	}
	return dom.CollapseSpace(c.plain.String())
}

// fieldMarkup returns what c holds, read as typ.
func fieldMarkup(c *capture, typ markupType) markup {
	switch typ {
	case markupHTML:
		return markup{s: c.raw.String(), typ: typ}
	case markupXHTML:
		return markup{s: c.esc.String(), typ: typ}
	case markupText:
		return markup{s: c.plain.String(), typ: typ}
	}
	return markup{}
}

func (p *feedParser) end(name xml.Name) {
	if p.overflow > 0 {
		p.overflow--
		if p.capt != nil {
			p.capt.close(name, len(p.stack)+p.overflow)
		}
		return
	}
	if p.open[name] == 0 {
		return // an end tag nothing opened
	}
	i := len(p.stack) - 1
	for p.stack[i].name != name {
		i--
	}
	for len(p.stack) > i {
		p.pop()
	}
}

// pop closes the innermost open element.
func (p *feedParser) pop() {
	d := len(p.stack) - 1
	fr := p.stack[d]
	p.stack = p.stack[:d]
	if p.open[fr.name]--; p.open[fr.name] == 0 {
		delete(p.open, fr.name)
	}
	if c := p.capt; c != nil {
		if d > c.depth {
			c.close(fr.name, d)
			return
		}
		p.capt = nil
		c.done(c)
		return
	}
	if d == p.itemDepth {
		if p.item != nil {
			p.f.items = append(p.f.items, *p.item)
		}
		p.item, p.itemDepth = nil, -1
	}
}

// sanitizeXML repairs two common faults of hand-made feeds that would
// make encoding/xml drop text: the characters XML 1.0 forbids (C0 controls
// other than tab, newline and carriage return; U+FFFE, U+FFFF) become a
// space, and a '<' that cannot start markup ("x < y", "<3") becomes
// "&lt;". CDATA sections and comments are left alone.
func sanitizeXML(s string) string {
	bad := func(r rune) bool {
		return (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0xFFFE || r == 0xFFFF
	}
	if strings.IndexFunc(s, bad) >= 0 {
		s = strings.Map(func(r rune) rune {
			if bad(r) {
				return ' '
			}
			return r
		}, s)
	}
	var b strings.Builder
	last := 0 // s[:last] is written to b (once b is used)
	for i := 0; i < len(s); {
		j := strings.IndexByte(s[i:], '<')
		if j < 0 {
			break
		}
		i += j
		rest := s[i:]
		switch {
		case strings.HasPrefix(rest, "<![CDATA["):
			i = skipPast(s, i, "]]>")
			continue
		case strings.HasPrefix(rest, "<!--"):
			i = skipPast(s, i, "-->")
			continue
		}
		if len(rest) > 1 && startsMarkup(rest[1]) {
			i++
			continue
		}
		if b.Len() == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[last:i])
		b.WriteString("&lt;")
		i++
		last = i
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// skipPast returns the index just past the first end at or after i+1 in
// s, or len(s).
func skipPast(s string, i int, end string) int {
	if k := strings.Index(s[i+1:], end); k >= 0 {
		return i + 1 + k + len(end)
	}
	return len(s)
}

// startsMarkup reports whether c may follow '<' in markup: a name start
// (ASCII letter, '_', ':', any non-ASCII byte), '/', '!' or '?'.
func startsMarkup(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':' || c >= 0x80 || c == '/' || c == '!' || c == '?'
}

// isWebURL reports whether s is an absolute http(s) URL.
func isWebURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// resolveLink resolves a link of the feed against base (RFC 3986 via
// net/url). It returns "" for an empty or unparsable value and for a
// scheme other than http, https or ftp (javascript:, data:, …); with a nil
// base a relative link stays as written.
func resolveLink(base *url.URL, raw string) string {
	v := strings.TrimSpace(raw)
	if v == "" {
		return ""
	}
	ref, err := url.Parse(v)
	if err != nil {
		return ""
	}
	if base != nil {
		ref = base.ResolveReference(ref)
	}
	switch strings.ToLower(ref.Scheme) {
	case "http", "https", "ftp", "":
		return ref.String()
	}
	return ""
}

// xmlTextContent is the text of an XML document that could not be read as
// a feed: every non-blank run of character data, trimmed, one per line.
func xmlTextContent(text string) string {
	var b strings.Builder
	charset.ScanDecodedXML(sanitizeXML(text), func(tok xml.Token) bool {
		if cd, ok := tok.(xml.CharData); ok {
			if s := dom.CollapseSpace(string(cd)); s != "" {
				b.WriteString(s)
				b.WriteByte('\n')
			}
		}
		return true
	})

	return b.String()
}

// renderFeed writes the feed as markdown: its description, a note when
// items were left out, then per item a level-2 heading linking the item's
// page, a line with its date and authors, and its summary (else its
// content) as markdown.
func renderFeed(f *feed, base *url.URL) string {
	var b strings.Builder
	if d := markupToMarkdown(f.description, base); d != "" {
		b.WriteString(d + "\n\n")
	}
	if f.total > len(f.items) {
		fmt.Fprintf(&b, "*The feed has %d items; the first %d are listed.*\n\n", f.total, len(f.items))
	}
	if len(f.items) == 0 {
		b.WriteString("*The feed has no items.*\n")
	}
	for _, it := range f.items {
		link := it.link
		if link == "" {
			link = it.permalink
		}
		title := it.title
		if title == "" {
			title = link
		}
		if title == "" {
			title = "(untitled)"
		}
		b.WriteString("## ")
		if link != "" {
			b.WriteString("[" + escapeMarkdownText(title) + "](" + markdownURL(link) + ")")
		} else {
			b.WriteString(escapeMarkdownText(title))
		}
		b.WriteString("\n\n")
		date := it.date
		if date == "" {
			date = it.updated
		}
		var meta []string
		if date != "" {
			meta = append(meta, date)
		}
		if len(it.authors) > 0 {
			meta = append(meta, strings.Join(it.authors, ", "))
		}
		if len(meta) > 0 {
			b.WriteString(escapeMarkdownText(strings.Join(meta, " · ")) + "\n\n")
		}
		body := markupToMarkdown(it.summary, it.base)
		if body == "" {
			body = markupToMarkdown(it.content, it.base)
		}
		if body != "" {
			b.WriteString(body + "\n\n")
		}
	}
	return markdown.Tidy(b.String())
}

// markupToMarkdown converts an item's description: HTML and XHTML through
// htmlFragmentMarkdown, plain text with its line breaks kept.
func markupToMarkdown(m markup, base *url.URL) string {
	if strings.TrimSpace(m.s) == "" {
		return ""
	}
	switch m.typ {
	case markupHTML, markupXHTML:
		return htmlFragmentMarkdown(m.s, base)
	case markupText:
		return plainTextMarkdown(m.s)
	}
	return ""
}

// htmlFragmentMarkdown converts an HTML fragment (a feed item's
// description) to markdown with the package's converter, without
// main-content extraction: scripts, styles, forms, frames and embedded SVG
// are removed, headings are demoted two levels (an item is a level-2
// heading), links and images are made absolute against base.
func htmlFragmentMarkdown(fragment string, base *url.URL) string {
	ctx := &xhtml.Node{Type: xhtml.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := xhtml.ParseFragment(strings.NewReader(fragment), ctx)
	if err != nil {
		return plainTextMarkdown(fragment)
	}
	for _, n := range nodes {
		ctx.AppendChild(n)
	}
	// Text a browser would not render never reaches the agent, from a
	// feed item as from a page (inline display:none, hidden, …).
	visibility.DropHidden(ctx)
	markdown.RemoveElements(ctx, "script", "style", "noscript", "template", "iframe", "frame", "object", "embed",
		"form", "button", "select", "textarea", "input", "svg", "math", "dialog")
	dom.Walk(ctx, func(n *xhtml.Node) bool {
		if n.Type == xhtml.ElementNode && dom.IsHeading(n.DataAtom) {
			lvl := min(int(n.Data[1]-'0')+2, 6)
			n.Data = fmt.Sprintf("h%d", lvl)
			n.DataAtom = atom.Lookup([]byte(n.Data))
		}
		return true
	})

	markdown.AbsolutizeLinks(ctx, base)
	markdown.Prepare(ctx)
	md, err := markdown.Convert(ctx, base)
	if err != nil {
		return plainTextMarkdown(dom.TextContent(ctx))
	}
	return strings.TrimSpace(md)
}

// htmlText is the text of an HTML fragment, white space collapsed.
func htmlText(fragment string) string {
	ctx := &xhtml.Node{Type: xhtml.ElementNode, Data: "div", DataAtom: atom.Div}
	nodes, err := xhtml.ParseFragment(strings.NewReader(fragment), ctx)
	if err != nil {
		return dom.CollapseSpace(fragment)
	}
	for _, n := range nodes {
		ctx.AppendChild(n)
	}
	return dom.CollapseSpace(dom.TextContent(ctx))
}

// plainTextMarkdown tidies plain text: CRLF becomes LF, trailing blanks go,
// runs of blank lines become one.
func plainTextMarkdown(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	var b strings.Builder
	blank := false
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		line = strings.TrimRight(line, " \t")
		if line == "" {
			blank = true
			continue
		}
		if blank && b.Len() > 0 {
			b.WriteString("\n")
		}
		blank = false
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(strings.TrimLeft(line, " \t"))
	}
	return b.String()
}

// escapeMarkdownText escapes the characters that would turn feed text into
// markdown syntax inside a heading or a link's text: '\\', '[', ']', '*',
// '`', '<', and '_' unless it is intraword (between two letters or digits,
// where GFM never reads it as emphasis). Leaving intraword '_' alone keeps
// identifiers readable and keeps a key such as "ghp_…" or "sk_live_…" whole,
// so the redaction that runs on the returned text still recognises it.
func escapeMarkdownText(s string) string {
	if !strings.ContainsAny(s, "\\[]*_`<") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '_':
			if markdown.WordByteBefore(s, i) && markdown.WordByteAfter(s, i+1) {
				b.WriteByte(c)
				continue
			}
			b.WriteString(`\_`)
		case '\\', '[', ']', '*', '`', '<':
			b.WriteByte('\\')
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// markdownURL makes u safe as a markdown link destination: spaces,
// parentheses and angle brackets are percent-encoded.
func markdownURL(u string) string {
	return strings.NewReplacer(" ", "%20", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E").Replace(u)
}
