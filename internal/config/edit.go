package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// keyRef is a resolved dotted key: a schema node plus, for an entry of a map
// leaf (web.provider_tier.exa), the entry name.
type keyRef struct {
	f      *field
	path   []string // schema path (no entry)
	entry  string
	hasEnt bool
}

// resolveKey looks a dotted key up in the key table. "" is the root.
func resolveKey(key string) (keyRef, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return keyRef{f: schema}, nil
	}
	segs := strings.Split(key, ".")
	cur := schema
	var path []string
	for i, seg := range segs {
		if !cur.isBlock() {
			if cur.mapLeaf {
				return keyRef{f: cur, path: path, entry: strings.Join(segs[i:], "."), hasEnt: true}, nil
			}
			return keyRef{}, reason.Newf(reason.ConfigUnknownKey, "", "%s is a %s, not a block; it has no key %q", strings.Join(path, "."), cur.typ, seg)
		}
		ch := cur.child(seg)
		if ch == nil {
			if cur == schema {
				return keyRef{}, reason.Newf(reason.ConfigUnknownKey, "", "unknown key %q; valid top-level keys: %s", key, strings.Join(cur.childNames(), ", "))
			}
			return keyRef{}, reason.Newf(reason.ConfigUnknownKey, "", "unknown key %q; valid keys in %s: %s", key, strings.Join(path, "."), strings.Join(cur.childNames(), ", "))
		}
		path = append(path, seg)
		if ch.successor != "" {
			return keyRef{}, reason.Newf(reason.ConfigUnknownKey, "", "%s is a legacy key that Load only honours, with a warning, in existing files; get and set %s instead (it governs the browser too)", strings.Join(path, "."), ch.successor)
		}
		cur = ch
	}
	return keyRef{f: cur, path: path}, nil
}

// Get returns the YAML text of the merged value (defaults overlaid with
// <home>/config.yaml, after clamping) of a dotted key: a leaf
// ("web.backend" → "exa"), a block ("browser" → every browser key, in
// file order), an entry of a map key ("web.provider_tier.exa"), or "" for
// the whole configuration. Durations print as seconds. The text has no
// trailing newline.
//
// Every error is a *reason.Error: an unknown key lists the valid keys at
// that level (the top-level keys for an unknown first segment), and a map
// entry that is not set is an error too (config_unknown_key); a file
// [Load] refuses is config_invalid ([Invalid]: file, line:column, fix),
// with Load's *[SyntaxError] or *[KeyError] as its cause. Load's warnings
// are dropped (call Load to show them).
func Get(home, key string) (string, error) {
	v, err := mergedValue(home, key)
	if err != nil {
		return "", err
	}
	return marshalValue(v)
}

// mergedValue returns the merged value of a dotted key as render gives it
// (yaml.MapSlice, slices, scalars), for Get and GetJSON; errors as Get's.
func mergedValue(home, key string) (any, error) {
	ref, err := resolveKey(key)
	if err != nil {
		return nil, err
	}
	cfg, _, err := Load(home)
	if err != nil {
		return nil, Invalid(Path(home), err)
	}
	v := ref.f.render(cfg)
	if !ref.hasEnt {
		return v, nil
	}
	for _, it := range v.(yaml.MapSlice) {
		if it.Key == ref.entry {
			return it.Value, nil
		}
	}
	return nil, reason.Newf(reason.ConfigUnknownKey, "", "%s has no entry %q", strings.Join(ref.path, "."), ref.entry)
}

// GetJSON is Get with the value as JSON: a block is an object whose keys
// keep the file's order, a list an array, a scalar a JSON scalar.
func GetJSON(home, key string) (json.RawMessage, error) {
	v, err := mergedValue(home, key)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return nil, fmt.Errorf("config: render: %w", err)
	}
	return b.Bytes(), nil
}

