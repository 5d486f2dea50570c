package content

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// TestSelectNonNewsPages checks the merge and pre-cleaning on small
// non-news pages (product, docs, wiki, search, comments, README): key
// content present, in order, and boilerplate absent.
func TestSelectNonNewsPages(t *testing.T) {
	para := func(s string) string {
		return "<p>" + s + " " + strings.Repeat("This sentence pads the paragraph with plain article words. ", 3) + "</p>"
	}
	var comments strings.Builder
	for i := range 60 {
		fmt.Fprintf(&comments, `<li class="comment"><div class="comment-meta"><a href="/u/%d">user%d</a></div><div class="comment-body"><p>Comment number %d: %s</p></div></li>`,
			i, i, i, strings.Repeat([]string{"redis latency vacuum agree. ", "durable replica index think. ", "throughput lock migration cost. "}[i%3], 2+i%4))
	}
	tests := []struct {
		name      string
		page      string
		title     string   // "" = not checked
		inOrder   []string // must appear, in this order
		absent    []string
		absentTit []string // must not appear in the title
	}{
		{
			name: "1 product page keeps description, specs and both reviews",
			page: `<html><head><title>Trail Boot</title></head><body><nav><a href="/">Home</a> <a href="/shop">Shop</a></nav>
<main><h1>Trail Boot</h1><div class="price">$129.99</div>
<h2>Description</h2><p>A lightweight waterproof boot for fast hikes on wet rock and muddy forest trails all year.</p>
<ul><li>Weight: 540 g</li><li>Drop: 8 mm</li></ul>
<h2>Specifications</h2><table><tr><th>Outsole</th><td>Vibram Megagrip</td></tr><tr><th>Width</th><td>Regular</td></tr></table>
<h2>Reviews</h2><article class="review"><h3>Great for wet trails</h3><p>Kept my feet dry through three river crossings.</p></article>
<article class="review"><h3>Runs small</h3><p>Order half a size up.</p></article>
<h2>You may also like</h2><ul><li><a href="/p/1">Trail Two</a></li><li><a href="/p/2">Summit</a></li></ul></main></body></html>`,
			inOrder: []string{"129.99", "lightweight waterproof boot", "Weight: 540 g", "Vibram Megagrip", "Kept my feet dry", "half a size up"},
		},
		{
			name: "2 docs admonition between shared blocks survives",
			page: `<html><head><title>Client options — SDK docs</title></head><body><div class="document"><div class="body" role="main">
<h1>Client options<a class="headerlink" href="#client">¶</a></h1>
` + para("The client has many options for timeouts, proxies and pooling that production deployments tune.") + `
<table><tr><th>Option</th><th>Default</th></tr><tr><td>timeout</td><td>60</td></tr><tr><td>verify</td><td>True</td></tr></table>
<div class="admonition warning"><p class="admonition-title">Warning</p><p>Never set verify to False in production systems.</p></div>
<h2>Proxies<a class="headerlink" href="#proxies">¶</a></h2>
` + para("Set the proxy environment variable or pass the proxies mapping explicitly when you build the client.") + `
</div></div></body></html>`,
			title:   "Client options",
			inOrder: []string{"many options for timeouts", "timeout", "Never set verify to False", "## Proxies", "proxy environment variable"},
			absent:  []string{"¶"},
		},
		{
			name: "3 wiki headings with edit links stay headings",
			page: `<html><head><title>Keep - Wikipedia</title></head><body><main id="content"><h1 id="firstHeading">Keep</h1>
<div id="mw-content-text">` + para("A keep is a type of fortified tower built within castles during the Middle Ages.") + `
<div class="mw-heading mw-heading2"><h2 id="History">History</h2><span class="mw-editsection"><span class="mw-editsection-bracket">[</span><a href="/w/index.php?action=edit&amp;section=1">edit</a><span class="mw-editsection-bracket">]</span></span></div>
` + para("The first keeps were made of timber and were replaced by stone ones in the eleventh century.") + `
<div class="mw-heading mw-heading2"><h2 id="Design">Design</h2><span class="mw-editsection">[<a href="/w/index.php?action=edit&amp;section=2">edit</a>]</span></div>
` + para("Keeps had thick walls and a single entrance on the first floor reached by a staircase.") + `
</div></main></body></html>`,
			title:   "Keep",
			inOrder: []string{"fortified tower", "## History", "first keeps were made of timber", "## Design", "thick walls"},
			absent:  []string{"edit](", "\n[\n", "\n]\n"},
		},
		{
			name: "5 long comment section does not replace the article",
			page: `<html><head><title>Is SKIP LOCKED enough?</title></head><body><main><article><h1>Is SKIP LOCKED enough?</h1>
` + para("In this post I argue that a plain Postgres table with SKIP LOCKED is enough for most job queues.") + `
` + para("The partial index on queued rows stays tiny, so the planner finds the next job in microseconds.") + `
</article><section id="comments" class="comments"><h2>60 comments</h2><ol class="comment-list">` + comments.String() + `</ol></section>
</main></body></html>`,
			inOrder: []string{"plain Postgres table with SKIP LOCKED", "partial index on queued rows"},
			absent:  []string{"Comment number"},
		},
		{
			name: "5 unmarked comment thread outside the only article",
			page: `<html><head><title>Is SKIP LOCKED enough?</title></head><body><main><article><h1>Is SKIP LOCKED enough?</h1>
` + para("In this post I argue that a plain Postgres table with SKIP LOCKED is enough for most job queues.") + `
` + para("The partial index on queued rows stays tiny, so the planner finds the next job in microseconds.") + `
</article><section><h2>60 replies</h2><ol>` + strings.ReplaceAll(comments.String(), ` class="comment"`, "") + `</ol></section>
</main></body></html>`,
			inOrder: []string{"plain Postgres table with SKIP LOCKED", "partial index on queued rows", "Comment number 0:"},
			// (Comments after the article may follow it: only losing the
			// article is a defect.)

		},
		{
			name: "6 GitHub-wrapped headings with anchors survive",
			page: `<html><head><title>GitHub - octo/fastjson: fast JSON</title></head><body><article class="markdown-body">
<div class="markdown-heading"><h1 class="heading-element">fastjson</h1><a id="user-content-fastjson" class="anchor" aria-label="Permalink: fastjson" href="#fastjson"><svg class="octicon"></svg></a></div>
` + para("fastjson parses JSON up to ten times faster than the standard library without code generation.") + `
<div class="markdown-heading"><h2 class="heading-element">Install</h2><a id="user-content-install" class="anchor" href="#install"><svg></svg></a></div>
<pre><code>go get github.com/octo/fastjson</code></pre>
<div class="markdown-heading"><h2 class="heading-element">Usage</h2><a class="anchor" href="#usage"><svg></svg></a></div>
` + para("Create a Parser and call Parse on the input; the returned values live until the next call.") + `
</article></body></html>`,
			// The <h1> differs from the <title>, so it stays (issue 6
			// item 11), once, without its permalink.
			inOrder: []string{"# fastjson\n", "ten times faster", "## Install", "go get github.com/octo/fastjson", "## Usage", "Create a Parser"},
			absent:  []string{"Permalink", "# fastjson\n\n# fastjson"},
		},
		{
			name:      "8 title prefers <title> over a different h1",
			page:      `<html><head><title>Hello Page</title></head><body><h1>Hi</h1>` + para("Some body text that is long enough to be the main content of this page.") + `</body></html>`,
			title:     "Hello Page",
			inOrder:   []string{"Some body text"},
			absentTit: []string{"¶"},
		},
	}
	base, _ := url.Parse("http://example.test/page")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Convert([]byte(tc.page), "text/html; charset=utf-8", base)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			if tc.title != "" && d.Title != tc.title {
				t.Errorf("title = %q, want %q", d.Title, tc.title)
			}
			for _, s := range tc.absentTit {
				if strings.Contains(d.Title, s) {
					t.Errorf("title %q holds %q", d.Title, s)
				}
			}
			rest := d.Markdown
			for _, s := range tc.inOrder {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Errorf("%q missing or out of order in:\n%s", s, d.Markdown)
					break
				}
				rest = rest[i+len(s):]
			}
			for _, s := range tc.absent {
				if strings.Contains(d.Markdown, s) {
					t.Errorf("%q present in:\n%s", s, d.Markdown)
				}
			}
		})
	}
}

