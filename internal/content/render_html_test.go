package content

import (
	"strings"
	"testing"
)

// TestRenderCodeLanguageFromWrapper: the language on a wrapper <div>
// (Sphinx, GitHub, Jekyll) survives the extractors on an article-sized
// page, where the restored <pre> has lost its parents.
func TestRenderCodeLanguageFromWrapper(t *testing.T) {
	const code = "def hello():\n    return 42\n"
	for _, tc := range []struct{ name, block, want string }{
		{"sphinx", `<div class="highlight-python notranslate"><div class="highlight"><pre><span class="k">def</span> hello():
    <span class="k">return</span> 42
</pre></div></div>`, "python"},
		{"github", `<div class="highlight highlight-source-rust"><pre>def hello():
    return 42
</pre></div>`, "rust"},
		{"jekyll", `<div class="language-ruby highlighter-rouge"><div class="highlight"><pre class="highlight"><code>def hello():
    return 42
</code></pre></div></div>`, "ruby"},
		{"no language", `<div class="highlight"><pre>def hello():
    return 42
</pre></div>`, ""},
		{"pre's own class wins", `<div class="language-ruby"><pre class="language-go">def hello():
    return 42
</pre></div>`, "go"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := convertHTML(t, article("Code sample", tc.block))
			infos, bodies := fencedBlocks(doc.Markdown)
			if len(infos) != 1 {
				t.Fatalf("want 1 fenced block, got %d in:\n%s", len(infos), doc.Markdown)
			}
			if infos[0] != tc.want || bodies[0]+"\n" != code {
				t.Errorf("block = %q %q; want %q %q", infos[0], bodies[0], tc.want, code)
			}
		})
	}
}

// TestRenderLinkSchemes: mailto:/tel: links stay as written (also behind a
// <base href>), script and data: targets lose the link but keep the text.
func TestRenderLinkSchemes(t *testing.T) {
	for _, tc := range []struct{ name, head, link, want, notWant string }{
		{"mailto", "", `<a href="mailto:sales@ex.com">sales</a>`, "[sales](mailto:sales@ex.com)", "/mailto:"},
		{"tel", "", `<a href="tel:+15551234">call us</a>`, "[call us](tel:+15551234)", "/tel:"},
		{"mailto with base", `<base href="https://cdn.ex.org/assets/">`, `<a href="mailto:a@b.c">mail</a>`, "[mail](mailto:a@b.c)", "/mailto:"},
		{"javascript", "", `<a href="javascript:alert(1)">run it</a>`, " run it ", "javascript"},
		{"javascript with base", `<base href="https://cdn.ex.org/assets/">`, `<a href=" JavaScript:void(0)">run it</a>`, " run it ", "](https://cdn"},
		{"vbscript", "", `<a href="vbscript:msgbox">run it</a>`, " run it ", "vbscript"},
		{"data html", "", `<a href="data:text/html,hi">run it</a>`, " run it ", "data:"},
		{"relative", "", `<a href="other.html">other</a>`, "[other](https://example.com/blog/other.html)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := article("Contact", `<p>Please write to our team, `+tc.link+` today, and we answer every message within two working days.</p>`)
			page = strings.Replace(page, "<head>", "<head>"+tc.head, 1)
			md := convertHTML(t, page).Markdown
			if !strings.Contains(md, tc.want) {
				t.Errorf("markdown lacks %q:\n%s", tc.want, md)
			}
			if tc.notWant != "" && strings.Contains(md, tc.notWant) {
				t.Errorf("markdown has %q:\n%s", tc.notWant, md)
			}
		})
	}
}