// writeJSON writes v (as render gives it: yaml.MapSlice, slices, scalars)
// as JSON, map keys in order.
func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case yaml.MapSlice:
		b.WriteByte('{')
		for i, it := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			k, err := json.Marshal(fmt.Sprint(it.Key))
			if err != nil {
				return err
			}
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, it.Value); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	}
	if rv := reflect.ValueOf(v); v != nil && rv.Kind() == reflect.Slice {
		b.WriteByte('[')
		for i := 0; i < rv.Len(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, rv.Index(i).Interface()); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(j)
	return nil
}

func marshalValue(v any) (string, error) {
	b, err := yaml.MarshalWithOptions(v, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return "", fmt.Errorf("config: render: %w", err)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// Set writes value at the dotted key in <home>/config.yaml.
//
// The value is read as YAML (so "true", "30", "2.5" and "[a, b]" get their
// types), except for string keys, where the text is taken literally unless
// it is quoted ("'30'"). Set refuses, with an error naming the expected
// type, an unknown key, a block key (set its leaves instead), an empty value
// for a non-string key, and any value that [Load] would warn about (wrong
// type, out of range, unknown enum value), so the file only ever receives
// values that load cleanly; a legacy key (browser.allow_private_urls) is
// refused in favour of its successor, as Get refuses it. Entries of map keys are set as key.<entry>
// ("web.provider_tier.exa free").
//
// The file is edited through the goccy/go-yaml AST, so other keys, comments
// (own-line and inline) and their order survive; missing blocks are created;
// a flow-style block stays flow-style. The result is re-parsed and compared
// with the intended data before anything is written; a mismatch is an error
// and the file is left alone. An invalid existing file is not touched.
//
// Every error is a *reason.Error: config_unknown_key (unknown, legacy or
// block key), config_bad_value (a value the key does not take),
// config_invalid for an existing file that cannot be read or parsed
// ([Invalid], the *[SyntaxError] as its cause), config_write_failed when
// the file could not be changed (directory, lock, write, an unusual YAML
// layout).
//
// A boolean key accepts true/false, yes/no, on/off and 1/0 and is written
// as true or false. A list key takes a YAML flow list ("[a.dev, b.dev]") or,
// except shared_files (paths), a comma-separated list ("a.dev, b.dev");
// a value starting with "*" ("*.ads.example, b.dev") is taken as that
// text, not as a YAML alias.
// Each entry of a list key is passed to EntryCheck when it is set; a
// non-empty answer is an error and nothing is written. The home directory is created (0700) when missing. The
// read-modify-write holds an exclusive lock on <home>/.config.yaml.lock
// (flock(2); within the process only where that is unavailable), so
// concurrent Sets of different keys, from any number of processes, all
// persist. The write is atomic: a temp file in the same directory, fsynced,
// renamed over config.yaml (0600); a symlinked config.yaml has its target
// replaced.
func Set(home, key, value string) error {
	ref, err := resolveKey(key)
	if err != nil {
		return err
	}
	if ref.f.isBlock() {
		name := strings.Join(ref.path, ".")
		if name == "" {
			return reason.New(reason.ConfigUnknownKey, "", "set needs a key (e.g. web.backend)")
		}
		return reason.Newf(reason.ConfigUnknownKey, "", "%s is a block; set one of its keys instead: %s", name, prefixed(name, ref.f.childNames()))
	}
	key = strings.Join(ref.path, ".")
	if ref.hasEnt {
		key += "." + ref.entry
	}
	v, err := decodeSetValue(ref, value)
	if err != nil {
		return err
	}
	if sv, ok := v.(string); ok && ref.f.urlNoPassword && URLHasPassword(sv) {
		// config.yaml is printed by config get: the password never goes
		// there (nothing is written; the value is not echoed).
		return reason.Newf(reason.ConfigBadValue, "", "cannot set %s: the URL carries a password, which config.yaml must not hold; set the URL without it and put the password in REDIS_PASSWORD (environment or .env), or put the whole URL in GATEHOUSE_REDIS_URL", key)
	}
	if str, ok := v.(string); ok && ref.f.typ == "list of strings" && ref.f.name != "shared_files" && strings.Contains(str, ",") {
		// "a.dev, b.dev" is a list of two, as a user means it (a
		// comma never appears in a host or provider name).
		var items []any
		for _, it := range strings.Split(str, ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		v = items
	}
	if EntryCheck != nil && ref.f.typ == "list of strings" {
		items, _ := v.([]any)
		if s, ok := v.(string); ok {
			items = []any{s}
		}
		for _, it := range items {
			if s, ok := it.(string); ok {
				if w := EntryCheck(key, s); w != "" {
					return reason.Newf(reason.ConfigBadValue, "", "cannot set %s: %s", key, w)
				}
			}
		}
	}
	// Validate through the same setter Load uses.
	probe := v
	if ref.hasEnt {
		probe = map[string]any{ref.entry: v}
	}
	probeCfg := Default()
	if pr := ref.f.set(probeCfg, probe, home); pr != nil {
		if strings.Contains(pr.msg, ref.f.typ) {
			return reason.Newf(reason.ConfigBadValue, "", "cannot set %s to %q: %s", key, value, pr.msg)
		}
		return reason.Newf(reason.ConfigBadValue, "", "cannot set %s to %q: %s (expected %s)", key, value, pr.msg, ref.f.typ)
	}
	if ref.f.canonical && !ref.hasEnt {
		v = ref.f.get(probeCfg) // the form Load keeps
	}
	if ref.f.isBool {
		// "yes", "on", "1" are accepted for a boolean, but the file
		// receives the boolean itself, never the word.
		b, _ := boolValue(v)
		v = b
	}

	if err := os.MkdirAll(home, 0o700); err != nil {
		return writeFailed(fmt.Errorf("create %s: %w", home, err))
	}
	// Read-modify-write under a lock: concurrent Sets of different keys
	// must all persist.
	unlock, err := lockHome(home)
	if err != nil {
		return writeFailed(err)
	}
	defer unlock()
	path := Path(home)
	data, err := readLimited(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return Invalid(path, err)
	}
	segs := append([]string{}, ref.path...)
	if ref.hasEnt {
		segs = append(segs, ref.entry)
	}
	out, err := editYAML(path, data, segs, v)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return Invalid(path, err)
		}
		return writeFailed(err)
	}
	return writeFailed(writeAtomic(path, out))
}

// writeFailed is err (nil for nil) as the config_write_failed refusal of
// Set: config.yaml could not be changed and was left as it was. An error
// that already has a code keeps it.
func writeFailed(err error) error {
	if err == nil || reason.As(err) != nil {
		return err
	}
	return reason.Wrap(reason.ConfigWriteFailed, "", strings.TrimPrefix(err.Error(), "config: "), err)
}

// EntryCheck, when non-nil, judges one entry of a list key (key dotted,
// e.g. "security.website_blocklist.domains") before Set writes it: a
// non-empty result is the reason the entry is refused. The CLI sets it to
// policy.Lint for the blocklist (config cannot import policy: policy's
// tests import config).
var EntryCheck func(key, entry string) string

// lockPath is the lock file that serialises Sets on one home.
func lockPath(home string) string { return filepath.Join(home, ".config.yaml.lock") }

func prefixed(prefix string, names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = prefix + "." + n
	}
	return strings.Join(out, ", ")
}

