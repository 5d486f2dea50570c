package metadata

import (
	"encoding/json"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse-dev/gatehouse/internal/content/dom"
	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// Page facts: what a page says about itself (metadata), the links it
// holds, and whether it looks like an application shell that scripts fill.
// They come from one extra walk over the parsed page (pageFacts), apart from
// the main-content extraction, so the extraction code is untouched.

// MaxLinks caps Facts.Links: the first MaxLinks distinct links are kept,
// main-content links first (Facts.LinksTotal counts them all).
const MaxLinks = 200

// maxLinkText caps one link's anchor text, in characters.
const maxLinkText = 160

// Facts are a Document's page metadata, links and application-shell
// signals. Every field may be empty.
type Facts struct {
	Meta Metadata
	// Links are the page's distinct absolute http(s) link targets (fragment
	// removed; links back to the page itself dropped), main-content links
	// first, each group in document order, at most MaxLinks.
	Links []Link
	// LinksTotal is the number of distinct links before the MaxLinks cap.
	LinksTotal int
	// Pages is a PDF's page count (0 for other kinds).
	Pages int
	// Shell is set for HTML pages that look like an application shell
	// (see Shell).
	Shell Shell
}

// Metadata is what a page's own markup says about it: <meta> tags, Open
// Graph (ogp.me), <link rel=canonical>, <html lang> and schema.org JSON-LD.
type Metadata struct {
	Description string `json:"description,omitempty"`
	Author      string `json:"author,omitempty"` // several authors joined by ", "
	// Published is the publication date: RFC 3339 when the source has a
	// time of day, else YYYY-MM-DD; a value none of the accepted forms
	// parses is left out (see parseDate).
	Published    string `json:"published,omitempty"`
	Language     string `json:"language,omitempty"`      // BCP 47 tag as written ("en-US"), '_' replaced by '-'
	CanonicalURL string `json:"canonical_url,omitempty"` // absolute http(s)
	SiteName     string `json:"site_name,omitempty"`
}

// Link is one link target of a page.
type Link struct {
	URL  string `json:"url"`
	Text string `json:"text"`           // anchor text (else aria-label, title or image alt), white space collapsed, capped at 160 chars
	Main bool   `json:"main,omitempty"` // the link is in the extracted main content
}

// Shell is the structure of an HTML page that scripts build after load.
type Shell struct {
	// Scripts is set when the page has at least one script to run (inline
	// or external; JSON-LD and other data blocks do not count).
	Scripts bool
	// VisibleChars is the visible text of <body> in characters (outside
	// scripts, styles, <noscript>, <template>), white space collapsed.
	VisibleChars int
	// NoscriptAsksJS is set when a <noscript> says JavaScript is needed.
	NoscriptAsksJS bool
	// EmptyMount is set when <body> holds an empty mount point: an element
	// with an id or a custom-element name (with '-') and no text, that is
	// the body's only content apart from scripts, or one of a few.
	EmptyMount bool
}

// shellMaxChars is the visible text under which a page with scripts and an
// empty mount point or a <noscript> asking for JavaScript is an application
// shell: about two sentences, far less than any article or listing.
const shellMaxChars = 280

// AppShell reports whether the page looks like an application shell that
// needs its scripts to show content: it has scripts, little visible text
// (under 280 characters) and either an empty mount point or a <noscript>
// asking for JavaScript.
func (s Shell) AppShell() bool {
	return s.Scripts && s.VisibleChars < shellMaxChars && (s.EmptyMount || s.NoscriptAsksJS)
}

// Pending is a page's Facts read from its tree before extraction,
// waiting for the converted main content to order the links.
type Pending struct {
	f     Facts
	links []Link // every distinct link, document order
}

// Read reads the Facts of a parsed page (doc unchanged; base is the
// document base URL). HTMLToMarkdown calls it before the extractors change
// the tree, and Done once the main content is known.
func Read(doc *html.Node, base *url.URL) *Pending {
	p := &Pending{}
	p.f.Meta = readMetadata(doc, base)
	p.links = readLinks(doc, base)
	p.f.Shell = readShell(doc)
	return p
}

// Done returns the Facts, the links ordered main-content first (those
// whose target is a link target of md) and capped at MaxLinks.
func (p *Pending) Done(md string) Facts {
	f := p.f
	main := markdownTargets(md)
	f.LinksTotal = len(p.links)
	f.Links = make([]Link, 0, min(len(p.links), MaxLinks))
	for _, pass := range []bool{true, false} {
		for _, l := range p.links {
			if l.Main = main[l.URL]; l.Main == pass && len(f.Links) < MaxLinks {
				f.Links = append(f.Links, l)
			}
		}
	}
	return f
}

// PageFacts parses an HTML page and returns its Facts; md is its converted
// main content (whose link targets mark the main-content links).
func PageFacts(htmlText string, base *url.URL, md string) Facts {
	doc, err := html.Parse(strings.NewReader(htmlText))
	if err != nil {
		return Facts{}
	}
	return Read(doc, dom.DocumentBase(doc, base)).Done(md)
}

// readMetadata reads the metadata fields, each from the first source that
// has it, in this order:
//
//   - description: <meta name=description>, og:description,
//     twitter:description, JSON-LD description;
//   - author: <meta name=author>, JSON-LD author, article:author (when not
//     a URL), dc.creator, parsely-author;
//   - published: article:published_time, JSON-LD datePublished,
//     <meta itemprop=datePublished>, citation_publication_date, dc.date
//     (and dc.date.issued, dcterms.created), date, pubdate, publishdate,
//     parsely-pub-date, sailthru.date, then the first <time datetime> with
//     itemprop=datePublished or pubdate;
//   - language: <html lang>, <meta http-equiv=content-language>, og:locale,
//     JSON-LD inLanguage;
//   - canonical URL: <link rel=canonical>, og:url, JSON-LD url;
//   - site name: og:site_name, JSON-LD publisher name, JSON-LD WebSite name,
//     application-name.
func readMetadata(doc *html.Node, base *url.URL) Metadata {
	metas := map[string]string{} // lower-cased name/property/itemprop → first content
	var canonical, lang, httpLang, timeDate string
	var ld []map[string]any
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Html:
			if v, ok := dom.Attr(n, "lang"); ok && lang == "" {
				lang = strings.TrimSpace(v)
			}
		case atom.Meta:
			content, ok := dom.Attr(n, "content")
			content = dom.CollapseSpace(content)
			if !ok || content == "" {
				return true
			}
			for _, k := range []string{"name", "property", "itemprop"} {
				if key, ok := dom.Attr(n, k); ok {
					for _, key := range strings.Fields(strings.ToLower(key)) {
						if _, seen := metas[key]; !seen {
							metas[key] = content
						}
					}
				}
			}
			if he, ok := dom.Attr(n, "http-equiv"); ok && strings.EqualFold(strings.TrimSpace(he), "content-language") && httpLang == "" {
				httpLang, _, _ = strings.Cut(content, ",")
			}
		case atom.Link:
			rel, _ := dom.Attr(n, "rel")
			if canonical == "" && hasToken(rel, "canonical") {
				canonical, _ = dom.Attr(n, "href")
			}
		case atom.Script:
			if t, _ := dom.Attr(n, "type"); strings.EqualFold(strings.TrimSpace(t), "application/ld+json") {
				ld = append(ld, jsonLDItems(dom.RawText(n))...)
			}
			return false
		case atom.Time:
			if timeDate == "" {
				ip, _ := dom.Attr(n, "itemprop")
				_, pub := dom.Attr(n, "pubdate")
				if dt, ok := dom.Attr(n, "datetime"); ok && (pub || strings.EqualFold(strings.TrimSpace(ip), "datePublished")) {
					timeDate = dt
				}
			}
		}
		return true
	})

	article, site, anyItem := pickLD(ld)
	first := func(vals ...string) string {
		for _, v := range vals {
			if v = dom.CollapseSpace(v); v != "" {
				return v
			}
		}
		return ""
	}
	var m Metadata
	m.Description = first(metas["description"], metas["og:description"], metas["twitter:description"], ldString(article, "description"))
	articleAuthor := metas["article:author"]
	if strings.Contains(articleAuthor, "://") {
		articleAuthor = ""
	}
	m.Author = first(metas["author"], ldAuthors(article), articleAuthor, metas["dc.creator"], metas["parsely-author"])
	for _, d := range []string{metas["article:published_time"], ldString(article, "datePublished"), metas["datepublished"],
		metas["citation_publication_date"], metas["dc.date"], metas["dc.date.issued"], metas["dcterms.created"],
		metas["date"], metas["pubdate"], metas["publishdate"], metas["parsely-pub-date"], metas["sailthru.date"], timeDate} {
		if p := parseDate(d); p != "" {
			m.Published = p
			break
		}
	}
	locale := strings.ReplaceAll(metas["og:locale"], "_", "-")
	m.Language = strings.ReplaceAll(first(lang, httpLang, locale, ldString(article, "inLanguage"), ldString(anyItem, "inLanguage")), "_", "-")
	for _, c := range []string{canonical, metas["og:url"], ldString(article, "url")} {
		if u := absHTTP(c, base); u != "" {
			m.CanonicalURL = u
			break
		}
	}
	var publisher string
	if article != nil {
		publisher = ldName(article["publisher"])
	}
	m.SiteName = first(metas["og:site_name"], publisher, ldString(site, "name"), metas["application-name"])
	return m
}

