package vendors

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/net/html"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// DDGHTML is DuckDuckGo's HTML results endpoint, the one the described
// system's ddgs package reads.
const DDGHTML = "https://html.duckduckgo.com"

// DDGS searches DuckDuckGo's HTML results page: POST /html/ with the form
// field q; each organic result is an a.result__a link (whose href may be a
// //duckduckgo.com/l/?uddg=<target> redirect) and an a.result__snippet.
// Ads (result--ad) are skipped. A bot-check page (HTTP 202 or the anomaly
// modal) is vendor_rate_limited. Best-effort by nature: the page is not an API.
type DDGS struct{ a api }

// NewDDGS returns a DuckDuckGo HTML client.
func NewDDGS(o Options) *DDGS {
	return &DDGS{a: api{vendor: "ddgs", label: "DuckDuckGo", base: strings.TrimRight(orStr(o.Base, DDGHTML), "/"), client: o.Client}}
}

// Name returns "ddgs".
func (d *DDGS) Name() string { return "ddgs" }

// Search runs one query.
func (d *DDGS) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	ctx, cancel := withTimeout(ctx, searchTimeout)
	defer cancel()
	body, err := d.a.do(ctx, request{method: http.MethodPost, path: "/html/", form: url.Values{"q": {query}, "b": {""}}.Encode(), accept: "text/html"})
	if err != nil {
		return nil, err
	}
	if bytes.Contains(body, []byte("anomaly-modal")) || bytes.Contains(body, []byte("challenge-form")) {
		return nil, reason.New(reason.VendorRateLimited, "", "DuckDuckGo answered with a bot check (rate limit); wait and retry, or select a keyed search backend.")
	}
	doc, perr := html.Parse(bytes.NewReader(body))
	if perr != nil {
		return nil, reason.Wrap(reason.VendorBadResponse, "", "DuckDuckGo results page could not be parsed.", perr)
	}
	rows := parseDDG(doc)
	if len(rows) == 0 && !bytes.Contains(body, []byte("result")) {
		return nil, reason.New(reason.VendorBadResponse, "", "DuckDuckGo answered with a page that has no results section (the page layout may have changed).")
	}
	rows = numbered(rows)
	if n := clampLimit(limit); len(rows) > n {
		rows = rows[:n]
	}
	return rows, nil
}

func hasClass(n *html.Node, c string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" {
			for _, f := range strings.Fields(a.Val) {
				if f == c {
					return true
				}
			}
		}
	}
	return false
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return strings.Join(strings.Fields(b.String()), " ")
}

func parseDDG(doc *html.Node) []provider.Row {
	var rows []provider.Row
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "div" && hasClass(n, "result") {
			if hasClass(n, "result--ad") {
				return
			}
			var r provider.Row
			var find func(*html.Node)
			find = func(m *html.Node) {
				if m.Type == html.ElementNode && m.Data == "a" {
					switch {
					case hasClass(m, "result__a") && r.URL == "":
						r.URL, r.Title = ddgTarget(attr(m, "href")), textOf(m)
					case hasClass(m, "result__snippet") && r.Description == "":
						r.Description = textOf(m)
					}
				}
				for c := m.FirstChild; c != nil; c = c.NextSibling {
					find(c)
				}
			}
			find(n)
			if r.URL != "" {
				rows = append(rows, r)
			}
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return rows
}

// ddgTarget unwraps DuckDuckGo's /l/?uddg= redirect.
func ddgTarget(href string) string {
	h := href
	if strings.HasPrefix(h, "//") {
		h = "https:" + h
	}
	u, err := url.Parse(h)
	if err != nil {
		return ""
	}
	if strings.HasSuffix(u.Host, "duckduckgo.com") && strings.HasPrefix(u.Path, "/l/") {
		if t := u.Query().Get("uddg"); t != "" {
			if tu, err := url.Parse(t); err == nil && (tu.Scheme == "http" || tu.Scheme == "https") && tu.Host != "" {
				return t
			}
			return ""
		}
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}