// TestSelectMerge checks mergeWithin on the extractor answers behind the
// non-news defects: which blocks survive, and in what order.
func TestSelectMerge(t *testing.T) {
	p := func(s string) string {
		return s + " " + strings.Repeat("These words pad the block so that it reads like real prose here. ", 2)
	}
	join := func(bs ...string) string { return strings.Join(bs, "\n\n") }
	review := "### Great for wet trails\n\n5/5 — Sam\n\nKept my feet dry through three river crossings."
	tests := []struct {
		name               string
		primary, secondary string
		container          string // text of the main container ("" = none)
		inOrder, absent    []string
	}{
		{
			name: "1 readability kept one review of a product page",
			primary: join("$129.99", "## Description", p("A lightweight waterproof boot."),
				"- Weight: 540 g\n- Drop: 8 mm", "## Specifications", "| Outsole | Vibram |\n|---|---|\n| Width | Regular |",
				"## Reviews", review, "### Runs small", "Order half a size up.",
				"## You may also like", "- [Trail Two](/p/1)\n- [Summit](/p/2)"),
			secondary: review,
			inOrder:   []string{"$129.99", "lightweight waterproof boot", "Weight: 540 g", "Vibram", "Kept my feet dry", "half a size up"},
			absent:    []string{"You may also like", "Trail Two"},
		},
		{
			name:      "2 admonition readability dropped, between shared blocks",
			primary:   join(p("Intro to the client options."), "| Option | Default |\n|---|---|\n| verify | True |", "Warning", "Never set `verify=False` in production. See [TLS](/tls) for details.", "## Proxies", p("Set the proxy variable.")),
			secondary: join(p("Intro to the client options."), "| Option | Default |\n|---|---|\n| verify | True |", "## Proxies", p("Set the proxy variable.")),
			inOrder:   []string{"Intro to the client", "verify", "Warning", "Never set", "## Proxies", "Set the proxy"},
		},
		{
			name:      "3 stray bracket of an edit link is dropped, heading kept",
			primary:   join(p("A gatehouse is a fortified gateway."), "## History", "[", p("The first gatehouses were built in the Iron Age.")),
			secondary: join(p("A gatehouse is a fortified gateway."), p("The first gatehouses were built in the Iron Age.")),
			inOrder:   []string{"fortified gateway", "## History", "Iron Age"},
			absent:    []string{"\n[\n"},
		},
		{
			name:      "3 the same infobox rendered twice is written once, fuller",
			primary:   join("| Castle Gate |  |\n|---|---|\n| Type | Fortified gateway |\n| Location |  |", p("A gatehouse is a fortified gateway.")),
			secondary: join("| Castle Gate |  |\n|---|---|\n| ![img](/a.jpg) The gate in 2010 |  |\n| Type | Fortified gateway |\n| Location | [Exampleshire](/e), England |", p("A gatehouse is a fortified gateway.")),
			inOrder:   []string{"Castle Gate", "Exampleshire", "fortified gateway"},
			absent:    []string{"| Location |  |"},
		},
		{
			name: "4 results list: the first item is not lost",
			primary: join("About 1,240,000 results",
				"1. www.postgresql.org › docs[PostgreSQL: SELECT](https://pg/sel)", "   With SKIP LOCKED, any selected rows that cannot be immediately locked are skipped. Skipping locked rows provides an inconsistent view of the data.",
				"2. blog.example.com[Queues in Postgres](https://blog/q)", "   A deep dive into building a reliable job queue on Postgres using FOR UPDATE SKIP LOCKED."),
			secondary: join("1. ### [PostgreSQL: SELECT](https://pg/sel)", "   www.postgresql.org › docs", "   With SKIP LOCKED, any selected rows that cannot be immediately locked are skipped. Skipping locked rows provides an inconsistent view of the data.",
				"2. ### [Queues in Postgres](https://blog/q)", "   blog.example.com", "   A deep dive into building a reliable job queue on Postgres using FOR UPDATE SKIP LOCKED."),
			inOrder: []string{"[PostgreSQL: SELECT](https://pg/sel)", "With SKIP LOCKED", "[Queues in Postgres](https://blog/q)", "deep dive"},
			absent:  []string{"docs[PostgreSQL"},
		},
		{
			name:      "5 barely overlapping answers: the one from the main container wins",
			primary:   join(p("In this post I argue that a plain Postgres table is enough."), "## Conclusion", "Use Postgres until you measure a reason not to."),
			secondary: join("1. Latency redis however disagree agree queue table database cost agree durable cost.\n2. Primary throughput postgres agree agree the they durable table think disagree vacuum.\n3. The also primary you lock throughput think the simple vacuum agree durable.\n4. Row really the throughput because really complex really we database index we.\n5. Simple really throughput simple because really you lock row row redis also."),
			container: p("In this post I argue that a plain Postgres table is enough.") + " Conclusion Use Postgres until you measure a reason not to.",
			inOrder:   []string{"plain Postgres table", "Use Postgres until"},
			absent:    []string{"Latency redis"},
		},
		{
			name:      "7 a list only readability found, between shared blocks",
			primary:   join("## Features", "The returned values are only valid until the next call to Parse and no longer."),
			secondary: join("## Features", "- Zero-allocation parsing\n- Streaming API", "Important", "The returned values are only valid until the next call to Parse and no longer."),
			inOrder:   []string{"## Features", "- Zero-allocation parsing", "- Streaming API", "The returned values"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var container func() map[uint64]struct{}
			if tc.container != "" {
				container = func() map[uint64]struct{} { return shingles(tokenize(tc.container)) }
			}
			got := mergeWithin(tc.primary, tc.secondary, container)
			rest := got
			for _, s := range tc.inOrder {
				i := strings.Index(rest, s)
				if i < 0 {
					t.Errorf("%q missing or out of order in:\n%s", s, got)
					break
				}
				rest = rest[i+len(s):]
			}
			for _, s := range tc.absent {
				if strings.Contains(got, s) {
					t.Errorf("%q present in:\n%s", s, got)
				}
			}
		})
	}
}
