package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// Warning reports a config or .env entry that was ignored, defaulted or
// adjusted. File is the file's path; Line and Column are 1-based (0 when
// unknown); Key is the dotted key (or the .env variable name) when known.
type Warning struct {
	File         string
	Line, Column int
	Key, Message string
}

// String formats w as "file:line:col: key: message", leaving out the parts
// that are unknown.
func (w Warning) String() string {
	var b strings.Builder
	if w.File != "" {
		b.WriteString(w.File)
		if w.Line > 0 {
			fmt.Fprintf(&b, ":%d", w.Line)
			if w.Column > 0 {
				fmt.Fprintf(&b, ":%d", w.Column)
			}
		}
		b.WriteString(": ")
	}
	if w.Key != "" {
		b.WriteString(w.Key)
		b.WriteString(": ")
	}
	b.WriteString(w.Message)
	return b.String()
}

// SyntaxError is returned by [Load], [Get] and [Set] when config.yaml is not
// valid YAML. Its text is "file:line:col: message" (the position is 0:0 when
// the parser gave none).
type SyntaxError struct {
	File         string
	Line, Column int
	Message      string
	Err          error // the goccy/go-yaml error
}

// Error returns "file:line:col: message" on one line.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Message)
}

// Unwrap returns the underlying goccy/go-yaml error (nil when the parser
// panicked and there is none).
func (e *SyntaxError) Unwrap() error { return e.Err }

// Load reads <home>/config.yaml and returns the complete configuration and
// the warnings met on the way.
//
//   - A missing file (or missing home) gives [Default] and no error.
//   - Invalid YAML (including a duplicate key) gives a *[SyntaxError] naming
//     file:line:col, and a nil Config.
//   - A problem that would silently weaken the website policy (anything
//     wrong inside security.website_blocklist, a security block that is not
//     a mapping, a security key in the wrong place) gives a *[KeyError] and a
//     nil Config: the tools fail closed on it ([Invalid]).
//   - Otherwise an unknown key, or a block that is not a mapping, gives a
//     Warning with its line and column; the key is ignored.
//   - A value of the wrong type for a known key gives a Warning and that key
//     keeps its default; the other keys still apply. An out-of-range number is
//     clamped with a Warning. A null value means "default" silently.
//   - Only the first YAML document is read; more give a Warning, and a
//     *[KeyError] when a later one holds a security key (it would be
//     dropped, blocklist included).
//   - A file over 1 MiB, or one that cannot be read, is an error.
//
// Blocklist shared_files are resolved against home (spec §A8). When
// security.allow_private_urls is absent, the legacy browser.allow_private_urls
// is honoured (spec §A6.5) with a Warning. Load reads no environment variable.
// It is safe for concurrent use.
func Load(home string) (*Config, []Warning, error) {
	path := Path(home)
	data, err := readLimited(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	return parseConfig(path, home, data)
}

// utf8BOM is the UTF-8 encoding of U+FEFF, the byte-order mark.
var utf8BOM = []byte("\xef\xbb\xbf")

// readLimited reads a settings file, refusing one larger than maxFileBytes.
// A UTF-8 byte-order mark at the start is dropped (YAML 1.2 §5.2 allows one
// at the start of a stream; Notepad writes one), so every reader of
// config.yaml (Load, doctor, `gatehouse config set`, which writes the file
// back without it) and of .env sees the same text; breaker6 D7.
func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("config: read %s: %w", path, err)
	}
	if len(data) > maxFileBytes {
		return nil, fmt.Errorf("config: %s is larger than %d bytes; refusing to parse it", path, maxFileBytes)
	}
	return bytes.TrimPrefix(data, utf8BOM), nil
}

// parseYAML parses data, turning a parser error into a *SyntaxError. The
// parser can panic on some malformed inputs; that becomes a SyntaxError too.
func parseYAML(path string, data []byte, mode parser.Mode) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, &SyntaxError{File: path, Message: fmt.Sprintf("cannot parse YAML (%v)", r)}
		}
	}()
	f, err = parser.ParseBytes(data, mode)
	if err != nil {
		return nil, syntaxError(path, err)
	}
	return f, nil
}

