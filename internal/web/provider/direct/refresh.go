package direct

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

// maxRefreshDelay is the longest <meta http-equiv="refresh"> delay the
// direct backend follows as a redirect hop: a browser follows any delay,
// and a page that waits this little is an interstitial ("Redirecting…").
const maxRefreshDelay = 10 // seconds

// minOwnContent is the text size (textSize, in characters) below which a
// page with a meta refresh is taken for an interstitial and the refresh is
// followed; a page with more text of its own is kept and its refresh
// target named in a note.
const minOwnContent = 200

// metaRefresh returns the delay (seconds) and the target of the first
// <meta http-equiv="refresh"> in an HTML body, resolved against base, by
// the HTML Standard's shared declarative refresh steps (§7.11.1): the
// content is "N", "N; url=U", "N, U" or "N; U", the URL optionally quoted.
// ok is false when there is none, it names no URL (a reload of the same
// page) or it does not parse. Only the head (the first 64 KiB) is read.
func metaRefresh(body []byte, base *url.URL) (delay int, target *url.URL, ok bool) {
	z := html.NewTokenizer(bytes.NewReader(body[:min(len(body), 64<<10)]))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return 0, nil, false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			if a == atom.Body {
				return 0, nil, false
			}
			if a != atom.Meta || !hasAttr {
				continue
			}
			var equiv, content string
			hasContent := false
			for more := true; more; {
				var k, v []byte
				k, v, more = z.TagAttr()
				switch string(k) {
				case "http-equiv":
					equiv = string(v)
				case "content":
					content, hasContent = string(v), true
				}
			}
			if hasContent && strings.EqualFold(strings.TrimSpace(equiv), "refresh") {
				return parseRefresh(content, base)
			}
		}
	}
}

// parseRefresh parses a refresh content value v by the HTML Standard's
// shared declarative refresh steps (§7.11.1) and resolves its URL against
// base with the project's WHATWG URL parser (urlsafe.ParseRef), as a
// browser does: "N", "N; url=U", "N, U", "N U", "N;URL='U'", the delay's
// fraction ("1.5") ignored, only ASCII white space skipped. A URL with a
// '%' that starts no percent-encoded octet ("/100%", "/a%zz") is kept as
// the standard keeps it and returned in the form net/http sends
// (urlsafe.RequestHref: the stray '%' as "%25").
//
// delay is in seconds, never negative; a delay too large for an int is
// reported as maxRefreshDelay+1 (never followed). ok is false when v does
// not parse, names no URL (a reload of the same page), or its URL does not
// parse.
func parseRefresh(v string, base *url.URL) (delay int, target *url.URL, ok bool) {
	const ws = " \t\n\f\r" // ASCII white space (Infra)
	s := strings.TrimLeft(v, ws)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 && (len(s) == 0 || s[0] != '.') {
		return 0, nil, false
	}
	if i > 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n > maxRefreshDelay {
			n = maxRefreshDelay + 1 // absurdly long: never followed
		}
		delay = n
	}
	s = strings.TrimLeft(s[i:], "0123456789.")
	if s == "" {
		return 0, nil, false // no URL: a reload of the same page
	}
	if !strings.ContainsRune(ws+",;", rune(s[0])) {
		return 0, nil, false
	}
	s = strings.TrimLeft(s, ws)
	if s != "" && (s[0] == ';' || s[0] == ',') {
		s = s[1:]
	}
	s = strings.TrimLeft(s, ws)
	if s == "" {
		return 0, nil, false
	}
	urlString := s
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		r := strings.TrimLeft(s[3:], ws)
		if strings.HasPrefix(r, "=") {
			s = strings.TrimLeft(r[1:], ws)
			if s != "" && (s[0] == '"' || s[0] == '\'') {
				q := s[0]
				s = s[1:]
				if j := strings.IndexByte(s, q); j >= 0 {
					s = s[:j]
				}
			}
			urlString = s
		}
	} else if s[0] == '"' || s[0] == '\'' {
		q := s[0]
		urlString = s[1:]
		if j := strings.IndexByte(urlString, q); j >= 0 {
			urlString = urlString[:j]
		}
	}
	if strings.Trim(urlString, ws) == "" {
		return 0, nil, false // an empty URL string resolves to the page itself
	}
	u, rerr := urlsafe.ParseRef(base.String(), urlString)
	if rerr != nil {
		return 0, nil, false
	}
	t, err := url.Parse(urlsafe.RequestHref(u.Href))
	if err != nil {
		return 0, nil, false
	}
	return delay, t, true
}

// chain returns the requests that led to resp, first to last (the first
// request, each HTTP redirect hop and each refresh hop followed): the via
// of the next hop, as net/http hands it to CheckRedirect.
func chain(resp *http.Response) []*http.Request {
	var out []*http.Request
	for r := resp.Request; r != nil; {
		out = append([]*http.Request{r}, out...)
		if r.Response == nil {
			break
		}
		r = r.Response.Request
	}
	return out
}
