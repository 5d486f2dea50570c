package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// server is one MCP server over stdio (Gatehouse's binary or Playwright MCP)
// and the per-side adapter that names its tools.
type server struct {
	cs    *mcp.ClientSession
	ad    adapter
	tools string // the tools/list result as the client receives it (JSON)
}

func startServer(ctx context.Context, ad adapter, cmd *exec.Cmd) (*server, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "gatehouse-task-bench", Version: "1"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: connect: %w", ad.name(), err)
	}
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		cs.Close()
		return nil, fmt.Errorf("%s: tools/list: %w", ad.name(), err)
	}
	// What a model reads of the list: each tool's name, description and
	// input schema (clients pass these to the model; titles, annotations
	// and output schemas stay with the client). The same rule for both sides.
	type seen struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema any    `json:"input_schema"`
	}
	var list []seen
	for _, t := range lt.Tools {
		list = append(list, seen{t.Name, t.Description, t.InputSchema})
	}
	js, _ := json.Marshal(list)
	return &server{cs: cs, ad: ad, tools: string(js)}, nil
}

// agent is one task's run on one side: it makes the calls, reads each
// result (counting its tokens) and keeps what it has seen of the current
// page, the way an agent's context does.
type agent struct {
	ctx     context.Context
	srv     *server
	tok     tokenCounter
	calls   int
	tokens  int
	log     io.Writer
	page    []string // the current page's snapshot lines as the agent knows them
	url     string   // the current page's URL as the agent last saw it
	fresh   bool     // page reflects the page now (false after an action whose result did not show it)
	partial bool     // page holds only searched parts of the page
	// searched are the texts the agent searched the page for since it
	// last changed unseen: deltas since show whatever was added.
	searched map[string]bool
	last     view // the latest result
	failed   string
	firstMs  float64 // the task's first call (a fresh session: Playwright MCP launches its browser)
}

// view is one tool result as the agent reads it.
type view struct {
	raw      string // the text the client received (what the tokens count)
	snapshot string // a full snapshot of the page in it, if any
	delta    string // +/-/~ lines against the agent's last snapshot, if any
	found    string // the lines a search of the page returned, if any
	text     string // the rest of the result, flattened
	url      string // the page's URL, when the result names it
	unseen   bool   // the result says the page changed without showing it (a linked snapshot file)
	isErr    bool
}

func (a *agent) call(tool string, args map[string]any) view {
	a.calls++
	start := time.Now()
	res, err := a.srv.cs.CallTool(a.ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	took := since(start)
	if a.calls == 1 {
		a.firstMs = took
	}
	var raw string
	isErr := false
	if err != nil {
		raw, isErr = "error: "+err.Error(), true
	} else {
		var parts []string
		for _, c := range res.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				parts = append(parts, t.Text)
			}
		}
		raw, isErr = strings.Join(parts, "\n"), res.IsError
	}
	n := a.tok.count(raw)
	a.tokens += n
	v := a.srv.ad.read(raw)
	v.raw, v.isErr = raw, v.isErr || isErr
	if a.log != nil {
		argJS, _ := json.Marshal(args)
		fmt.Fprintf(a.log, "--- %s %s → %d tokens, %.0f ms\n%s\n", tool, argJS, n, took, raw)
	}
	if v.url != "" && v.url != a.url {
		a.page, a.fresh, a.searched = nil, false, nil // another page: what the agent knew is gone
		a.url = v.url
	}
	if v.unseen || v.snapshot != "" {
		a.searched = nil
	}
	switch {
	case v.snapshot != "":
		a.page, a.fresh, a.partial = strings.Split(v.snapshot, "\n"), true, false
	case v.delta != "":
		a.page = applyDelta(a.page, v.delta)
	case v.found != "":
		a.page = append(a.page, strings.Split(v.found, "\n")...)
		a.fresh, a.partial = true, true
	case v.unseen:
		a.fresh = false
	}
	a.last = v
	return v
}

var refRe = regexp.MustCompile(`\[ref=([a-z0-9]+)\]`)

// applyDelta updates the agent's page lines with a delta's + (added), -
// (removed) and ~ (changed) lines, matched by ref or text.
func applyDelta(page []string, delta string) []string {
	for _, l := range strings.Split(delta, "\n") {
		if len(l) < 2 {
			continue
		}
		op, body := l[:2], l[2:]
		ref := ""
		if m := refRe.FindStringSubmatch(body); m != nil {
			ref = m[1]
		}
		idx := -1
		for i, p := range page {
			if (ref != "" && strings.Contains(p, "[ref="+ref+"]")) || (ref == "" && strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(p), "- ")) == body) {
				idx = i
				break
			}
		}
		switch op {
		case "+ ":
			page = append(page, "- "+body)
		case "~ ":
			if idx >= 0 {
				page[idx] = "- " + body
			} else {
				page = append(page, "- "+body)
			}
		case "- ":
			if idx >= 0 {
				page = append(page[:idx], page[idx+1:]...)
			}
		}
	}
	return page
}

