package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/webtest"
)

var browserTools = []string{tools.BrowserNavigate, tools.BrowserSnapshot, tools.BrowserClick, tools.BrowserType,
	tools.BrowserScroll, tools.BrowserBack, tools.BrowserPress, tools.BrowserConsole, tools.BrowserGetImages,
	tools.BrowserVision, tools.BrowserClose, tools.BrowserDialog}

// Every tool schema together (name, title, description, input schema) stays
// within 4,000 tokens, counted as chars/4 (issue 8).
func TestToolSchemasFitTheBudget(t *testing.T) {
	w := webtest.New(t)
	r, _ := tools.Default(tools.Env{Web: w.Env()})
	defer r.Close()
	chars := 0
	for _, tl := range r.All() {
		b, err := json.Marshal(tl.InputSchema())
		if err != nil {
			t.Fatal(err)
		}
		chars += len(tl.Name()) + len(tl.Title()) + len(tl.Description()) + len(b)
	}
	t.Logf("%d tools, %d schema chars ≈ %d tokens", len(r.All()), chars, chars/4)
	if chars/4 > 4000 {
		t.Errorf("tool schemas total %d tokens (chars/4), over 4000", chars/4)
	}
}

func TestBrowserToolsUnlistedWithoutChromium(t *testing.T) {
	w := webtest.New(t)
	w.Cfg.Browser.ExecutablePath = "/nonexistent/chromium"
	r, _ := tools.Default(tools.Env{Web: w.Env()})
	defer r.Close()
	listed := map[string]bool{}
	for _, tl := range r.Tools() {
		listed[tl.Name()] = true
	}
	un := map[string]string{}
	for _, u := range r.Unavailable() {
		un[u.Name] = u.Why
	}
	for _, n := range browserTools {
		if listed[n] {
			t.Errorf("%s listed without Chromium", n)
		}
		if !strings.Contains(un[n], "apt-get install -y chromium") {
			t.Errorf("%s: unavailable reason %q does not name the install", n, un[n])
		}
	}
	res := call(t, r, tools.BrowserNavigate, `{"url":"https://example.com/"}`, tools.Options{})
	// The typed cause keeps its code (issue 8: "a clear chromium_missing error").
	if !res.Refused || reasonOf(t, res) != reason.ChromiumMissing {
		t.Errorf("call without Chromium: %+v", res)
	}
}