func syntaxError(path string, err error) *SyntaxError {
	se := &SyntaxError{File: path, Message: err.Error(), Err: err}
	var ye yaml.Error
	if errors.As(err, &ye) {
		se.Message = ye.GetMessage()
		if tk := ye.GetToken(); tk != nil && tk.Position != nil {
			se.Line, se.Column = tk.Position.Line, tk.Position.Column
		}
	}
	// The parser's own text can carry an annotated source excerpt; keep the
	// first line only.
	if i := strings.IndexByte(se.Message, '\n'); i >= 0 {
		se.Message = se.Message[:i]
	}
	return se
}

// parseConfig decodes data (the contents of path) into a Config.
func parseConfig(path, home string, data []byte) (*Config, []Warning, error) {
	f, err := parseYAML(path, data, 0)
	if err != nil {
		return nil, nil, err
	}
	l := &loader{file: path, home: home, cfg: Default(), seen: map[string]bool{}, mergeBudget: maxMergeNodes}
	l.collectAnchors(f)
	var body ast.Node
	docs := 0
	for _, d := range f.Docs {
		if d == nil || isEmptyNode(d.Body) {
			continue
		}
		docs++
		if docs == 1 {
			body = d.Body
		} else {
			l.warnAt(d.Body, "", "only the first YAML document is read; this one is ignored")
			if k := securityKeyIn(d.Body); k != nil {
				line, col := nodePos(k)
				l.fail(line, col, keyText(k), "this security key is in a later YAML document, which is never read (only the first document is)",
					"Move it into the first document (delete the '---' line above it).")
			}
		}
	}
	if body != nil {
		l.block(schema, "", body, 0)
	}
	if l.mergeBudget < 0 {
		l.warnAt(body, "", errTooComplex.Error()+"; some merged keys were not read")
	}
	l.finish()
	if l.fatal != nil {
		kept := l.warns[:0]
		for _, w := range l.warns {
			if !l.failedKeys[orTop(w.Key)] && !l.failedKeys[w.Key] {
				kept = append(kept, w)
			}
		}
		return nil, kept, l.fatal
	}
	return l.cfg, l.warns, nil
}

// looksLikeBlocklist reports whether an unknown key under security is
// probably a misspelt website_blocklist (ignoring it would silently leave the
// blocklist off): its name, case-folded with '-', '.' and ' ' read as '_',
// mentions a block/black list, or its value is a mapping holding one of the
// blocklist's keys (enabled, domains, shared_files). Unrelated keys of the
// described system (tirith_enabled: true, …) stay warnings.
func (l *loader) looksLikeBlocklist(name string, value ast.Node) bool {
	n := strings.NewReplacer("-", "_", ".", "_", " ", "_").Replace(strings.ToLower(name))
	n = strings.ReplaceAll(n, "_", "")
	if strings.Contains(n, "blocklist") || strings.Contains(n, "blacklist") || strings.Contains(n, "denylist") {
		return true
	}
	es, ok := l.entries(l.deref(value), 0)
	if !ok {
		return false
	}
	for _, e := range es {
		switch e.key {
		case "enabled", "domains", "shared_files":
			return true
		}
	}
	return false
}

// securityKeyIn returns the first mapping key anywhere in n that names a
// security setting (securityHome: security, website_blocklist, domains,
// shared_files, …), or nil.
func securityKeyIn(n ast.Node) (found ast.MapKeyNode) {
	ast.Walk(keyVisitor(func(k ast.MapKeyNode) bool {
		if found != nil {
			return false
		}
		if securityHome(keyText(k)) != "" || meantAsSecurity(keyText(k)) != "" {
			found = k
			return false
		}
		return true
	}), n)
	return found
}

// keyVisitor calls f on every mapping key until f returns false.
type keyVisitor func(ast.MapKeyNode) bool

func (v keyVisitor) Visit(n ast.Node) ast.Visitor {
	if mv, ok := n.(*ast.MappingValueNode); ok && mv.Key != nil && !v(mv.Key) {
		return nil
	}
	return v
}

// maxDepth bounds recursion over nested YAML (mappings, sequences, aliases).
const maxDepth = 64