// decodeSetValue turns the CLI text into the generic value to store.
func decodeSetValue(ref keyRef, text string) (any, error) {
	literal := ref.hasEnt || ref.f.literal
	t := strings.TrimSpace(text)
	if literal && !(strings.HasPrefix(t, `"`) || strings.HasPrefix(t, `'`)) {
		return t, nil
	}
	if ref.f.typ == "list of strings" && strings.HasPrefix(t, "*") {
		// "*.ads.example" (a blocklist pattern) would read as a YAML alias
		// to an anchor a one-value text cannot define: it is the text.
		return t, nil
	}
	f, err := parseYAML("value", []byte(t), 0)
	if err != nil {
		var se *SyntaxError
		if errors.As(err, &se) {
			return nil, reason.Newf(reason.ConfigBadValue, "", "cannot set %s: value %q is not valid YAML: %s", refName(ref), text, se.Message)
		}
		return nil, reason.Wrap(reason.ConfigBadValue, "", fmt.Sprintf("cannot set %s to %q: %s", refName(ref), text, strings.TrimPrefix(err.Error(), "config: ")), err)
	}
	l := &loader{cfg: Default(), seen: map[string]bool{}, budget: maxLeafNodes, mergeBudget: maxMergeNodes}
	l.collectAnchors(f)
	var v any
	if len(f.Docs) > 0 && f.Docs[0] != nil {
		if v, err = l.value(f.Docs[0].Body, 0); err != nil {
			return nil, reason.Newf(reason.ConfigBadValue, "", "cannot set %s to %q: %v (expected %s)", refName(ref), text, err, ref.f.typ)
		}
	}
	if v == nil {
		if literal {
			return "", nil
		}
		return nil, reason.Newf(reason.ConfigBadValue, "", "%s needs a value (expected %s)", strings.Join(ref.path, "."), ref.f.typ)
	}
	return v, nil
}