// known is everything the agent has read of the current page: its snapshot
// lines as updated by deltas, and the latest result's other text.
func (a *agent) known() string {
	return strings.Join(a.page, "\n") + "\n" + a.last.text
}

// current returns what the agent knows of the page as it is now, taking a
// snapshot first when the last result changed the page without showing it.
func (a *agent) current() string {
	if !a.fresh || a.partial {
		a.call(a.srv.ad.snapshot())
	}
	return a.known()
}

// lineRef returns the ref of a snapshot (or delta) line naming an element
// of role whose name matches: `- role "name" … [ref=…]`.
func lineRef(line, role string, name *regexp.Regexp) (string, bool) {
	m := refRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	l := strings.TrimSpace(line)
	l = strings.TrimLeft(l, "-+~ ")
	if !strings.HasPrefix(l, role+" ") && l != role {
		return "", false
	}
	q := regexp.MustCompile(`^` + regexp.QuoteMeta(role) + ` "((?:[^"\\]|\\.)*)"`).FindStringSubmatch(l)
	if q == nil {
		return "", false
	}
	if !name.MatchString(q[1]) {
		return "", false
	}
	return m[1], true
}

// findIn returns the ref of the first element of role whose name matches,
// in text (snapshot or delta lines), after the first line containing anchor
// ("" = from the top).
func findIn(text, role string, name *regexp.Regexp, anchor string) string {
	lines := strings.Split(text, "\n")
	start := 0
	if anchor != "" {
		start = -1
		for i, l := range lines {
			if strings.Contains(l, anchor) && strings.ContainsAny(strings.TrimSpace(l)[:1], "-+~") {
				start = i
				break
			}
		}
		if start < 0 {
			return ""
		}
	}
	for _, l := range lines[start:] {
		if ref, ok := lineRef(l, role, name); ok {
			return ref
		}
	}
	return ""
}

// findAll returns the refs and names of every element of role whose name
// matches, in order.
func findAll(text, role string, name *regexp.Regexp) (refs, names []string) {
	for _, l := range strings.Split(text, "\n") {
		if ref, ok := lineRef(l, role, name); ok {
			refs = append(refs, ref)
			q := regexp.MustCompile(`"((?:[^"\\]|\\.)*)"`).FindStringSubmatch(l)
			names = append(names, q[1])
		}
	}
	return refs, names
}

// ensure returns the ref of an element the agent needs: from what it has
// read already, else from a search (where the side has one), else from a
// fresh snapshot.
func (a *agent) ensure(role, name, anchor string) string {
	q := anchor
	if q == "" {
		q = strings.Trim(name, "^$")
	}
	return a.ensureQ(role, name, anchor, q)
}

// ensureQ is ensure searching for the text q.
func (a *agent) ensureQ(role, name, anchor, q string) string {
	re := regexp.MustCompile(name)
	if ref := findIn(a.known(), role, re, anchor); ref != "" {
		return ref
	}
	if tool, args, ok := a.srv.ad.find(q); ok && !strings.ContainsAny(q, `\[(|*+?`) {
		v := a.call(tool, args)
		if ref := findIn(v.found+"\n"+v.snapshot, role, re, anchor); ref != "" {
			return ref
		}
	}
	a.call(a.srv.ad.snapshot())
	return findIn(a.known(), role, re, anchor)
}

// lookFor returns text of the current page that holds anchor: what the
// agent has read when that is current and holds it, else the result of the
// side's search for anchor, else (no match, or no search) a whole snapshot.
func (a *agent) lookFor(anchor string) string {
	if a.fresh && strings.Contains(a.known(), anchor) {
		return a.known()
	}
	if tool, args, ok := a.srv.ad.find(anchor); ok {
		v := a.call(tool, args)
		if strings.Contains(v.found+v.snapshot, anchor) {
			return v.found + "\n" + v.snapshot
		}
	}
	a.call(a.srv.ad.snapshot())
	return a.known()
}

// scoped makes a page-changing call, asking it (where the side can) to show
// only the part of the resulting page that matches q, the next thing the
// agent looks for ("" = no scope).
func (a *agent) scoped(q string) scopedAgent { return scopedAgent{a, q} }

type scopedAgent struct {
	a *agent
	q string
}

func (s scopedAgent) call(tool string, args map[string]any) view {
	scoped := s.q != "" && s.a.srv.ad.scope(args, s.q)
	v := s.a.call(tool, args)
	if scoped && !v.unseen && !v.isErr {
		// The result showed where q is on the page now (or that it is not).
		if s.a.searched == nil {
			s.a.searched = map[string]bool{}
		}
		s.a.searched[s.q] = true
	}
	return v
}

func (a *agent) fail(f string, args ...any) bool {
	a.failed = fmt.Sprintf(f, args...)
	return false
}

func since(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
