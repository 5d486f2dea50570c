package content

import (
	"fmt"
	"strings"
	"testing"
)

// Item 11: the article's headline is kept when it is not the title; the
// byline and date only when asked (they cost precision on the bench).
func TestArticleHeadlineKept(t *testing.T) {
	page := `<html><head><title>Quarterly results | Example News</title></head><body><nav><a href="/">Home</a></nav>
<article><h1>Shares jump after a strong quarter</h1>
<p class="byline">By <a href="/staff/jane">Jane Doe</a>, business reporter</p><time datetime="2024-05-01">May 1, 2024</time>
<p>` + filler + `</p><p>` + strings.Replace(filler, "Gatehouse", "The desk", 1) + `</p></article><footer>(c) Example</footer></body></html>`
	u := mustURL(t, "https://news.example.com/q")
	doc, err := HTMLToMarkdown(page, u)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(doc.Markdown, "# Shares jump after a strong quarter\n\n") {
		t.Errorf("headline missing:\n%s", doc.Markdown)
	}
	if strings.Contains(doc.Markdown, "Jane Doe") {
		t.Errorf("byline in the default output:\n%s", doc.Markdown)
	}
	withBy, err := htmlToMarkdown(page, u, extractOptions{focus: defaultExtract.focus, byline: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(withBy.Markdown, "# Shares jump after a strong quarter\n\nBy Jane Doe, business reporter · May 1, 2024\n\n") {
		t.Errorf("byline option:\n%s", withBy.Markdown)
	}
	// A headline equal to the title is not repeated.
	same := strings.Replace(page, "Quarterly results | Example News", "Shares jump after a strong quarter", 1)
	doc, _ = HTMLToMarkdown(same, u)
	if strings.Contains(doc.Markdown, "# Shares jump") {
		t.Errorf("title repeated as a heading:\n%s", doc.Markdown)
	}
}

// Item 12: a front page of 30 stories laid out in tables comes back as a
// list, one line per row, with every link.
func TestLinkListFrontPage(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<html><head><title>Tech News</title></head><body><center><table id="main" width="85%"><tr><td><table><tr><td><a href="/"><b>Tech News</b></a> <a href="/new">new</a> | <a href="/past">past</a></td></tr></table></td></tr><tr><td><table class="itemlist">`)
	for i := 1; i <= 30; i++ {
		fmt.Fprintf(&b, `<tr class="athing"><td class="rank">%d.</td><td class="title"><a href="https://site%d.example.org/story-%d">Story number %d about something new</a> <span class="sitebit">(site%d.example.org)</span></td></tr><tr><td></td><td class="subtext">%d points by <a href="/user?id=u%d">u%d</a> <a href="/item?id=%d">%d comments</a></td></tr><tr class="spacer"></tr>`, i, i, i, i, i, i*3, i, i, i, i+2)
	}
	b.WriteString(`</table></td></tr><tr><td><a href="/guidelines">Guidelines</a> | <a href="/faq">FAQ</a></td></tr></table></center></body></html>`)
	doc, err := HTMLToMarkdown(b.String(), mustURL(t, "https://news.example.com/"))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 30; i++ {
		line := fmt.Sprintf("- %d\\. [Story number %d about something new](https://site%d.example.org/story-%d) (site%d.example.org)\n", i, i, i, i, i)
		if !strings.Contains(doc.Markdown, line) {
			t.Errorf("missing line %q", line)
		}
		for _, l := range []string{fmt.Sprintf("(https://news.example.com/user?id=u%d)", i), fmt.Sprintf("(https://news.example.com/item?id=%d)", i)} {
			if !strings.Contains(doc.Markdown, l) {
				t.Errorf("missing link %q", l)
			}
		}
	}
	if t.Failed() {
		t.Logf("markdown:\n%s", doc.Markdown)
	}
}

// isFragment: trafilatura's answer is one section of what readability
// found, and not a titled article.
func TestIsFragment(t *testing.T) {
	card := func(i int) string {
		return fmt.Sprintf("## [Conference %d](https://c%d.example)\n\nA two day event for developers in city %d with talks and workshops.\n\nTech conference in City %d, Country", i, i, i, i)
	}
	var all []string
	for i := 1; i <= 12; i++ {
		all = append(all, card(i))
	}
	secondary := strings.Join(all, "\n\n")
	primary := strings.Join(all[:2], "\n\n")
	if !isFragment(primary, secondary, "Best conferences") {
		t.Error("two cards of twelve: not taken for a fragment")
	}
	if isFragment(primary, secondary, "Conference 1") {
		t.Error("the answer is titled with the page title: an article, not a fragment")
	}
	article := "# Only the story\n\n" + filler + " " + filler
	if isFragment(article, article+"\n\n"+secondary, "Other") {
		t.Error("one run of prose: an article, not a fragment")
	}
	// The same run of prose inside readability's answer of ten times
	// its prose (a guide whose intro alone trafilatura returned).
	intro := "Our guide to the right gear for a first podcast: what each piece of equipment does, what it costs and which parts can wait until the show has found its listeners."
	var guide []string
	guide = append(guide, intro)
	for i := 0; i < 12; i++ {
		guide = append(guide, fmt.Sprintf("## Part %d\n\nSection %d of the guide explains, in about thirty words of its own, one piece of the kit: why it matters, what a good one costs, and the mistakes first-time buyers of it make most often.", i, i))
	}
	if !isFragment(intro, strings.Join(guide, "\n\n"), "Podcast gear") {
		t.Error("the intro of a guide ten times its size: not taken for a fragment")
	}
	if isFragment(primary, strings.Join(all[:4], "\n\n"), "Best conferences") {
		t.Error("readability's answer is only twice as big: not a fragment")
	}
	if isFragment(card(99)+"\n\n"+card(98), secondary, "Best conferences") {
		t.Error("readability's answer does not hold trafilatura's: not a fragment")
	}
}

func TestNonArticle(t *testing.T) {
	if nonArticle(filler + "\n\n" + filler) {
		t.Error("prose taken for a non-article")
	}
	if !nonArticle("- [a](x)\n- [b](y)\n\nShort line\n\n## Heading\n\n" + filler[:40]) {
		t.Error("links and short lines taken for an article")
	}
	if !nonArticle("") {
		t.Error("an empty answer is not an article")
	}
}

// A cookie-consent banner or a dialog is not the page's content, even
// when it is the longest text of a short forum thread.
func TestOverlaysDropped(t *testing.T) {
	consent := strings.Repeat("We use cookies and similar technologies to measure how the site is used, to remember your preferences and to show you offers. ", 4)
	page := `<html><head><title>Case question | Forum</title></head><body>
<div id="onetrust-consent-sdk"><div role="region" aria-label="Cookie banner"><p>` + consent + `</p></div></div>
<div class="cookie-notice-bar"><p>` + consent + `</p></div>
<div role="dialog" aria-label="Privacy"><p>` + consent + `</p></div>
<main><h1>Case question</h1><article class="post"><p>Does anyone know what the two brackets on the bottom panel of this case are for? The manual says nothing about them.</p></article>
<article class="post"><p>I heard they are for an external connection of the lighting hub, but nobody has confirmed that yet.</p></article></main></body></html>`
	doc, err := HTMLToMarkdown(page, mustURL(t, "https://forum.example.com/t/1"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(doc.Markdown, "cookies") {
		t.Errorf("consent text in:\n%s", doc.Markdown)
	}
	for _, w := range []string{"two brackets on the bottom panel", "external connection of the lighting hub"} {
		if !strings.Contains(doc.Markdown, w) {
			t.Errorf("missing %q in:\n%s", w, doc.Markdown)
		}
	}
	// A dialog that holds the article is the content.
	root := parseFragment(t, `<div role="dialog"><article><h1>A story</h1></article></div>`)
	if isOverlay(root.FirstChild) {
		t.Error("a dialog holding the article taken for an overlay")
	}
}

// TestSecondPassReusesPage: a non-article page gets a second pass
// (nonArticleExtract); without comment sections that pass would prepare
// the same tree, so the first pass's page serves (parsed and prepared once,
// readability run once) and the answer is the one a fresh second pass
// gives. With a comment section the second pass keeps it, so it prepares
// its own page.
func TestSecondPassReusesPage(t *testing.T) {
	var items strings.Builder
	for i := range 24 {
		fmt.Fprintf(&items, "<li><a href=\"/p/%d\">Project %d release notes and the changes of week %d</a></li>\n", i, i, i)
	}
	list := `<html><head><title>Projects | Example</title></head><body><nav><a href="/">Home</a></nav><main><h1>Projects</h1><ul>` + items.String() + `</ul><p>Updated daily.</p></main>`
	comments := `<div id="comments"><p>` + filler + `</p><p>` + filler + `</p></div>`
	u := mustURL(t, "https://example.com/projects")
	for _, c := range []struct {
		name       string
		page       string
		reuse      bool
		wantPrep   int64
		wantReadab int64
	}{
		{"no comment sections", list + `</body></html>`, true, 1, 1},
		{"a comment section", list + comments + `</body></html>`, false, 2, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, pass, pg, err := extract(c.page, u, defaultExtract)
			if err != nil || !pass.both || !nonArticle(d.Markdown) {
				t.Fatalf("not a non-article page with both extractors: err %v, both %v, markdown:\n%s", err, pass.both, d.Markdown)
			}
			if got := pg.reusableFor(nonArticleExtract); got != c.reuse {
				t.Fatalf("reusableFor(nonArticleExtract) = %v, want %v", got, c.reuse)
			}
			fresh, ferr := extractSafely(c.page, u, nonArticleExtract)
			if c.reuse {
				reused, rerr := extractSafelyFrom(pg, nonArticleExtract)
				if reused.Markdown != fresh.Markdown || reused.Title != fresh.Title || (rerr == nil) != (ferr == nil) {
					t.Errorf("reused page answers\n%s\n(%v), a fresh second pass\n%s\n(%v)", reused.Markdown, rerr, fresh.Markdown, ferr)
				}
			}
			prep, rdb := preparedPages.Load(), readabilityRuns.Load()
			if _, err := HTMLToMarkdown(c.page, u); err != nil {
				t.Fatal(err)
			}
			if got := preparedPages.Load() - prep; got != c.wantPrep {
				t.Errorf("HTMLToMarkdown prepared the page %d times, want %d", got, c.wantPrep)
			}
			if got := readabilityRuns.Load() - rdb; got != c.wantReadab {
				t.Errorf("HTMLToMarkdown ran readability %d times, want %d", got, c.wantReadab)
			}
		})
	}
}