// Alias-bomb bounds. maxLeafNodes caps the nodes one key's value may expand
// to through aliases; maxMergeNodes caps the entries pulled in by "<<" merge
// keys over a whole load; maxDocNodes caps a whole-document decode (Set's
// verification). The work of a load is linear in these.
const (
	maxLeafNodes  = 20000
	maxMergeNodes = 20000
	maxDocNodes   = 200000
)

type loader struct {
	file    string
	home    string
	cfg     *Config
	warns   []Warning
	anchors map[string]ast.Node
	seen    map[string]bool // leaf keys given a non-null value
	budget  int             // nodes the current value may still expand to
	// mergeBudget is the number of entries merge keys may still pull in.
	mergeBudget int
	// fatal is the first problem that makes the file fail closed (KeyError).
	fatal *KeyError
	// failedKeys are the keys of every fail-closed problem: their warnings
	// are dropped when the load fails (the refusal says what is wrong).
	failedKeys map[string]bool
}

// pos returns the 1-based line and column of n (0, 0 when unknown).
func nodePos(n ast.Node) (int, int) {
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			return tk.Position.Line, tk.Position.Column
		}
	}
	return 0, 0
}

// errTooComplex is reported once the node budget is spent.
var errTooComplex = errors.New("the YAML expands to too many nodes (aliases or merge keys nested too deeply)")

// spend takes one node from the value budget and reports whether any was
// left.
func (l *loader) spend() bool {
	l.budget--
	return l.budget >= 0
}

// spendMerge takes one entry from the merge budget.
func (l *loader) spendMerge() bool {
	l.mergeBudget--
	return l.mergeBudget >= 0
}

func (l *loader) warnAt(n ast.Node, key, msg string) {
	w := Warning{File: l.file, Key: key, Message: msg}
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			w.Line, w.Column = tk.Position.Line, tk.Position.Column
		}
	}
	l.warns = append(l.warns, w)
}

// collectAnchors records every anchor in document order (a later anchor of
// the same name wins for later aliases, which is close enough for a config).
func (l *loader) collectAnchors(f *ast.File) {
	l.anchors = map[string]ast.Node{}
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		ast.Walk(anchorVisitor(l.anchors), d.Body)
	}
}

type anchorVisitor map[string]ast.Node

func (v anchorVisitor) Visit(n ast.Node) ast.Visitor {
	if a, ok := n.(*ast.AnchorNode); ok && a.Name != nil && a.Value != nil {
		if tk := a.Name.GetToken(); tk != nil {
			v[tk.Value] = a.Value
		}
	}
	return v
}

// deref strips anchors and tags and follows aliases (bounded).
func (l *loader) deref(n ast.Node) ast.Node {
	for range maxDepth {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.AliasNode:
			if x.Value == nil || x.Value.GetToken() == nil {
				return nil
			}
			t, ok := l.anchors[x.Value.GetToken().Value]
			if !ok {
				return nil
			}
			n = t
		case *ast.TagNode:
			if isScalarTag(x) {
				return n
			}
			n = x.Value
		default:
			return n
		}
	}
	return nil
}

func isScalarTag(t *ast.TagNode) bool {
	_, ok := t.Value.(ast.ScalarNode)
	return ok
}

func isEmptyNode(n ast.Node) bool {
	switch n.(type) {
	case nil, *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		return true
	}
	return false
}

// entry is one key/value pair of a mapping after merge-key expansion.
type entry struct {
	key   string
	keyN  ast.Node
	value ast.Node
}