// hasToken reports whether the space-separated list has tok (ASCII case-insensitive).
func hasToken(list, tok string) bool {
	for _, t := range strings.Fields(list) {
		if strings.EqualFold(t, tok) {
			return true
		}
	}
	return false
}

// absHTTP resolves raw against base and returns it when it is http(s), else "".
func absHTTP(raw string, base *url.URL) string {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return ""
	}
	ref, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	if base != nil {
		ref = base.ResolveReference(ref)
	}
	if (ref.Scheme != "http" && ref.Scheme != "https") || ref.Host == "" {
		return ""
	}
	return ref.String()
}

// jsonLDItems decodes one JSON-LD block into its items: a top-level
// object, the elements of a top-level array, and the members of any
// "@graph". Malformed JSON gives none.
func jsonLDItems(text string) []map[string]any {
	var v any
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &v); err != nil {
		return nil
	}
	var out []map[string]any
	var add func(v any, depth int)
	add = func(v any, depth int) {
		if depth > 4 {
			return
		}
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				add(e, depth+1)
			}
		case map[string]any:
			out = append(out, t)
			if g, ok := t["@graph"]; ok {
				add(g, depth+1)
			}
		}
	}
	add(v, 0)
	return out
}

// ldTypes returns the lower-cased @type values of a JSON-LD item.
func ldTypes(it map[string]any) []string {
	var out []string
	switch t := it["@type"].(type) {
	case string:
		out = append(out, strings.ToLower(t))
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, strings.ToLower(s))
			}
		}
	}
	return out
}

