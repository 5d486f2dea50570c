package urlsafe

import "strings"

// RequestHref returns href (a canonical Href, see URL) in a form Go's
// net/url accepts for an HTTP request: every '%' of the userinfo, the path
// and the fragment that does not start a percent-encoded octet ('%' and two hex
// digits) is written as "%25". The WHATWG URL Standard leaves such a '%'
// as is ("http://host/100%", "/%E0%A4%A" stay valid URLs that browsers
// fetch), while net/url refuses them ("invalid URL escape"); "%25" is how
// that character is sent unambiguously. The query is returned unchanged
// (net/url does not check it, and it is sent as written). Anything without
// such a '%' is returned unchanged (the common case allocates nothing).
func RequestHref(href string) string {
	if !strings.Contains(href, "%") {
		return href
	}
	start := 0
	userinfo, uStart := "", 0
	if i := strings.Index(href, "://"); i >= 0 {
		start = i + 3
		end := len(href)
		if j := strings.IndexAny(href[start:], "/?#"); j >= 0 {
			end = start + j
		}
		if at := strings.LastIndexByte(href[start:end], '@'); at >= 0 {
			userinfo, uStart = href[start:start+at], start
		}
		start = end
	}
	if u2 := escapeStrayPercent(userinfo); u2 != userinfo {
		href = href[:uStart] + u2 + href[uStart+len(userinfo):]
		start += len(u2) - len(userinfo)
	}
	rest := href[start:]
	path, query, frag := rest, "", ""
	if i := strings.IndexByte(path, '#'); i >= 0 {
		path, frag = path[:i], path[i:]
	}
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path, query = path[:i], path[i:]
	}
	p2, f2 := escapeStrayPercent(path), escapeStrayPercent(frag)
	if p2 == path && f2 == frag {
		return href
	}
	return href[:start] + p2 + query + f2
}

// escapeStrayPercent writes every '%' of s not followed by two hex digits
// as "%25".
func escapeStrayPercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && !(i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2])) {
			if b.Len() == 0 {
				b.Grow(len(s) + 8)
				b.WriteString(s[:i])
			}
			b.WriteString("%25")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(s[i])
		}
	}
	if b.Len() == 0 {
		return s
	}
	return b.String()
}