// The browser flow through the tool layer (the path MCP and the CLI take): JSON
// in, JSON out, task ids from the surface, EndTask releasing sessions.
func TestBrowserToolsThroughRegistry(t *testing.T) {
	if _, err := backend.FindChromium(""); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing (CI unset): %v", err)
		}
		t.Fatal(err)
	}
	w := webtest.New(t)
	w.Cfg.Browser.SnapshotThreshold = 1000
	site := w.Serve("shop.test", webtest.Page(`<!doctype html><title>Shop</title><h1>Shop</h1>
<input aria-label="Search"><button onclick="document.querySelector('h1').textContent='Found '+document.querySelector('input').value">Go</button>`))
	long := w.Serve("long.test", webtest.Page(`<!doctype html><title>Long</title>`+strings.Repeat(`<p><a href="/x">A link with a long enough name</a></p>`, 200)))
	r, _ := tools.Default(tools.Env{Web: w.Env()})
	defer func() {
		if err := r.Close(); err != nil {
			t.Error(err)
		}
	}()
	ctx := context.Background()
	opts := tools.Options{Task: "mcp-session-1", Surface: tools.SurfaceMCP}
	res, err := r.CallValue(ctx, tools.BrowserNavigate, map[string]any{"url": site.URL("/")}, opts)
	if err != nil || res.Refused {
		t.Fatalf("navigate: %v %+v", err, res)
	}
	b, _ := res.JSON(false)
	var nav struct {
		Success      bool   `json:"success"`
		URL          string `json:"url"`
		Title        string `json:"title"`
		SessionKey   string `json:"session_key"`
		Snapshot     string `json:"snapshot"`
		ElementCount int    `json:"element_count"`
	}
	json.Unmarshal(b, &nav)
	if !nav.Success || nav.Title != "Shop" || nav.SessionKey != "mcp-session-1" || nav.ElementCount != 2 {
		t.Fatalf("navigate JSON %s", b)
	}
	ref := func(role, name string) string {
		m := regexp.MustCompile(role + ` "` + name + `"[^\n]*\[ref=(e\d+)\]`).FindStringSubmatch(nav.Snapshot)
		if m == nil {
			t.Fatalf("no %s %q in %s", role, name, nav.Snapshot)
		}
		return m[1]
	}
	if res := call(t, r, tools.BrowserType, `{"ref":"`+ref("textbox", "Search")+`","text":"socks"}`, opts); res.Refused {
		t.Fatalf("type: %+v", res.Value)
	}
	res = call(t, r, tools.BrowserClick, `{"ref":"@`+ref("button", "Go")+`"}`, opts)
	b, _ = res.JSON(false)
	if res.Refused || !strings.Contains(string(b), `+ heading \"Found socks\"`) {
		t.Fatalf("click JSON %s", b)
	}
	// Another task sees nothing of this one.
	other := tools.Options{Task: "mcp-session-2", Surface: tools.SurfaceMCP}
	res = call(t, r, tools.BrowserSnapshot, `{}`, other)
	b, _ = res.JSON(false)
	if strings.Contains(string(b), "Shop") || !strings.Contains(string(b), `"url":"about:blank"`) {
		t.Fatalf("second task's snapshot %s", b)
	}
	res = call(t, r, tools.BrowserVision, `{"question":"what is shown?","annotate":true}`, opts)
	im, ok := res.Value.(tools.Imaged)
	if !ok || len(im.Images()) != 1 || !strings.HasPrefix(string(im.Images()[0].Data), "\x89PNG") {
		t.Fatalf("vision did not return a PNG: %+v", res.Value)
	}
	// Invalid arguments are refusals with a reason, before the browser is
	// touched; an enum value of its own code keeps that code and lists the
	// valid values (newcomer review D1).
	for _, c := range []struct {
		tool, args string
		want       reason.Code
		lists      string
	}{
		{tools.BrowserScroll, `{"direction":"left"}`, reason.InvalidDirection, `"up", "down"`},
		{tools.BrowserScroll, `{"direction":"UP"}`, reason.InvalidDirection, `"up", "down"`},
		{tools.BrowserScroll, `{"direction":5}`, reason.InvalidDirection, `"up", "down"`},
		{tools.BrowserScroll, `{}`, reason.InvalidArguments, "direction"},
		{tools.BrowserDialog, `{"action":"ok"}`, reason.InvalidDialogAction, `"accept", "dismiss"`},
		{tools.BrowserScroll, `{"direction":"down","extra":1}`, reason.InvalidArguments, "extra"},
	} {
		res := call(t, r, c.tool, c.args, opts)
		b, _ := res.JSON(false)
		if !res.Refused || reasonOf(t, res) != c.want || !strings.Contains(string(b), strings.ReplaceAll(c.lists, `"`, `\"`)) {
			t.Errorf("%s %s: %s", c.tool, c.args, b)
		}
	}
	// A snapshot over browser.snapshot_threshold is cut and stored; web_read pages it.
	res = call(t, r, tools.BrowserNavigate, `{"url":"`+long.URL("/")+`"}`, opts)
	b, _ = res.JSON(false)
	var cut struct {
		Snapshot  string `json:"snapshot"`
		Truncated bool   `json:"truncated"`
	}
	json.Unmarshal(b, &cut)
	fm := regexp.MustCompile(`web_read path="([^"]+)" offset=(\d+) limit=200`).FindStringSubmatch(cut.Snapshot)
	if !cut.Truncated || fm == nil || len([]rune(cut.Snapshot)) > 1000 {
		t.Fatalf("long page snapshot not cut with a web_read note: %s", b)
	}
	res = call(t, r, tools.WebRead, `{"path":"`+fm[1]+`","offset":`+fm[2]+`,"limit":5}`, opts)
	b, _ = res.JSON(false)
	if res.Refused || !strings.Contains(string(b), `link \"A link with a long enough name\"`) {
		t.Fatalf("web_read of the stored snapshot: %s", b)
	}
	r.EndTask("mcp-session-1")
	res = call(t, r, tools.BrowserSnapshot, `{}`, opts)
	b, _ = res.JSON(false)
	if !strings.Contains(string(b), `"url":"about:blank"`) {
		t.Fatalf("after EndTask the task still has its page: %s", b)
	}
}