// pickLD picks the item describing the page (the first article-like type:
// Article, NewsArticle, BlogPosting, …, else a WebPage, else the first
// item with a datePublished), the WebSite item, and the first item.
func pickLD(items []map[string]any) (article, site, first map[string]any) {
	var page, dated map[string]any
	for _, it := range items {
		if first == nil {
			first = it
		}
		for _, t := range ldTypes(it) {
			switch {
			case strings.HasSuffix(t, "article") || t == "blogposting" || t == "report" || t == "scholarlyarticle" || t == "techarticle" || t == "newsarticle":
				if article == nil {
					article = it
				}
			case t == "website":
				if site == nil {
					site = it
				}
			case strings.HasSuffix(t, "page"):
				if page == nil {
					page = it
				}
			}
		}
		if _, ok := it["datePublished"]; ok && dated == nil {
			dated = it
		}
	}
	switch {
	case article != nil:
	case dated != nil:
		article = dated
	default:
		article = page
	}
	return article, site, first
}

// ldString returns a string-valued property (the first of an array), "" when absent.
func ldString(it map[string]any, key string) string {
	if it == nil {
		return ""
	}
	switch v := it[key].(type) {
	case string:
		return v
	case []any:
		if len(v) > 0 {
			if s, ok := v[0].(string); ok {
				return s
			}
		}
	case map[string]any: // {"@value": …} or a URL object
		if s, ok := v["@value"].(string); ok {
			return s
		}
		if s, ok := v["@id"].(string); ok && key == "url" {
			return s
		}
	}
	return ""
}

// ldName returns the name of a Person/Organization value: a string, an
// object's "name", or the names of an array joined by ", ".
func ldName(v any) string {
	switch t := v.(type) {
	case string:
		if strings.Contains(t, "://") {
			return ""
		}
		return t
	case map[string]any:
		if s, ok := t["name"].(string); ok {
			return s
		}
	case []any:
		var names []string
		for _, e := range t {
			if n := dom.CollapseSpace(ldName(e)); n != "" {
				names = append(names, n)
			}
		}
		return strings.Join(names, ", ")
	}
	return ""
}

func ldAuthors(article map[string]any) string {
	if article == nil {
		return ""
	}
	return ldName(article["author"])
}

