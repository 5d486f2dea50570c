package principal

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"os"
	"strings"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
)

// Tokens is a set of principals, each named by a NAME and known by the
// SHA-256 of its bearer token (the --tokens file). The zero value and nil
// hold none. Tokens never holds a token itself, only its hash.
type Tokens struct {
	entries []tokenEntry
}

type tokenEntry struct {
	name string
	sum  [sha256.Size]byte
}

// nameRe is a principal name: 1 to 64 letters, digits, '.', '_' or '-',
// starting with a letter or digit (it appears in audit lines and task ids,
// never in metric labels).
var nameRe = lazyregexp.New(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ReadTokensFile reads a --tokens file: one principal per line,
//
//	NAME:SHA256-HEX-OF-TOKEN
//
// where NAME matches [A-Za-z0-9][A-Za-z0-9._-]{0,63} and the hash is the 64
// hex digits of SHA-256 over the token's bytes (make one with
// `printf %s "$TOKEN" | sha256sum`). Blank lines and lines starting with '#'
// (after leading blanks) are skipped; blanks around NAME and the hash are
// trimmed. Errors, each naming the file and, for a bad line, its 1-based
// line number: the file cannot be read or is not a regular file; it is
// readable or writable by group or others (mode & 0o077 != 0: the hashes
// let anyone who reads them try tokens offline; chmod 600); a line that is
// not NAME:HASH; a name used twice; a hash used twice (two principals with
// one token could not be told apart); no principal at all.
func ReadTokensFile(path string) (*Tokens, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--tokens %s: %v", path, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("--tokens %s: %v", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("--tokens %s: not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("--tokens %s: mode %04o lets group or others read or change it; run chmod 600 %s (the token hashes would let anyone who reads them guess tokens offline)", path, perm, path)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(f); err != nil {
		return nil, fmt.Errorf("--tokens %s: %v", path, err)
	}
	t, err := ParseTokens(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("--tokens %s: %v", path, err)
	}
	return t, nil
}

// ParseTokens parses the text of a tokens file (see ReadTokensFile for the
// format and the errors, which name the line as "line N: …").
func ParseTokens(data []byte) (*Tokens, error) {
	t := &Tokens{}
	names := map[string]int{}
	sums := map[[sha256.Size]byte]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, hexSum, ok := strings.Cut(line, ":")
		name, hexSum = strings.TrimSpace(name), strings.TrimSpace(hexSum)
		if !ok {
			return nil, fmt.Errorf("line %d: want NAME:SHA256-HEX-OF-TOKEN (make the hash with: printf %%s \"$TOKEN\" | sha256sum)", n)
		}
		if !nameRe.MatchString(name) {
			return nil, fmt.Errorf("line %d: the name %q is not 1 to 64 letters, digits, '.', '_' or '-' starting with a letter or digit", n, name)
		}
		if strings.EqualFold(name, Default) {
			// The CLI, stdio and a tokenless loopback server act as Default:
			// a named caller must never share their stored pages.
			return nil, fmt.Errorf("line %d: the name %q is reserved (the principal of the CLI, stdio and the one-token form); choose another name", n, name)
		}
		raw, err := hex.DecodeString(hexSum)
		if err != nil || len(raw) != sha256.Size {
			return nil, fmt.Errorf("line %d: the hash of %q is not 64 hex digits (a SHA-256; make it with: printf %%s \"$TOKEN\" | sha256sum)", n, name)
		}
		var sum [sha256.Size]byte
		copy(sum[:], raw)
		if prev, dup := names[name]; dup {
			return nil, fmt.Errorf("line %d: the name %q is already used on line %d; each principal appears once", n, name, prev)
		}
		if prev, dup := sums[sum]; dup {
			return nil, fmt.Errorf("line %d: the hash is already used on line %d; give each principal its own token", n, prev)
		}
		names[name], sums[sum] = n, n
		t.entries = append(t.entries, tokenEntry{name: name, sum: sum})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", n+1, err)
	}
	if len(t.entries) == 0 {
		return nil, fmt.Errorf("no principal: add one NAME:SHA256-HEX-OF-TOKEN line")
	}
	return t, nil
}

// SingleToken returns the one-principal set of the --token /
// GATEHOUSE_MCP_TOKEN form: token, known as Default.
func SingleToken(token string) *Tokens {
	return &Tokens{entries: []tokenEntry{{name: Default, sum: sha256.Sum256([]byte(token))}}}
}

// Len returns the number of principals.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.entries)
}

// Names returns the principal names in file order.
func (t *Tokens) Names() []string {
	if t == nil {
		return nil
	}
	out := make([]string, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.name
	}
	return out
}

// constantTimeCompare is subtle.ConstantTimeCompare (a variable so a test
// can count that Lookup compares with every entry).
var constantTimeCompare = subtle.ConstantTimeCompare

// Lookup returns the principal whose token is token. It hashes token once
// and compares the hash with every entry's in constant time
// (crypto/subtle), visiting all entries whatever matches, so the time taken
// tells nothing about which principal, or which prefix of a hash, matched.
func (t *Tokens) Lookup(token string) (name string, ok bool) {
	if t == nil {
		return "", false
	}
	sum := sha256.Sum256([]byte(token))
	match := -1
	for i := range t.entries {
		eq := constantTimeCompare(sum[:], t.entries[i].sum[:])
		match = subtle.ConstantTimeSelect(eq, i, match)
	}
	if match < 0 {
		return "", false
	}
	return t.entries[match].name, true
}
