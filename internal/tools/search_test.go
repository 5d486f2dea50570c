package tools_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/webtest"
)

func listed(r *tools.Registry, name string) bool {
	for _, t := range r.Tools() {
		if t.Name() == name {
			return true
		}
	}
	return false
}

// web_search is listed only when a search backend resolves; when it does not,
// the reason names the fix.
func TestWebSearchListedOnlyWhenResolvable(t *testing.T) {
	w := webtest.New(t)
	w.Cfg.Web.KeylessFallback = false
	env := w.Env()
	env.DotEnv = map[string]string{}
	r, _ := tools.Default(tools.Env{Web: env})
	if listed(r, tools.WebSearch) {
		t.Fatal("web_search listed with no search backend")
	}
	var why string
	for _, u := range r.Unavailable() {
		if u.Name == tools.WebSearch {
			why = u.Why
		}
	}
	if !strings.Contains(why, "gatehouse config set") {
		t.Fatalf("unavailable reason %q", why)
	}
	if res := call(t, r, tools.WebSearch, `{"query":"q"}`, tools.Options{}); !res.Refused {
		t.Fatal("call of an unlisted tool not refused")
	}

	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		json.NewEncoder(rw).Encode(map[string]any{"type": "search", "web": map[string]any{"results": []any{
			map[string]any{"title": "A", "url": "https://a.example/", "description": "a"},
			map[string]any{"title": "B", "url": "https://b.example/", "description": "b"},
		}}})
	}))
	defer srv.Close()
	env.DotEnv = map[string]string{"BRAVE_SEARCH_API_KEY": "BSA-k-123456789012345"}
	env.VendorEndpoints = map[string]string{"brave-free": srv.URL}
	env.AllowAddrPorts = append(env.AllowAddrPorts, netip.MustParseAddrPort(srv.Listener.Addr().String()))
	r, _ = tools.Default(tools.Env{Web: env})
	if !listed(r, tools.WebSearch) {
		t.Fatal("web_search not listed with a keyed backend")
	}
	// A non-numeric limit is 5 (spec §A2), not an argument error.
	res := call(t, r, tools.WebSearch, `{"query":"q","limit":"x"}`, tools.Options{Surface: tools.SurfaceMCP})
	b, _ := res.JSON(false)
	if res.Refused || !strings.Contains(string(b), `"position":2`) || !strings.Contains(string(b), `"provider":"brave-free"`) {
		t.Fatalf("%s", b)
	}
}
