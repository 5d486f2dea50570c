package browser

import (
	"context"
	"fmt"
	"github.com/gatehouse-dev/gatehouse/internal/browser/lifespec"
	"net"
	"net/netip"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/browser/evalpolicy"
	"github.com/gatehouse-dev/gatehouse/internal/browser/sessionkey"
	"github.com/gatehouse-dev/gatehouse/internal/browser/snapshot"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

// stubResolver answers every public-looking name with a public address; the
// names the vectors treat as unresolvable fail.
type stubResolver map[string]string

func (s stubResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := s[host]; ok {
		if a == "" {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
}

func TestVectorSessionKey(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.session_key", 10) {
		var in struct {
			TaskID  *string `json:"task_id"`
			URL     string  `json:"url"`
			Cloud   *bool   `json:"cloud"`
			Auto    *bool   `json:"auto"`
			CDP     bool    `json:"cdp"`
			Camofox bool    `json:"camofox"`
		}
		var want struct {
			SessionKey string `json:"session_key"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note, func(t *testing.T) {
			r := sessionkey.Route{CloudProvider: in.Cloud == nil || *in.Cloud, AutoLocal: in.Auto == nil || *in.Auto, CDPOverride: in.CDP, Camofox: in.Camofox}
			task := ""
			if in.TaskID != nil {
				task = *in.TaskID
			}
			priv := func(u string) bool { return sessionkey.URLIsPrivate(context.Background(), u, stubResolver{}, nil) }
			if got := sessionkey.NavigationKey(task, in.URL, r, priv); got != want.SessionKey {
				t.Errorf("sessionkey.NavigationKey = %q, want %q", got, want.SessionKey)
			}
		})
	}
}

// The privacy oracle of the seed (browser-sessions.txt): a DNS failure is not
// private; a public-looking name resolving into 10/8 is.
func TestURLIsPrivateOracle(t *testing.T) {
	res := stubResolver{"no-such-host-zzz-9911.example": "", "intranet.example.com": "10.2.3.4", "fake.example": "198.18.0.7"}
	fake := []netip.Prefix{netip.MustParsePrefix("198.18.0.0/15")}
	for _, tc := range []struct {
		url  string
		want bool
	}{
		{"http://localhost:3000/", true}, {"http://127.0.0.1/", true}, {"http://[::1]/", true},
		{"http://192.168.1.10/", true}, {"http://10.1.2.3/", true}, {"http://100.64.0.1/", true},
		{"http://169.254.169.254/", true}, {"http://172.20.5.5/", true}, {"http://router.lan/", true},
		{"http://box.internal/", true}, {"http://app.localhost/", true}, {"http://printer.local/", true},
		{"https://dennysentinel.com/", false},
		{"https://no-such-host-zzz-9911.example/", false}, // DNS failure is not private
		{"https://intranet.example.com/", true},           // resolves into 10/8
		{"https://fake.example/", false},                  // declared fake-IP range
		{"http://198.18.0.9/", false},                     // literal in declared fake-IP range
		{"not a url", false},
	} {
		if got := sessionkey.URLIsPrivate(context.Background(), tc.url, res, fake); got != tc.want {
			t.Errorf("sessionkey.URLIsPrivate(%q) = %v, want %v", tc.url, got, tc.want)
		}
	}
}

func TestVectorLastSessionKey(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.last_session_key", 3) {
		var in struct {
			TaskID     string            `json:"task_id"`
			LastActive map[string]string `json:"last_active"`
			Session    *struct {
				Key   string `json:"key"`
				Owner string `json:"owner_task_id"`
			} `json:"session"`
		}
		var want struct {
			Key     string `json:"effective_key"`
			Dropped bool   `json:"binding_dropped"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note, func(t *testing.T) {
			var b sessionkey.Bindings
			for k, val := range in.LastActive {
				b.Set(k, val)
			}
			lookup := func(key string) (sessionkey.Owner, bool) {
				if in.Session == nil || in.Session.Key != key {
					return sessionkey.Owner{}, false
				}
				return sessionkey.Owner{SessionKey: in.Session.Key, OwnerTaskID: in.Session.Owner}, true
			}
			key, dropped := b.Resolve(in.TaskID, lookup)
			if key != want.Key || dropped != want.Dropped {
				t.Errorf("Resolve = %q dropped=%v, want %q dropped=%v", key, dropped, want.Key, want.Dropped)
			}
			if _, still := b.Get(in.TaskID); dropped && still {
				t.Error("binding reported dropped but still present")
			}
		})
	}
}

// The ownership and binding tables of the seed (browser-sessions.txt).
func TestOwnershipAndBindingTables(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    sessionkey.Owner
		want bool
	}{
		{"no metadata at all (legacy)", sessionkey.Owner{}, true},
		{"owner matches", sessionkey.Owner{SessionKey: "task7", OwnerTaskID: "task7"}, true},
		{"owner is another task", sessionkey.Owner{SessionKey: "task7", OwnerTaskID: "task9"}, false},
		{"session_key is another session", sessionkey.Owner{SessionKey: "task9", OwnerTaskID: "task7"}, false},
	} {
		if got := sessionkey.Owned(tc.o, "task7", "task7"); got != tc.want {
			t.Errorf("%s: sessionkey.Owned = %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name    string
		binding string // "" = none
		live    map[string]sessionkey.Owner
		after   bool // binding still present
	}{
		{"live session, owner matches", "task7", map[string]sessionkey.Owner{"task7": {SessionKey: "task7", OwnerTaskID: "task7"}}, true},
		{"session already cleaned up", "task7", nil, false},
		{"session recycled and re-owned by #9", "task7", map[string]sessionkey.Owner{"task7": {SessionKey: "task7", OwnerTaskID: "task9"}}, false},
		{"no binding recorded yet", "", nil, false},
		{"sidecar key bound, sidecar gone", "task7::local", nil, false},
	} {
		var b sessionkey.Bindings
		if tc.binding != "" {
			b.Set("task7", tc.binding)
		}
		key, _ := b.Resolve("task7", func(k string) (sessionkey.Owner, bool) { o, ok := tc.live[k]; return o, ok })
		if key != "task7" {
			t.Errorf("%s: key %q, want task7", tc.name, key)
		}
		if _, ok := b.Get("task7"); ok != tc.after {
			t.Errorf("%s: binding present=%v, want %v", tc.name, ok, tc.after)
		}
	}
}

func TestVectorCleanup(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.cleanup", 2) {
		var in struct {
			Key        string            `json:"cleanup_key"`
			Active     []string          `json:"active"`
			LastActive map[string]string `json:"last_active"`
		}
		var want struct {
			Reaped  []string `json:"reaped"`
			Binding string   `json:"last_active_binding"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note, func(t *testing.T) {
			got := sessionkey.CleanupKeys(in.Key, in.Active)
			if !slices.Equal(got, want.Reaped) {
				t.Errorf("reaped %v, want %v", got, want.Reaped)
			}
			var b sessionkey.Bindings
			for k, val := range in.LastActive {
				b.Set(k, val)
			}
			if len(in.LastActive) == 0 {
				b.Set(sessionkey.BareTask(in.Key), in.Key)
			}
			b.DropAfterCleanup(in.Key)
			_, present := b.Get(sessionkey.BareTask(in.Key))
			if want.Binding == "dropped" && present {
				t.Error("binding not dropped")
			}
		})
	}
	// A sidecar cleanup keeps a binding that points at the primary.
	var b sessionkey.Bindings
	b.Set("t", "t")
	b.DropAfterCleanup("t::local")
	if _, ok := b.Get("t"); !ok {
		t.Error("sidecar cleanup dropped the primary's binding")
	}
}

// snapshotLines builds the vectors' "2000 lines '- link "Item N" [ref=eN]'".
func snapshotLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, `- link "Item %d" [ref=e%d]`, i, i)
	}
	return b.String()
}

func TestVectorSnapshotTruncate(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.snapshot_truncate", 6) {
		var in struct {
			Lines      string `json:"lines"`
			TotalChars int    `json:"total_chars"`
			Threshold  int    `json:"threshold"`
			PathLen    int    `json:"stored_path_len"`
		}
		var want struct {
			Truncated bool `json:"truncated"`
			Reserve   int  `json:"reserve"`
			Kept      int  `json:"kept_lines"`
			Remaining int  `json:"remaining_lines"`
			Offset    *int `json:"read_offset"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(fmt.Sprintf("%s/threshold=%d/path=%d", v.Note, in.Threshold, in.PathLen), func(t *testing.T) {
			text := "- a\n- b\n- cccccccccccccccccccc"
			if strings.HasPrefix(in.Lines, "2000 lines") {
				text = snapshotLines(2000)
			}
			if len(text) != in.TotalChars && in.TotalChars != 30 {
				t.Fatalf("fixture has %d chars, vector says %d", len(text), in.TotalChars)
			}
			path := strings.Repeat("p", in.PathLen)
			out, tr := snapshot.Truncate(text, in.Threshold, path)
			if tr.Truncated != want.Truncated {
				t.Fatalf("truncated=%v, want %v", tr.Truncated, want.Truncated)
			}
			if !want.Truncated {
				if out != text {
					t.Error("text under the threshold was changed")
				}
				return
			}
			if tr.Reserve != want.Reserve || tr.KeptLines != want.Kept || tr.RemainingLines != want.Remaining {
				t.Errorf("reserve/kept/remaining = %d/%d/%d, want %d/%d/%d", tr.Reserve, tr.KeptLines, tr.RemainingLines, want.Reserve, want.Kept, want.Remaining)
			}
			wantOff := 0
			if want.Offset != nil {
				wantOff = *want.Offset
			}
			if tr.ReadOffset != wantOff {
				t.Errorf("read offset %d, want %d", tr.ReadOffset, wantOff)
			}
			if n := len([]rune(out)); n > in.Threshold {
				t.Errorf("output %d chars, over the threshold %d", n, in.Threshold)
			}
		})
	}
}

func TestVectorSnapshotThreshold(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.snapshot_threshold", 4) {
		var in map[string]*int
		var want struct {
			Effective int `json:"effective"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		raw := 0
		if p := in["browser.snapshot_threshold"]; p != nil {
			raw = *p
		}
		if got := snapshot.Threshold(raw); got != want.Effective {
			t.Errorf("snapshot.Threshold(%d) = %d, want %d", raw, got, want.Effective)
		}
		// The config loader applies the same default and floor.
		yaml := "browser: {}\n"
		if raw != 0 {
			yaml = fmt.Sprintf("browser:\n  snapshot_threshold: %d\n", raw)
		}
		if got := loadConfig(t, yaml).Browser.SnapshotThreshold; got != want.Effective {
			t.Errorf("config snapshot_threshold %d → %d, want %d", raw, got, want.Effective)
		}
	}
}

func TestVectorCommandTimeout(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.command_timeout", 5) {
		var in map[string]*int
		var want struct {
			Effective int `json:"effective_s"`
			Open      int `json:"open_timeout_s"`
			First     int `json:"first_open_timeout_s"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		raw := 0
		if p := in["browser.command_timeout"]; p != nil {
			raw = *p
		}
		got := lifespec.CommandTimeouts(raw)
		if got != (lifespec.Timeouts{Command: want.Effective, Open: want.Open, FirstOpen: want.First}) {
			t.Errorf("lifespec.CommandTimeouts(%d) = %+v, want %d/%d/%d", raw, got, want.Effective, want.Open, want.First)
		}
		yaml := "browser: {}\n"
		if raw != 0 {
			yaml = fmt.Sprintf("browser:\n  command_timeout: %d\n", raw)
		}
		if got := int(loadConfig(t, yaml).Browser.CommandTimeout.Seconds()); got != want.Effective {
			t.Errorf("config command_timeout %d → %d s, want %d", raw, got, want.Effective)
		}
	}
}

func TestVectorScrollDirection(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.scroll_direction", 4) {
		var in struct {
			Direction string `json:"direction"`
		}
		var want struct {
			Valid  bool `json:"valid"`
			Pixels *int `json:"pixels"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		dy, ok := snapshot.ScrollDelta(in.Direction)
		if ok != want.Valid {
			t.Errorf("%q valid=%v, want %v", in.Direction, ok, want.Valid)
		}
		if want.Pixels != nil && (dy != *want.Pixels && dy != -*want.Pixels) {
			t.Errorf("%q: %d px, want %d", in.Direction, dy, *want.Pixels)
		}
	}
}

func TestVectorRefNormalize(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.ref_normalize", 3) {
		var in, want struct {
			Ref string `json:"ref"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		if got := snapshot.NormalizeRef(in.Ref); got != want.Ref {
			t.Errorf("snapshot.NormalizeRef(%q) = %q, want %q", in.Ref, got, want.Ref)
		}
		if snapshot.RefID(in.Ref) != strings.TrimPrefix(want.Ref, "@") {
			t.Errorf("snapshot.RefID(%q) = %q", in.Ref, snapshot.RefID(in.Ref))
		}
	}
}

func TestVectorBotDetectionHint(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.bot_detection_hint", 5) {
		var in struct {
			Title string `json:"title"`
		}
		var want struct {
			Warn bool `json:"bot_detection_warning"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		if got := snapshot.BotDetectionWarning(in.Title) != ""; got != want.Warn {
			t.Errorf("%q: warning=%v, want %v", in.Title, got, want.Warn)
		}
	}
}

// loadConfig loads yaml as <home>/config.yaml through the real loader.
func loadConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(config.Path(home), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestVectorEvalDenylist(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.eval_denylist", 28) {
		var in struct {
			Expression  string `json:"expression"`
			Restrict    bool   `json:"restrict_evaluate"`
			AllowUnsafe bool   `json:"allow_unsafe_evaluate"`
		}
		var want struct {
			Blocked bool    `json:"blocked"`
			Reason  *string `json:"reason"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(v.Note, func(t *testing.T) {
			got := evalpolicy.Denied(in.Expression, in.Restrict, in.AllowUnsafe)
			if (got != "") != want.Blocked || (want.Reason != nil && got != *want.Reason) {
				t.Errorf("evalpolicy.Denied(%q) = %q, want blocked=%v reason=%v", in.Expression, got, want.Blocked, want.Reason)
			}
		})
	}
}

func TestVectorEvalURLPrescreen(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.eval_url_prescreen", 5) {
		var in struct {
			Expression string `json:"expression"`
		}
		var want struct {
			URLs []string `json:"url_literals"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		if got := evalpolicy.URLLiterals(in.Expression); !slices.Equal(got, want.URLs) {
			t.Errorf("evalpolicy.URLLiterals(%q) = %q, want %q", in.Expression, got, want.URLs)
		}
	}
}
