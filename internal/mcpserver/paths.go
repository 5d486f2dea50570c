package mcpserver

import (
	"encoding/json"
	"path/filepath"
	"strings"
)

// HomePlaceholder is what an MCP client sees in place of the server's
// Gatehouse home directory: the environment variable that names it.
const HomePlaceholder = "$GATEHOUSE_HOME"

// pathHider rewrites the server's home directory, wherever a message or a
// result names a file under it, to HomePlaceholder. An MCP client usually
// runs elsewhere and cannot use such a path, and it tells the client the
// server's user name and disk layout (issue 16 item 4). Tools already give
// MCP clients store names rather than paths (meta.stored_path, the
// truncation footer, a truncated snapshot's note); this is the one place
// that guarantees it for every other string: refusal messages that name a
// file (config_invalid, a store directory error), downloads[].path and
// screenshot_path (shown as $GATEHOUSE_HOME/downloads/…), JSON-RPC errors.
//
// A match must be a whole path prefix: the character before it cannot
// continue a path or URL (so https://host/root/.gatehouse is untouched) and
// the one after it must end the home's last component. A zero pathHider
// (no home known) changes nothing.
type pathHider struct {
	forms []string // the home as written, its symlink-resolved form, and their JSON-escaped forms
}

// newPathHider returns the hider of home ("" for none).
func newPathHider(home string) pathHider {
	var h pathHider
	if home == "" {
		return h
	}
	abs, err := filepath.Abs(home)
	if err != nil {
		return h
	}
	cands := []string{filepath.Clean(abs)}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != cands[0] {
		cands = append(cands, real)
	}
	seen := map[string]bool{}
	for _, c := range cands {
		if c == "/" || c == "" || c == "." {
			continue // a root home would match every absolute path
		}
		b, _ := json.Marshal(c)
		for _, f := range []string{c, strings.Trim(string(b), `"`)} {
			if !seen[f] {
				seen[f] = true
				h.forms = append(h.forms, f)
			}
		}
	}
	// Longest first, so a home and its longer resolved form never leave a
	// tail behind.
	for i := range h.forms {
		for j := i + 1; j < len(h.forms); j++ {
			if len(h.forms[j]) > len(h.forms[i]) {
				h.forms[i], h.forms[j] = h.forms[j], h.forms[i]
			}
		}
	}
	return h
}

// hide returns s with every whole occurrence of the home replaced by
// HomePlaceholder.
func (h pathHider) hide(s string) string {
	for _, f := range h.forms {
		if !strings.Contains(s, f) {
			continue
		}
		var b strings.Builder
		rest := s
		for {
			i := strings.Index(rest, f)
			if i < 0 {
				b.WriteString(rest)
				break
			}
			end := i + len(f)
			prev := rest[:i] // what stands before the match: its last 7 bytes suffice
			if i < len("file://") {
				done := b.String()
				prev = done[max(0, len(done)-len("file://")):] + prev
			}
			prevOK := !endsInPathChar(prev) || strings.HasSuffix(prev, "file://") || jsonEscaped(prev)
			nextOK := end == len(rest) || !nameChar(rest[end])
			if prevOK && nextOK {
				b.WriteString(rest[:i])
				b.WriteString(HomePlaceholder)
			} else {
				b.WriteString(rest[:end])
			}
			rest = rest[end:]
		}
		s = b.String()
	}
	return s
}

// jsonEscaped reports whether s ends with a JSON escape of one character
// (\n, \t, \"): in JSON text a path after a newline follows "\n".
func jsonEscaped(s string) bool { return len(s) >= 2 && s[len(s)-2] == '\\' }

// endsInPathChar reports whether s ends with a character that continues a
// path or URL.
func endsInPathChar(s string) bool { return s != "" && pathChar(s[len(s)-1]) }

// nameChar reports whether c can continue a file name component.
func nameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == '~' || c >= 0x80
}

// pathChar reports whether c can stand before an absolute path inside a
// longer path or URL (a name character, "/", "%", ":" as in a scheme or
// port, "@").
func pathChar(c byte) bool { return nameChar(c) || c == '/' || c == '%' || c == ':' || c == '@' }
