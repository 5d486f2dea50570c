package config

import (
	"fmt"
	"strings"

	"github.com/goccy/go-yaml/ast"
)

// securityNames maps the normalised name (normKey) of the security block
// and of each of its settings to the key as written in config.yaml.
var securityNames = map[string]string{
	"security":         "security",
	"websiteblocklist": "website_blocklist",
	"allowprivateurls": "allow_private_urls",
	"fakeipranges":     "fake_ip_ranges",
	"redactsecrets":    "redact_secrets",
	"domains":          "domains",
	"sharedfiles":      "shared_files",
}

// securityPath is where each security key of securityNames lives.
var securityPath = map[string]string{
	"security":           "security",
	"website_blocklist":  "security.website_blocklist",
	"allow_private_urls": "security.allow_private_urls",
	"fake_ip_ranges":     "security.fake_ip_ranges",
	"redact_secrets":     "security.redact_secrets",
	"domains":            "security.website_blocklist.domains",
	"shared_files":       "security.website_blocklist.shared_files",
}

// normKey folds a key name for comparison: lower case, with '_', '-', '.'
// and ' ' removed ("Website-Blocklist" and "websiteblocklist" are the same).
func normKey(name string) string {
	return strings.NewReplacer("_", "", "-", "", ".", "", " ", "").Replace(strings.ToLower(name))
}

// meantAsSecurity returns the security key (as written in config.yaml) that
// an unknown key name was probably meant as, or "": the same name in other
// case or separators ("Security", "SECURITY", "Fake-IP-Ranges"), or, for the
// two keys whose loss switches the website blocklist off (security and
// website_blocklist), a spelling within two edits of it ("securty",
// "secuirty", "websiteblocklst"). Key names in config.yaml are
// case-sensitive, so such a key would otherwise be ignored with a warning.
func meantAsSecurity(name string) string {
	n := normKey(name)
	if k, ok := securityNames[n]; ok {
		return k
	}
	for _, k := range []string{"security", "websiteblocklist"} {
		if len(n) >= len(k)-2 && editDistance(n, k, 2) <= 2 {
			return securityNames[k]
		}
	}
	return ""
}

// editDistance is the Levenshtein distance between a and b (bytes), or
// max+1 once it is known to exceed max.
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c = 1 + min(c, prev[j], cur[j-1])
			}
			cur[j] = c
			low = min(low, c)
		}
		if low > max {
			return max + 1
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// guardedSettingIn returns the first mapping key anywhere in n that names
// (meantAsSecurity) the security block or a setting whose loss weakens the
// SSRF filter or the website blocklist (website_blocklist,
// allow_private_urls, fake_ip_ranges), or nil. Under an unknown key such a
// setting would be ignored.
func guardedSettingIn(n ast.Node) (found ast.MapKeyNode, meant string) {
	ast.Walk(keyVisitor(func(k ast.MapKeyNode) bool {
		if found != nil {
			return false
		}
		switch m := meantAsSecurity(keyText(k)); m {
		case "security", "website_blocklist", "allow_private_urls", "fake_ip_ranges":
			found, meant = k, m
			return false
		}
		return true
	}), n)
	return found, meant
}

// failMeantAsSecurity fails the load when the unknown key at key (named
// name, holding value) could have been meant as a security setting:
// meantAsSecurity of its name, or a guarded setting inside it. It reports
// whether it did.
func (l *loader) failMeantAsSecurity(prefix, name, key string, keyN, value ast.Node) bool {
	line, col := nodePos(keyN)
	if m := meantAsSecurity(name); m != "" {
		fix := "Move it to " + securityPath[m] + "."
		if joinKey(prefix, m) == securityPath[m] {
			fix = "Rename it to " + m + " (key names are case-sensitive)."
		}
		l.fail(line, col, key, "unknown key that looks like "+securityPath[m]+" written differently; it would be ignored", fix)
		return true
	}
	if k, m := guardedSettingIn(value); k != nil {
		kl, kc := nodePos(k)
		l.fail(line, col, key, fmt.Sprintf("unknown key holding the security setting %s (line %d:%d), which would be ignored with it", keyText(k), kl, kc),
			"Move "+m+" to "+securityPath[m]+".")
		return true
	}
	return false
}