// refName is the dotted key ref was resolved from.
func refName(ref keyRef) string {
	k := strings.Join(ref.path, ".")
	if ref.hasEnt {
		k += "." + ref.entry
	}
	return k
}

// editYAML returns data (the current config.yaml, possibly empty) with segs
// set to v, keeping comments and other keys.
func editYAML(path string, data []byte, segs []string, v any) ([]byte, error) {
	f, err := parseYAML(path, data, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	before, err := genericDoc(path, data)
	if err != nil {
		return nil, err
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d != nil && !isEmptyNode(d.Body) {
			body = d.Body
			break
		}
	}
	var out []byte
	if body == nil {
		frag, err := fragmentText(segs, v)
		if err != nil {
			return nil, err
		}
		out = append([]byte{}, data...)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		out = append(out, frag...)
	} else {
		if err := editNode(path, body, segs, v); err != nil {
			return nil, err
		}
		out = []byte(f.String())
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
	}
	// Re-parse and compare with the intended data before writing.
	after, err := genericDoc(path, out)
	if err != nil {
		return nil, fmt.Errorf("config: editing %s produced invalid YAML (%v); file left unchanged, edit it by hand", path, err)
	}
	want := setGeneric(before, segs, v)
	if !reflect.DeepEqual(want, after) {
		return nil, fmt.Errorf("config: cannot edit %s safely here (the YAML layout is unusual); file left unchanged, edit it by hand", path)
	}
	return out, nil
}

// genericDoc decodes the first non-empty document of data as a generic
// value (nil when there is none).
func genericDoc(path string, data []byte) (any, error) {
	f, err := parseYAML(path, data, 0)
	if err != nil {
		return nil, err
	}
	l := &loader{file: path, cfg: Default(), seen: map[string]bool{}, budget: maxDocNodes, mergeBudget: maxMergeNodes}
	l.collectAnchors(f)
	for _, d := range f.Docs {
		if d != nil && !isEmptyNode(d.Body) {
			return l.value(d.Body, 0)
		}
	}
	return nil, nil
}

// setGeneric returns root with segs set to v, creating maps as needed.
func setGeneric(root any, segs []string, v any) any {
	m, ok := root.(map[string]any)
	if !ok {
		m = map[string]any{}
	}
	if len(segs) == 1 {
		m[segs[0]] = v
		return m
	}
	m[segs[0]] = setGeneric(m[segs[0]], segs[1:], v)
	return m
}

// fragmentText renders {segs[0]: {segs[1]: … v}} as block YAML.
func fragmentText(segs []string, v any) ([]byte, error) {
	var node any = roundTripSafe(v)
	for i := len(segs) - 1; i >= 0; i-- {
		node = yaml.MapSlice{{Key: segs[i], Value: node}}
	}
	b, err := yaml.MarshalWithOptions(node, yaml.Indent(2), yaml.IndentSequence(true))
	if err != nil {
		return nil, fmt.Errorf("config: render value: %w", err)
	}
	return b, nil
}

// quotedString is a string the YAML encoder writes double-quoted (Go
// escapes are YAML double-quoted escapes).
type quotedString string

func (q quotedString) MarshalYAML() ([]byte, error) { return []byte(strconv.Quote(string(q))), nil }

// roundTripSafe returns v with every string that the YAML encoder would
// write in a form read back as another type (".inf", ".nan", "1e400" come
// out plain and re-read as numbers) replaced by a quotedString.
func roundTripSafe(v any) any {
	switch x := v.(type) {
	case string:
		b, err := yaml.Marshal(yaml.MapSlice{{Key: "k", Value: x}})
		var back map[string]any
		if err != nil || yaml.Unmarshal(b, &back) != nil || back["k"] != x {
			return quotedString(x)
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = roundTripSafe(e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = roundTripSafe(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = roundTripSafe(e)
		}
		return out
	}
	return v
}

func fragmentNode(segs []string, v any) (*ast.MappingNode, error) {
	b, err := fragmentText(segs, v)
	if err != nil {
		return nil, err
	}
	f, err := parser.ParseBytes(b, 0)
	if err != nil || len(f.Docs) == 0 {
		return nil, fmt.Errorf("config: render value: %v", err)
	}
	m, ok := f.Docs[0].Body.(*ast.MappingNode)
	if !ok {
		return nil, errors.New("config: render value: unexpected fragment shape")
	}
	return m, nil
}

func pos(n ast.Node) string {
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			return fmt.Sprintf(":%d:%d", tk.Position.Line, tk.Position.Column)
		}
	}
	return ""
}

// editNode sets segs to v inside the mapping body.
func editNode(path string, body ast.Node, segs []string, v any) error {
	cur, ok := body.(*ast.MappingNode)
	if !ok {
		return fmt.Errorf("config: %s%s: the top level is not a mapping; fix it by hand", path, pos(body))
	}
	for i, seg := range segs {
		var mv *ast.MappingValueNode
		for _, x := range cur.Values {
			if x != nil && x.Key != nil && !x.Key.IsMergeKey() && keyText(x.Key) == seg {
				mv = x
			}
		}
		last := i == len(segs)-1
		if mv != nil && !last {
			switch val := mv.Value.(type) {
			case *ast.MappingNode:
				cur = val
				continue
			case *ast.NullNode:
				// "web:" with nothing under it: replace the null below.
			default:
				return fmt.Errorf("config: %s%s: %s is not a plain mapping; fix it by hand", path, pos(mv.Value), strings.Join(segs[:i+1], "."))
			}
		}
		frag, err := fragmentNode(segs[i:], v)
		if err != nil {
			return err
		}
		if cur.IsFlowStyle {
			frag.SetIsFlowStyle(true)
		}
		var comment *ast.CommentGroupNode
		if mv != nil && mv.Value != nil {
			comment = mv.Value.GetComment()
		}
		cur.Merge(frag)
		if mv != nil && comment != nil && mv.Value != nil {
			// Keep an inline comment that sat on the replaced value.
			if _, isMap := mv.Value.(*ast.MappingNode); !isMap || frag.IsFlowStyle {
				_ = mv.Value.SetComment(comment)
			}
		}
		return nil
	}
	return nil
}

// writeAtomic writes data to path via a temp file in the same directory and
// a rename; the result has mode 0600.
func writeAtomic(path string, data []byte) (err error) {
	target := path
	if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
		if t, e := filepath.EvalSymlinks(path); e == nil {
			target = t
		}
	}
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".*.tmp")
	if err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	name := tmp.Name()
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(name)
		}
	}()
	if err = tmp.Chmod(0o600); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	if err = os.Rename(name, target); err != nil {
		return fmt.Errorf("config: write %s: %w", path, err)
	}
	if d, e := os.Open(dir); e == nil { // persist the rename; best effort
		_ = d.Sync()
		d.Close()
	}
	return nil
}