// entries lists a mapping's pairs with "<<" merge keys expanded (YAML merge
// semantics: explicit keys win over merged ones, and an earlier merge source
// wins over a later one). Each key appears once. ok is false when n is not a
// mapping.
func (l *loader) entries(n ast.Node, depth int) (es []entry, ok bool) {
	var values []*ast.MappingValueNode
	switch x := n.(type) {
	case *ast.MappingNode:
		values = x.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{x}
	default:
		return nil, false
	}
	have := map[string]bool{}
	var merges []*ast.MappingValueNode
	for _, mv := range values {
		if mv == nil || mv.Key == nil || (depth > 0 && !l.spendMerge()) {
			continue
		}
		if mv.Key.IsMergeKey() {
			merges = append(merges, mv)
			continue
		}
		e := entry{key: keyText(mv.Key), keyN: mv.Key, value: mv.Value}
		if !have[e.key] {
			have[e.key] = true
			es = append(es, e)
		}
	}
	for _, mv := range merges {
		if depth >= maxDepth {
			break
		}
		src := l.deref(mv.Value)
		srcs := []ast.Node{src}
		if seq, isSeq := src.(*ast.SequenceNode); isSeq {
			srcs = srcs[:0]
			for _, s := range seq.Values {
				srcs = append(srcs, l.deref(s))
			}
		}
		for _, s := range srcs {
			sub, isMap := l.entries(s, depth+1)
			if !isMap {
				l.warnAt(mv.Key, "", "merge key (<<) must refer to a mapping; ignored")
				continue
			}
			for _, e := range sub {
				if !have[e.key] {
					have[e.key] = true
					es = append(es, e)
				}
			}
		}
	}
	return es, true
}

func keyText(k ast.MapKeyNode) string {
	if s, ok := k.(ast.ScalarNode); ok {
		if v := s.GetValue(); v != nil {
			if str, ok := v.(string); ok {
				return str
			}
			return fmt.Sprint(v)
		}
	}
	if tk := k.GetToken(); tk != nil {
		return tk.Value
	}
	return k.String()
}

// block applies a mapping node to the block f.
func (l *loader) block(f *field, prefix string, n ast.Node, depth int) {
	where := prefix
	if where == "" {
		where = "the top level"
	}
	d := l.deref(n)
	if isEmptyNode(d) {
		return
	}
	es, ok := l.entries(d, depth)
	if !ok {
		msg := fmt.Sprintf("must be a mapping (valid keys: %s); ignored", strings.Join(f.childNames(), ", "))
		if prefix == "" {
			msg = "the top level " + msg
		}
		l.warnAt(n, prefix, msg)
		if guardKey(prefix) || prefix == "" {
			line, col := nodePos(n)
			what := prefix
			if what == "" {
				what = "the top level"
			}
			l.fail(line, col, orTop(prefix), what+" must be a mapping", fmt.Sprintf("Write it as a mapping of keys (valid keys: %s).", strings.Join(f.childNames(), ", ")))
		}
		return
	}
	for _, e := range es {
		key := joinKey(prefix, e.key)
		ch := f.child(e.key)
		if ch == nil {
			l.warnAt(e.keyN, key, fmt.Sprintf("unknown key ignored (valid keys in %s: %s)", where, strings.Join(f.childNames(), ", ")))
			line, col := nodePos(e.keyN)
			if home := securityHome(e.key); home != "" {
				l.fail(line, col, key, "this security key is in the wrong place and would be ignored", "Move it to "+home+".")
			} else if prefix == "security.website_blocklist" {
				l.fail(line, col, key, "unknown key; it would be ignored", fmt.Sprintf("Use one of the keys of %s: %s.", prefix, strings.Join(f.childNames(), ", ")))
			} else if prefix == "security" && l.looksLikeBlocklist(e.key, e.value) {
				l.fail(line, col, key, "unknown key that looks like a misspelt website_blocklist; it would be ignored and leave the blocklist off",
					"Rename it to website_blocklist (security.website_blocklist).")
			} else {
				l.failMeantAsSecurity(prefix, e.key, key, e.keyN, e.value)
			}
			continue
		}
		if ch.isBlock() {
			if depth+1 < maxDepth {
				l.block(ch, key, e.value, depth+1)
			}
			continue
		}
		l.budget = maxLeafNodes
		v, err := l.value(e.value, 0)
		if err != nil {
			l.warnAt(e.value, key, err.Error()+"; keeping the default")
			if guardKey(key) {
				line, col := nodePos(e.value)
				l.fail(line, col, key, err.Error(), "Fix the value (expected "+ch.typ+").")
			}
			continue
		}
		if v == nil {
			continue // null means default
		}
		l.seen[key] = true
		if pr := ch.set(l.cfg, v, l.home); pr != nil {
			l.warnAt(e.value, key, pr.warning())
			if guardKey(key) {
				line, col := nodePos(e.value)
				l.fail(line, col, key, pr.msg, "Fix the value (expected "+ch.typ+").")
			}
		}
	}
}