// TestRenderPermalinks: "link to this heading" marks vanish from headings
// and from the title.
func TestRenderPermalinks(t *testing.T) {
	for _, tc := range []struct{ name, heading string }{
		{"sphinx", `<h2 id="timeouts">Timeouts<a class="headerlink" href="#timeouts" title="Link to this heading">¶</a></h2>`},
		{"github", `<h2 id="timeouts"><a class="anchor" aria-hidden="true" href="#timeouts"><svg class="octicon"><path d="M0"></path></svg></a>Timeouts</h2>`},
		{"hash text", `<h2 id="timeouts">Timeouts <a href="#timeouts">#</a></h2>`},
		{"section sign", `<h2 id="timeouts">Timeouts <a href="#timeouts">§</a></h2>`},
		{"link emoji", `<h2 id="timeouts"><a href="#timeouts" class="header-anchor">🔗</a> Timeouts</h2>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := article("Configuring", tc.heading+`<p>Three timeouts apply to each request: the connect timeout, the read timeout and the overall deadline.</p>`)
			page = strings.Replace(page, "<h1>Configuring</h1>", `<h1>Configuring<a class="headerlink" href="#c">¶</a></h1>`, 1)
			page = strings.Replace(page, "<title>Configuring | Example Blog</title>", "", 1)
			doc := convertHTML(t, page)
			if !strings.Contains(doc.Markdown, "## Timeouts\n") {
				t.Errorf("markdown lacks a clean heading:\n%s", doc.Markdown)
			}
			for _, bad := range []string{"¶", "[#]", "§", "🔗", "(https://example.com/blog/post.html#timeouts)"} {
				if strings.Contains(doc.Markdown, bad) {
					t.Errorf("markdown has %q:\n%s", bad, doc.Markdown)
				}
			}
			if doc.Title != "Configuring" {
				t.Errorf("Title = %q", doc.Title)
			}
		})
	}
	// Links that merely look alike stay.
	for _, tc := range []struct{ name, link, want string }{
		{"linked image", `<a href="#top"><img src="up.png" alt="up"></a>`, "up.png"},
		{"real text", `<a class="anchor" href="#x">see the anchor</a>`, "see the anchor"},
		{"hash to other page", `<a href="https://ex.org/">#</a>`, "[#](https://ex.org/)"},
	} {
		t.Run("kept/"+tc.name, func(t *testing.T) {
			md := fragmentToMarkdown(t, `<p>Before `+tc.link+` after.</p>`, mustURL(t, "https://example.com/blog/post.html"))
			if !strings.Contains(md, tc.want) {
				t.Errorf("markdown lacks %q:\n%s", tc.want, md)
			}
		})
	}
}

// TestRenderLazyImages: lazy-loaded images get their real, absolute URL.
func TestRenderLazyImages(t *testing.T) {
	const gif = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"
	for _, tc := range []struct{ name, img, want string }{
		{"srcset only", `<img srcset="a-480.jpg 480w, a-800.jpg 800w" sizes="50vw" alt="Chart">`, "![Chart](https://example.com/blog/a-800.jpg)"},
		{"data-lazy-src", `<img src="` + gif + `" data-lazy-src="lazy2.png" alt="Chart">`, "![Chart](https://example.com/blog/lazy2.png)"},
		{"data-src", `<img data-src="/img/c.png" alt="Chart">`, "![Chart](https://example.com/img/c.png)"},
		{"data-original", `<img src="" data-original="c.webp" alt="Chart">`, "![Chart](https://example.com/blog/c.webp)"},
		{"data-srcset", `<img class="lazyload" data-srcset="d-1x.png 1x, d-2x.png 2x" alt="Chart">`, "![Chart](https://example.com/blog/d-2x.png)"},
		{"picture source", `<picture><source type="image/webp" data-srcset="p-1x.webp 1x, p-2x.webp 2x"><img alt="Chart"></picture>`, "![Chart](https://example.com/blog/p-2x.webp)"},
		{"real src kept", `<img src="real.png" srcset="big.png 2x" alt="Chart">`, "![Chart](https://example.com/blog/real.png)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := convertHTML(t, article("Lazy images", `<p>The chart below shows the monthly numbers.</p>`+tc.img+`<p>As the chart shows, the numbers grew every month of the year.</p>`)).Markdown
			if !strings.Contains(md, tc.want) {
				t.Errorf("markdown lacks %q:\n%s", tc.want, md)
			}
			if strings.Contains(md, "[IMAGE") || strings.Contains(md, "data:image") {
				t.Errorf("placeholder left:\n%s", md)
			}
		})
	}
}

// TestRenderOneLinePreWithCopyButton: a one-line <pre> next to a copy
// button stays a fenced block.
func TestRenderOneLinePreWithCopyButton(t *testing.T) {
	for _, tc := range []struct{ name, block string }{
		{"button after", `<div class="code-block"><pre>npm install gatehouse</pre><button class="copy">Copy</button></div>`},
		{"button before", `<div class="code-block"><button class="copy" aria-label="Copy to clipboard">Copy</button><pre><code>npm install gatehouse</code></pre></div>`},
		{"bare", `<pre>npm install gatehouse</pre>`},
		{"github clipboard", `<div class="highlight highlight-source-shell notranslate position-relative overflow-auto"><pre>npm install gatehouse</pre><div class="zeroclipboard-container"><clipboard-copy aria-label="Copy" value="npm install gatehouse"></clipboard-copy></div></div>`},
		{"github clipboard, heading before", `<h2>Install</h2><div class="highlight highlight-source-shell notranslate position-relative overflow-auto"><pre>npm install gatehouse</pre><div class="zeroclipboard-container"><clipboard-copy aria-label="Copy" value="npm install gatehouse"></clipboard-copy></div></div><h2>Usage</h2>`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := convertHTML(t, article("Install", `<p>Install the package first:</p>`+tc.block+`<p>Then import it in your program and call the client constructor.</p>`)).Markdown
			_, bodies := fencedBlocks(md)
			if len(bodies) != 1 || bodies[0] != "npm install gatehouse" {
				t.Errorf("want one fenced block, got %q in:\n%s", bodies, md)
			}
		})
	}
}
