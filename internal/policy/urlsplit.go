package policy

import (
	"errors"
	"strings"
)

// pyURL holds the parts of Python's urllib.parse.urlsplit result that the
// policy needs. The website policy of the described system is defined in
// terms of urlsplit (spec §A8), which is more lenient than net/url (it never
// rejects a bad port or a space in the host); mirroring it keeps rule
// normalisation and host extraction in step with each other and with the
// spec's vectors.
type pyURL struct {
	netloc string
	path   string
}

var errBadIPv6 = errors.New("invalid IPv6 URL (unbalanced brackets)")

// pySplit mirrors urlsplit (CPython ≥ 3.11): leading C0 controls and spaces
// are stripped, tab/CR/LF removed, an optional scheme ("[A-Za-z][A-Za-z0-9+.-]*:")
// consumed, then "//" introduces a netloc ending at the first "/", "?" or "#".
func pySplit(s string) (pyURL, error) {
	s = strings.TrimLeftFunc(s, func(r rune) bool { return r <= ' ' })
	if strings.ContainsAny(s, "\t\r\n") {
		s = strings.NewReplacer("\t", "", "\r", "", "\n", "").Replace(s)
	}
	if i := strings.IndexByte(s, ':'); i > 0 && isAlpha(s[0]) {
		ok := true
		for j := 0; j < i; j++ {
			if !isSchemeChar(s[j]) {
				ok = false
				break
			}
		}
		if ok {
			s = s[i+1:]
		}
	}
	var u pyURL
	if strings.HasPrefix(s, "//") {
		s = s[2:]
		end := len(s)
		if k := strings.IndexAny(s, "/?#"); k >= 0 {
			end = k
		}
		u.netloc, s = s[:end], s[end:]
		open, closed := strings.Contains(u.netloc, "["), strings.Contains(u.netloc, "]")
		if open != closed {
			return pyURL{}, errBadIPv6
		}
	}
	if k := strings.IndexAny(s, "?#"); k >= 0 {
		s = s[:k]
	}
	u.path = s
	return u, nil
}

// hostname mirrors urlsplit(...).hostname: the part after the last "@",
// inside brackets for IPv6 literals, else before the first ":"; lower-cased.
func (u pyURL) hostname() string {
	h := u.netloc
	if i := strings.LastIndexByte(h, '@'); i >= 0 {
		h = h[i+1:]
	}
	if i := strings.IndexByte(h, '['); i >= 0 {
		h = h[i+1:]
		if j := strings.IndexByte(h, ']'); j >= 0 {
			h = h[:j]
		}
	} else if j := strings.IndexByte(h, ':'); j >= 0 {
		h = h[:j]
	}
	return strings.ToLower(h)
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func isSchemeChar(c byte) bool {
	return isAlpha(c) || (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'
}