// value converts a value node to a generic Go value: nil, bool, int64,
// uint64, float64, string, []any or map[string]any.
func (l *loader) value(n ast.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, errors.New("value nested too deeply")
	}
	if !l.spend() {
		return nil, errTooComplex
	}
	if n == nil {
		return nil, nil
	}
	if t, ok := n.(*ast.TagNode); ok && isScalarTag(t) {
		return tagged(t)
	}
	d := l.deref(n)
	if d == nil {
		if _, isAlias := n.(*ast.AliasNode); isAlias {
			return nil, errors.New("alias refers to an unknown anchor")
		}
		return nil, nil
	}
	if d != n {
		return l.value(d, depth+1)
	}
	switch x := n.(type) {
	case *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		return nil, nil
	case *ast.NanNode:
		return nil, errors.New("NaN is not a usable value")
	case *ast.LiteralNode:
		if x.Value == nil {
			return "", nil
		}
		return x.Value.Value, nil
	case ast.ScalarNode:
		return x.GetValue(), nil
	case *ast.SequenceNode:
		out := make([]any, 0, len(x.Values))
		for _, it := range x.Values {
			v, err := l.value(it, depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case *ast.MappingNode, *ast.MappingValueNode:
		es, _ := l.entries(x, depth)
		out := make(map[string]any, len(es))
		for _, e := range es {
			v, err := l.value(e.value, depth+1)
			if err != nil {
				return nil, err
			}
			out[e.key] = v
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported YAML node %s", n.Type())
}

// tagged decodes a scalar with an explicit tag: !!str keeps the text as a
// string; other standard tags re-type it; unknown tags keep the plain value.
func tagged(t *ast.TagNode) (any, error) {
	sc := t.Value.(ast.ScalarNode)
	text := ""
	if tk := sc.GetToken(); tk != nil {
		text = tk.Value
	}
	tag := ""
	if t.Start != nil {
		tag = t.Start.Value
	}
	switch tag {
	case "!!str", "!str", "tag:yaml.org,2002:str":
		if s, ok := sc.GetValue().(string); ok {
			return s, nil
		}
		return text, nil
	case "!!int", "tag:yaml.org,2002:int":
		n, err := strconv.ParseInt(strings.TrimSpace(text), 0, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer", text)
		}
		return n, nil
	case "!!float", "tag:yaml.org,2002:float":
		f, ok := floatFromString(text)
		if !ok {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		return f, nil
	case "!!bool", "tag:yaml.org,2002:bool":
		b, ok := boolValue(text)
		if !ok {
			return nil, fmt.Errorf("%q is not a boolean", text)
		}
		return b, nil
	case "!!null", "tag:yaml.org,2002:null":
		return nil, nil
	}
	if _, isNull := sc.(*ast.NullNode); isNull {
		return nil, nil
	}
	return sc.GetValue(), nil
}

// LegacyAllowPrivateWarning is the Warning for a file whose legacy
// browser.allow_private_urls: true applies (security.allow_private_urls
// absent): spec §A6.5 reads it as security.allow_private_urls, the one
// toggle of every tool, so it opens more than the browser (breaker7 D16).
const LegacyAllowPrivateWarning = "legacy key read as security.allow_private_urls: true, which allows private and internal addresses (loopback, LAN, 198.18.0.0/15, …; never cloud metadata) for every tool — web_extract (rendering included), web_check, the browser tools and their CLI commands — not only the browser; " +
	"move it: delete browser.allow_private_urls from config.yaml and run `gatehouse config set security.allow_private_urls true` (or delete it to keep private addresses refused)"

// finish applies cross-key rules after the walk.
func (l *loader) finish() {
	c := l.cfg
	// spec §A6.5: security.allow_private_urls, else legacy browser.allow_private_urls.
	if !l.seen["security.allow_private_urls"] && c.Browser.AllowPrivateURLs {
		c.Security.AllowPrivateURLs = true
		l.warns = append(l.warns, Warning{File: l.file, Key: "browser.allow_private_urls",
			Message: LegacyAllowPrivateWarning})
	}
}

func orTop(key string) string {
	if key == "" {
		return "(top level)"
	}
	return key
}
