package truncate

import (
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// pyWS is the set of chars Python's str-regex "\s" matches (ASCII
// whitespace, U+001C–U+001F, U+0085 and the Unicode separators); Go's "\s"
// is ASCII-only, so the class is spelled out.
const pyWS = `\t\n\v\f\r \x{1c}-\x{1f}\x{85}\p{Z}`

var (
	// ![alt]( data:image/<subtype>;base64,<payload> )
	mdDataImage = lazyregexp.New(`!\[([^\]]*)\]\([` + pyWS + `]*data:image/[^;]+;base64,[A-Za-z0-9+/=` + pyWS + `]+\)`)
	// ( data:image/<subtype>;base64,<payload> )
	parenDataImage = lazyregexp.New(`\([` + pyWS + `]*data:image/[^;]+;base64,[A-Za-z0-9+/=` + pyWS + `]+\)`)
	// bare data:image/<subtype>;base64,<payload>
	bareDataImage = lazyregexp.New(`data:image/[^;]+;base64,[A-Za-z0-9+/=]+`)
)

// ReplaceBase64Images replaces inline base64 images with placeholders so a
// page cannot spend the agent's context on image bytes (spec §A10.5). Three
// passes, in order:
//
//  1. a markdown image whose target is a data:image/<subtype>;base64,
//     payload (whitespace allowed around and inside the payload) becomes
//     "[IMAGE: <alt>]" with alt trimmed, or "[IMAGE]" when alt is empty;
//  2. a parenthesised data-image payload becomes "[IMAGE]";
//  3. any remaining bare data:image/…;base64,<b64> run becomes "[IMAGE]"
//     (this is what rewrites HTML attributes such as src="data:…").
//
// Real http(s) image links are left untouched so the agent can still fetch
// them. Matching is case-sensitive, as in the described system. Valid UTF-8
// in gives valid UTF-8 out.
func ReplaceBase64Images(s string) string {
	if !strings.Contains(s, "data:image/") {
		return s
	}
	if locs := mdDataImage.FindAllStringSubmatchIndex(s, -1); locs != nil {
		var b strings.Builder
		b.Grow(len(s))
		last := 0
		for _, l := range locs {
			b.WriteString(s[last:l[0]])
			if alt := strings.TrimFunc(s[l[2]:l[3]], IsPySpace); alt != "" {
				b.WriteString("[IMAGE: " + alt + "]")
			} else {
				b.WriteString("[IMAGE]")
			}
			last = l[1]
		}
		b.WriteString(s[last:])
		s = b.String()
	}
	s = parenDataImage.ReplaceAllLiteralString(s, "[IMAGE]")
	return bareDataImage.ReplaceAllLiteralString(s, "[IMAGE]")
}

// IsPySpace reports whether r is whitespace for Python's str.strip() and
// str.split() (Unicode spaces, U+001C–U+001F included). The spec's rules are
// written against Python, so trimming and splitting follow it exactly.
func IsPySpace(r rune) bool {
	switch {
	case r == ' ' || (r >= '\t' && r <= '\r') || (r >= 0x1c && r <= 0x1f) || r == 0x85 || r == 0xa0:
		return true
	case r == 0x1680 || (r >= 0x2000 && r <= 0x200a) || r == 0x2028 || r == 0x2029 || r == 0x202f || r == 0x205f || r == 0x3000:
		return true
	}
	return false
}
