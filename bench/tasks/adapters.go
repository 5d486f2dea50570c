package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// adapter names one side's tools and argument shapes and says how its
// results read; the driver's logic is the same for both sides.
type adapter interface {
	name() string
	navigate(url string) (string, map[string]any)
	snapshot() (string, map[string]any)
	// find is a search of the page for text, where the side has one.
	find(text string) (string, map[string]any, bool)
	click(ref, desc string) (string, map[string]any)
	typeText(ref, text, desc string) (string, map[string]any)
	// fill types several fields in one call, where the side can.
	fill(fields []field) (string, map[string]any, bool)
	press(key string) (string, map[string]any)
	dialog(accept bool) (string, map[string]any)
	// selectTab switches to tab index (0-based), where the side needs it.
	selectTab(index int) (string, map[string]any, bool)
	closeBrowser() (string, map[string]any)
	// scope asks a page-changing call (navigate, click, type, press) to
	// show only the part of the new page that matches q, where the side
	// can; false: the agent looks for q with a call of its own.
	scope(args map[string]any, q string) bool
	// submitType types and presses Enter in one call, where the side can.
	submitType(ref, text, desc string) (string, map[string]any, bool)
	read(raw string) view
}

type field struct {
	ref, name, text string
}

// gatehouse is Gatehouse's MCP surface: results are JSON objects.
type gatehouse struct{ hasFind, hasFill bool }

func (g gatehouse) scope(args map[string]any, q string) bool {
	if g.hasFind {
		args["find"] = q
	}
	return g.hasFind
}
func (g gatehouse) submitType(ref, text, _ string) (string, map[string]any, bool) {
	return "browser_type", map[string]any{"ref": ref, "text": text, "submit": true}, g.hasFill
}

func (gatehouse) name() string { return "gatehouse" }
func (gatehouse) navigate(u string) (string, map[string]any) {
	return "browser_navigate", map[string]any{"url": u}
}
func (gatehouse) snapshot() (string, map[string]any) { return "browser_snapshot", map[string]any{} }
func (g gatehouse) find(text string) (string, map[string]any, bool) {
	return "browser_snapshot", map[string]any{"find": text}, g.hasFind
}
func (gatehouse) click(ref, _ string) (string, map[string]any) {
	return "browser_click", map[string]any{"ref": ref}
}
func (gatehouse) typeText(ref, text, _ string) (string, map[string]any) {
	return "browser_type", map[string]any{"ref": ref, "text": text}
}
func (g gatehouse) fill(fs []field) (string, map[string]any, bool) {
	var list []map[string]any
	for _, f := range fs {
		list = append(list, map[string]any{"ref": f.ref, "text": f.text})
	}
	return "browser_fill", map[string]any{"fields": list}, g.hasFill
}
func (gatehouse) press(key string) (string, map[string]any) {
	return "browser_press", map[string]any{"key": key}
}
func (gatehouse) dialog(accept bool) (string, map[string]any) {
	a := "dismiss"
	if accept {
		a = "accept"
	}
	return "browser_dialog", map[string]any{"action": a}
}
func (gatehouse) selectTab(int) (string, map[string]any, bool) { return "", nil, false }
func (gatehouse) closeBrowser() (string, map[string]any)       { return "browser_close", map[string]any{} }

func (gatehouse) read(raw string) view {
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return view{text: raw, isErr: true}
	}
	var v view
	if s, ok := m["snapshot"].(string); ok {
		v.snapshot = s
		if strings.Contains(s, "\n[find \"") || strings.HasPrefix(s, "[find \"") {
			v.snapshot, v.found = "", s // a searched snapshot: part of the page
		}
	}
	if s, ok := m["delta"].(string); ok {
		v.delta = s
		if strings.Contains(s, "\n[find \"") || strings.HasPrefix(s, "[find \"") {
			v.delta, v.found = "", s // a searched delta: the changed lines that match
		}
	}
	if s, ok := m["url"].(string); ok {
		v.url = s
	}
	if ok, _ := m["success"].(bool); !ok {
		v.isErr = true
	}
	delete(m, "snapshot")
	delete(m, "delta")
	v.text = flatten("", m) + "\n" + v.delta
	return v
}

// flatten writes a JSON value as "key: value" lines, keys sorted.
func flatten(prefix string, x any) string {
	var b strings.Builder
	switch t := x.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(flatten(prefix+k+".", t[k]))
		}
	case []any:
		for i, e := range t {
			b.WriteString(flatten(fmt.Sprintf("%s%d.", prefix, i), e))
		}
	default:
		fmt.Fprintf(&b, "%s: %v\n", strings.TrimSuffix(prefix, "."), t)
	}
	return b.String()
}

// playwright is Playwright MCP's surface: results are markdown with the
// page's snapshot in a yaml block.
type playwright struct{}

func (playwright) name() string                      { return "playwright" }
func (playwright) scope(map[string]any, string) bool { return false }
func (playwright) submitType(ref, text, desc string) (string, map[string]any, bool) {
	return "browser_type", map[string]any{"element": desc, "target": ref, "text": text, "submit": true}, true
}
func (playwright) navigate(u string) (string, map[string]any) {
	return "browser_navigate", map[string]any{"url": u}
}
func (playwright) snapshot() (string, map[string]any) { return "browser_snapshot", map[string]any{} }
func (playwright) find(text string) (string, map[string]any, bool) {
	return "browser_find", map[string]any{"text": text}, true
}
func (playwright) click(ref, desc string) (string, map[string]any) {
	return "browser_click", map[string]any{"element": desc, "target": ref}
}
func (playwright) typeText(ref, text, desc string) (string, map[string]any) {
	return "browser_type", map[string]any{"element": desc, "target": ref, "text": text}
}
func (playwright) fill(fs []field) (string, map[string]any, bool) {
	var list []map[string]any
	for _, f := range fs {
		list = append(list, map[string]any{"name": f.name, "type": "textbox", "target": f.ref, "value": f.text})
	}
	return "browser_fill_form", map[string]any{"fields": list}, true
}
func (playwright) press(key string) (string, map[string]any) {
	return "browser_press_key", map[string]any{"key": key}
}
func (playwright) dialog(accept bool) (string, map[string]any) {
	return "browser_handle_dialog", map[string]any{"accept": accept}
}
func (playwright) selectTab(i int) (string, map[string]any, bool) {
	return "browser_tabs", map[string]any{"action": "select", "index": i}, true
}
func (playwright) closeBrowser() (string, map[string]any) { return "browser_close", map[string]any{} }

var pwURLRe = regexp.MustCompile(`(?m)^- Page URL: (\S+)$`)

var yamlRe = regexp.MustCompile("(?s)```yaml\n(.*?)```")

func (playwright) read(raw string) view {
	v := view{text: raw}
	if m := yamlRe.FindStringSubmatch(raw); m != nil && strings.Contains(raw, "### Snapshot") {
		v.snapshot = m[1]
	} else if strings.Contains(raw, "### Snapshot\n- [Snapshot](") {
		v.unseen = true
	}
	if strings.HasPrefix(raw, "### Result\nFound ") {
		v.found = raw
	}
	if m := pwURLRe.FindStringSubmatch(raw); m != nil {
		v.url = m[1]
	}
	if strings.HasPrefix(raw, "### Error") || strings.Contains(raw, "\n### Error") {
		v.isErr = true
	}
	return v
}