// Date layouts accepted by parseDate, with and without a time of day. The
// standard library only: a full natural-language date parser costs start-up
// time (see the start-up budget) for forms pages rarely put in metadata.
var (
	dateTimeLayouts = []string{
		time.RFC3339Nano, "2006-01-02T15:04:05Z0700", "2006-01-02T15:04Z07:00", "2006-01-02T15:04:05",
		"2006-01-02T15:04", "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05 -0700", "2006-01-02 15:04:05 MST",
		"2006-01-02 15:04:05", "2006-01-02 15:04",
		time.RFC1123Z, time.RFC1123, time.RFC850, time.ANSIC, time.RFC822Z, time.RFC822,
		"Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST", "2 Jan 2006 15:04:05 -0700",
	}
	dateLayouts = []string{
		"2006-01-02", "2006/01/02", "2006.01.02", "20060102", "2006-1-2", "2006/1/2",
		"January 2, 2006", "January 2 2006", "Jan 2, 2006", "Jan 2 2006", "Jan. 2, 2006",
		"2 January 2006", "2 Jan 2006", "02 Jan 2006", "Monday, January 2, 2006", "Mon, Jan 2, 2006",
		"January 2006", "2006-01", "2006",
	}
)

// parseDate normalises a date value: RFC 3339 (UTC offset kept) when it has
// a time of day, else YYYY-MM-DD (YYYY-MM, YYYY for partial dates). Forms:
// ISO 8601 / RFC 3339 with or without seconds, fraction and zone, a space
// instead of 'T', RFC 1123/822/850 and ANSI C dates, numeric dates with '-',
// '/' or '.', English month names ("January 2, 2006", "2 Jan 2006"). A value
// that none of them parses, or a year before 1900 or after 2200, gives "".
func parseDate(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return ""
	}
	ok := func(t time.Time) bool { return t.Year() >= 1900 && t.Year() <= 2200 }
	for _, l := range dateTimeLayouts {
		if t, err := time.Parse(l, s); err == nil && ok(t) {
			return t.Format(time.RFC3339)
		}
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil && ok(t) {
			switch l {
			case "January 2006", "2006-01":
				return t.Format("2006-01")
			case "2006":
				return t.Format("2006")
			}
			return t.Format("2006-01-02")
		}
	}
	// An ISO date followed by anything else ("2024-03-01T10:00:00.000+0100").
	if len(s) > 10 && s[4] == '-' && s[7] == '-' {
		if t, err := time.Parse("2006-01-02", s[:10]); err == nil && ok(t) {
			return t.Format("2006-01-02")
		}
	}
	return ""
}

// mdLinkTarget matches the target of a markdown link or image: "](url" up
// to a space or the closing parenthesis.
var mdLinkTarget = lazyregexp.New(`\]\(<?([^)\s>]+)`)

// markdownTargets returns the link targets of md (fragments removed).
func markdownTargets(md string) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdLinkTarget.FindAllStringSubmatch(md, -1) {
		u, _, _ := strings.Cut(m[1], "#")
		out[u] = true
	}
	return out
}

// readLinks collects the distinct http(s) targets of <a href> and <area
// href> in document order, resolved against base, fragment removed, links
// to the page itself dropped. The text is the first non-empty anchor text
// met for the target.
func readLinks(doc *html.Node, base *url.URL) []Link {
	self := ""
	if base != nil {
		b := *base
		b.Fragment, b.RawFragment = "", ""
		self = b.String()
	}
	idx := map[string]int{}
	var all []Link
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Script, atom.Style, atom.Template, atom.Head:
			return false
		case atom.A, atom.Area:
		default:
			return true
		}
		href, ok := dom.Attr(n, "href")
		if !ok {
			return true
		}
		u := absHTTP(href, base)
		if u == "" {
			return true
		}
		u, _, _ = strings.Cut(u, "#")
		if u == self {
			return true
		}
		u = linkFormURL(u)
		text := linkText(n)
		if i, seen := idx[u]; seen {
			if all[i].Text == "" {
				all[i].Text = text
			}
			return true
		}
		idx[u] = len(all)
		all = append(all, Link{URL: u, Text: text})
		return true
	})

	return all
}

// mdURLEscaper is the percent-encoding html-to-markdown applies to every
// link destination it writes (converter/url.go percentEncodingReplacer).
var mdURLEscaper = strings.NewReplacer(" ", "%20", "[", "%5B", "]", "%5D", "(", "%28", ")", "%29", "<", "%3C", ">", "%3E")

// linkFormURL returns u (an absolute URL as absHTTP returns it) in the form
// the markdown writer gives the same link: the query re-encoded as
// converter.ParseAndEncodeQuery does ("+" as "%20"), then space, brackets,
// parentheses and angle brackets percent-encoded, IPv6 host brackets kept
// (RestoreIPv6Hosts). links[].url is in this one canonical form, so it is
// the URL the content shows and main-content links are found by it
// ("…/Foo_(bar)" is "…/Foo_%28bar%29" in both; breaker6 D8).
func linkFormURL(u string) string {
	if pu, err := url.Parse(u); err == nil && pu.RawQuery != "" {
		pu.RawQuery = strings.ReplaceAll(converter.ParseAndEncodeQuery(pu.RawQuery), "+", "%20")
		u = pu.String()
	}
	return RestoreIPv6Hosts(mdURLEscaper.Replace(u))
}

