package direct

import (
	"bytes"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
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

// parseRefresh parses a refresh content value (see metaRefresh).
func parseRefresh(v string, base *url.URL) (int, *url.URL, bool) {
	s := strings.TrimLeft(v, " \t\n\f\r")
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9') {
		i++
	}
	if i == 0 && (len(s) == 0 || s[0] != '.') {
		return 0, nil, false
	}
	delay, err := strconv.Atoi(s[:i])
	if err != nil && i > 0 {
		delay = maxRefreshDelay + 1 // absurdly long: never followed
	}
	s = s[i:]
	for len(s) > 0 && (s[0] >= '0' && s[0] <= '9' || s[0] == '.') {
		s = s[1:]
	}
	s = strings.TrimLeft(s, " \t\n\f\r")
	if len(s) == 0 || s[0] != ';' && s[0] != ',' {
		return 0, nil, false
	}
	s = strings.TrimLeft(s[1:], " \t\n\f\r")
	if len(s) >= 3 && strings.EqualFold(s[:3], "url") {
		if r := strings.TrimLeft(s[3:], " \t\n\f\r"); strings.HasPrefix(r, "=") {
			s = strings.TrimLeft(r[1:], " \t\n\f\r")
		}
	}
	if len(s) > 0 && (s[0] == '"' || s[0] == '\'') {
		q := s[0]
		s = s[1:]
		if j := strings.IndexByte(s, q); j >= 0 {
			s = s[:j]
		}
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil, false
	}
	u, err := base.Parse(s)
	if err != nil {
		return 0, nil, false
	}
	return delay, u, true
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