// linkText returns the anchor text of a link element: its text, else its
// aria-label or title, else the alt of an image inside; collapsed and capped.
func linkText(n *html.Node) string {
	t := dom.CollapseSpace(dom.TextContent(n))
	if t == "" {
		for _, k := range []string{"aria-label", "title"} {
			if v, ok := dom.Attr(n, k); ok && strings.TrimSpace(v) != "" {
				t = dom.CollapseSpace(v)
				break
			}
		}
	}
	if t == "" {
		dom.Walk(n, func(c *html.Node) bool {
			if t == "" && c.Type == html.ElementNode && c.DataAtom == atom.Img {
				if v, ok := dom.Attr(c, "alt"); ok {
					t = dom.CollapseSpace(v)
				}
			}
			return t == ""
		})

	}
	if utf8.RuneCountInString(t) > maxLinkText {
		r := []rune(t)
		t = strings.TrimSpace(string(r[:maxLinkText-1])) + "…"
	}
	return t
}

// jsWords are what a <noscript> asking for JavaScript says.
var jsWords = lazyregexp.New(`(?i)javascript|\bjs\b`)

// readShell measures the structure of <body> (see Shell).
func readShell(doc *html.Node) Shell {
	var s Shell
	var body *html.Node
	dom.Walk(doc, func(n *html.Node) bool {
		if n.Type != html.ElementNode {
			return true
		}
		switch n.DataAtom {
		case atom.Script:
			s.Scripts = s.Scripts || dom.RunsScript(n)
			return false
		case atom.Noscript:
			if jsWords.MatchString(dom.RawText(n)) {
				s.NoscriptAsksJS = true
			}
			return false
		case atom.Body:
			if body == nil {
				body = n
			}
		}
		return true
	})

	if body == nil {
		return s
	}
	chars := 0
	var count func(n *html.Node)
	count = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			chars += utf8.RuneCountInString(dom.CollapseSpace(n.Data))
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				return
			}
		}
		for c := n.FirstChild; c != nil && chars < 4*shellMaxChars; c = c.NextSibling {
			count(c)
		}
	}
	count(body)
	s.VisibleChars = chars
	if chars >= shellMaxChars {
		return s // not a shell, whatever its mount points
	}
	// Mount points: an element with an id or a custom-element name and no
	// text, among the body's element children (through one wrapper).
	var visit func(n *html.Node, depth int)
	visit = func(n *html.Node, depth int) {
		for c := n.FirstChild; c != nil && !s.EmptyMount; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template, atom.Link, atom.Meta:
				continue
			}
			_, hasID := dom.Attr(c, "id")
			custom := strings.Contains(c.Data, "-")
			if (hasID || custom) && strings.TrimSpace(visibleOf(c)) == "" {
				s.EmptyMount = true
				return
			}
			if depth < 2 {
				visit(c, depth+1)
			}
		}
	}
	visit(body, 0)
	return s
}

// visibleOf returns the text of n outside scripts, styles, <noscript> and <template>.
func visibleOf(n *html.Node) string {
	var b strings.Builder
	dom.Walk(n, func(c *html.Node) bool {
		switch c.Type {
		case html.TextNode:
			b.WriteString(c.Data)
		case html.ElementNode:
			switch c.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				return false
			}
		}
		return b.Len() < 64
	})

	return b.String()
}

// encodedIPv6Host matches a link authority whose IPv6 literal the
// converter percent-encoded ("http://%5B::1%5D:8080/": html-to-markdown
// encodes every '[' and ']' of a destination). Brackets around an IPv6
// host are URL syntax (RFC 3986 §3.2.2), and "%5B" is never valid in a
// host, so putting them back changes no other URL.
var encodedIPv6Host = lazyregexp.New(`(?i)([a-z][a-z0-9+.-]*://(?:[^/\s()\[\]@]*@)?)%5B([0-9a-f:.]+(?:%25[0-9a-z._~-]+)?)%5D`)

// RestoreIPv6Hosts undoes the converter's encoding of IPv6 host brackets
// in link and image destinations (encodedIPv6Host).
func RestoreIPv6Hosts(md string) string {
	if !strings.Contains(md, "%5B") && !strings.Contains(md, "%5b") {
		return md
	}
	return encodedIPv6Host.ReplaceAllString(md, "$1[$2]")
}
