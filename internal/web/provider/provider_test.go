package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/vectors"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func settings(env map[string]string) provider.Settings {
	return provider.Settings{KeylessFallback: true, KeylessRescue: true, Tier: map[string]string{}, Env: envOf(env)}
}

func TestVectorsRingOrder(t *testing.T) {
	for _, v := range vectors.Area(t, "keyless.ring_order", 6) {
		var in struct {
			Entry  string   `json:"entry_vendor"`
			Pinned bool     `json:"pinned"`
			Cursor int      `json:"cursor"`
			Paid   []string `json:"paid_pinned"`
		}
		var exp struct {
			Order []string `json:"order"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &exp)
		got := provider.RingWalk(in.Entry, in.Pinned, in.Cursor, in.Paid)
		if strings.Join(got, ",") != strings.Join(exp.Order, ",") {
			t.Errorf("%s: got %v, want %v", v.Note, got, exp.Order)
		}
	}
}

func TestVectorsFailoverClassifier(t *testing.T) {
	for _, v := range vectors.Area(t, "keyless.failover_classifier", 9) {
		var in struct {
			Error string `json:"error"`
		}
		var exp struct {
			RateLimitish bool `json:"rate_limitish"`
			Eligible     bool `json:"search_failover_eligible"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &exp)
		if got := provider.RateLimitish(in.Error); got != exp.RateLimitish {
			t.Errorf("RateLimitish(%q) = %v, want %v", in.Error, got, exp.RateLimitish)
		}
		if got := provider.SearchFailoverEligible(in.Error); got != exp.Eligible {
			t.Errorf("SearchFailoverEligible(%q) = %v, want %v", in.Error, got, exp.Eligible)
		}
		// Gatehouse's ring decision agrees with the described system except
		// for its known gap (spec §A5.4, #96185): a daily cap moves the ring on.
		want := exp.Eligible || strings.Contains(in.Error, "daily_cap")
		if got := provider.MovesRing(errors.New(in.Error)); got != want {
			t.Errorf("MovesRing(%q) = %v, want %v", in.Error, got, want)
		}
	}
}

func TestMovesRingStructured(t *testing.T) {
	for code, want := range map[reason.Code]bool{
		reason.VendorAuth: true, reason.VendorQuota: true, reason.VendorRateLimited: true,
		reason.VendorUnavailable: false, reason.VendorBadResponse: false, reason.VendorError: false, reason.Interrupted: false,
	} {
		if got := provider.MovesRing(reason.New(code, "", "x")); got != want {
			t.Errorf("%s: %v", code, got)
		}
	}
	// The IP-reputation 403 of a free tier (#91609, #113892) moves the ring on.
	if !provider.MovesRing(errors.New("Firecrawl keyless: your IP reputation is too low")) {
		t.Error("IP reputation block must move the ring")
	}
	page403 := provider.Page{Err: reason.New(reason.HTTPStatus, "", "the site answered HTTP 403")}
	throttled := provider.Page{Err: reason.New(reason.VendorRateLimited, "", "HTTP 429")}
	if provider.ExtractMovesRing([]provider.Page{page403, throttled}) {
		t.Error("a page's own 403 must not move the extract ring")
	}
	if !provider.ExtractMovesRing([]provider.Page{throttled, throttled}) {
		t.Error("an all-throttled batch must move the extract ring")
	}
}

func TestCursorSeededDeterministic(t *testing.T) {
	a, b := provider.NewCursor("session-1"), provider.NewCursor("session-1")
	for range 6 {
		if a.Next() != b.Next() {
			t.Fatal("same seed, different cursor sequence")
		}
	}
	starts := map[int]bool{}
	for i := range 40 {
		starts[provider.NewCursor("s"+string(rune('a'+i))).Peek()] = true
	}
	if len(starts) < 3 {
		t.Errorf("40 seeds cover only %d ring positions", len(starts))
	}
	c := provider.NewCursor("x")
	first := c.Next()
	if c.Next() != (first+1)%4 {
		t.Error("cursor does not advance by one")
	}
}

func TestResolveTypedErrors(t *testing.T) {
	cases := []struct {
		name string
		s    provider.Settings
		c    provider.Capability
		code reason.Code
		must []string
	}{
		{"search-only trap", provider.Settings{Backend: "xai", Env: envOf(map[string]string{"XAI_API_KEY": "k"})}, provider.CapExtract,
			reason.SearchOnlyBackend, []string{"search-only", "firecrawl", "tavily", "keenable", "exa", "parallel", "gatehouse config set web.extract_backend"}},
		{"unknown", provider.Settings{SearchBackend: "nosuch", Env: envOf(nil)}, provider.CapSearch, reason.UnknownBackend, []string{"nosuch", "never silently"}},
		{"disabled", provider.Settings{ExtractBackend: "firecrawl", Disabled: []string{"Firecrawl"}, Env: envOf(nil)}, provider.CapExtract, reason.ProviderDisabled, []string{"disabled_providers"}},
		{"missing key non-ring", provider.Settings{SearchBackend: "brave", Env: envOf(nil)}, provider.CapSearch, reason.MissingKey, []string{"BRAVE_SEARCH_API_KEY"}},
		{"missing url", provider.Settings{SearchBackend: "searxng", Env: envOf(nil)}, provider.CapSearch, reason.MissingKey, []string{"SEARXNG_URL"}},
		{"ring vendor, tier off", provider.Settings{SearchBackend: "exa", Env: envOf(nil)}, provider.CapSearch, reason.MissingKey, []string{"EXA_API_KEY"}},
		{"paid pinned without key", provider.Settings{SearchBackend: "exa", KeylessFallback: true, Tier: map[string]string{"exa": config.TierPaid}, Env: envOf(nil)}, provider.CapSearch, reason.MissingKey, []string{"EXA_API_KEY", "paid"}},
		{"nothing, tier off", provider.Settings{Env: envOf(nil)}, provider.CapSearch, reason.NoProvider, []string{"gatehouse config set"}},
	}
	for _, c := range cases {
		_, err := provider.Resolve(c.c, c.s)
		if err == nil || err.Code != c.code {
			t.Errorf("%s: got %v, want %s", c.name, err, c.code)
			continue
		}
		for _, m := range c.must {
			if !strings.Contains(err.Message, m) {
				t.Errorf("%s: message lacks %q: %s", c.name, m, err.Message)
			}
		}
	}
}

func TestResolveModes(t *testing.T) {
	cases := []struct {
		name      string
		s         provider.Settings
		c         provider.Capability
		wantName  string
		wantMode  provider.Mode
		wantWhyIn string
	}{
		{"extract default", settings(nil), provider.CapExtract, "direct", provider.ModeEmbedded, "embedded"},
		{"autodetect order", settings(map[string]string{"EXA_API_KEY": "e", "TAVILY_API_KEY": "t"}), provider.CapSearch, "tavily", provider.ModeKeyed, "TAVILY_API_KEY"},
		{"autodetect searxng", settings(map[string]string{"SEARXNG_URL": "http://10.0.0.2:8080"}), provider.CapSearch, "searxng", provider.ModeSelfHosted, "SEARXNG_URL"},
		{"keyless ring", settings(nil), provider.CapSearch, "keyless", provider.ModeKeyless, "keyless"},
		{"selected ring vendor without key", provider.Settings{SearchBackend: "parallel", KeylessFallback: true, Env: envOf(nil)}, provider.CapSearch, "parallel", provider.ModeKeyless, "PARALLEL_API_KEY is not set"},
		{"tier free with key", provider.Settings{SearchBackend: "exa", KeylessFallback: true, Tier: map[string]string{"exa": "free"}, Env: envOf(map[string]string{"EXA_API_KEY": "e"})}, provider.CapSearch, "exa", provider.ModeKeyless, "free"},
		{"backend direct: search autodetects", provider.Settings{Backend: "direct", KeylessFallback: true, Env: envOf(map[string]string{"BRAVE_SEARCH_API_KEY": "b"})}, provider.CapSearch, "brave-free", provider.ModeKeyed, "cannot search"},
		{"xai search works", provider.Settings{Backend: "xai", Env: envOf(map[string]string{"XAI_API_KEY": "x"})}, provider.CapSearch, "xai", provider.ModeKeyed, "web.backend"},
		{"split xai/firecrawl", provider.Settings{Backend: "xai", ExtractBackend: "firecrawl", Env: envOf(map[string]string{"FIRECRAWL_API_KEY": "f"})}, provider.CapExtract, "firecrawl", provider.ModeKeyed, "web.extract_backend"},
		{"nous alias", provider.Settings{ExtractBackend: "nous", Env: envOf(map[string]string{"FIRECRAWL_API_KEY": "f"})}, provider.CapExtract, "firecrawl", provider.ModeKeyed, ""},
		{"self-hosted firecrawl", provider.Settings{ExtractBackend: "firecrawl", Env: envOf(map[string]string{"FIRECRAWL_API_URL": "http://fc.lan:3002"})}, provider.CapExtract, "firecrawl", provider.ModeSelfHosted, "FIRECRAWL_API_URL"},
	}
	for _, c := range cases {
		r, err := provider.Resolve(c.c, c.s)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if r.Name != c.wantName || r.Mode != c.wantMode || !strings.Contains(r.Why, c.wantWhyIn) {
			t.Errorf("%s: got %+v", c.name, r)
		}
	}
}

// fakeSearcher returns rows or an error and counts calls.
type fakeSearcher struct {
	name  string
	err   error
	rows  []provider.Row
	calls atomic.Int32
}

func (f *fakeSearcher) Name() string { return f.name }
func (f *fakeSearcher) Search(context.Context, string, int) ([]provider.Row, error) {
	f.calls.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	return f.rows, nil
}

func ring(errs map[string]error) (map[string]*fakeSearcher, []*provider.Backend) {
	fakes := map[string]*fakeSearcher{}
	var bs []*provider.Backend
	for _, sp := range provider.Specs() {
		b := &provider.Backend{Spec: sp}
		if sp.Ring {
			f := &fakeSearcher{name: sp.Name, err: errs[sp.Name], rows: []provider.Row{{URL: "https://" + sp.Name + ".example/", Title: sp.Name}}}
			fakes[sp.Name] = f
			b.KeylessSearch = f
		}
		bs = append(bs, b)
	}
	return fakes, bs
}

func TestRingFailoverAndStop(t *testing.T) {
	fakes, bs := ring(map[string]error{
		"exa":      reason.New(reason.VendorRateLimited, "", "Keyless Exa: HTTP 429"),
		"parallel": reason.New(reason.VendorQuota, "", "daily_cap_reached"),
	})
	s := provider.Settings{SearchBackend: "exa", KeylessFallback: true, Env: envOf(nil)}
	reg := provider.NewRegistry(s, bs, nil, nil)
	res, rerr := reg.Resolve(provider.CapSearch)
	if rerr != nil {
		t.Fatal(rerr)
	}
	out, err := reg.Search(context.Background(), res, "q", 5)
	if err != nil {
		t.Fatal(err)
	}
	if out.ServedBy != "firecrawl" || fakes["keenable"].calls.Load() != 0 {
		t.Fatalf("served by %q; keenable calls %d", out.ServedBy, fakes["keenable"].calls.Load())
	}
	// A non-throttling error stops the walk and is returned.
	fakes, bs = ring(map[string]error{"exa": reason.New(reason.VendorBadResponse, "", "garbled")})
	reg = provider.NewRegistry(s, bs, nil, nil)
	if _, err := reg.Search(context.Background(), res, "q", 5); reason.Of(err) != reason.VendorBadResponse || fakes["parallel"].calls.Load() != 0 {
		t.Fatalf("walk did not stop: %v", err)
	}
	// Exhausting the ring names the vendors tried.
	all := map[string]error{}
	for _, v := range provider.RingOrder {
		all[v] = reason.New(reason.VendorRateLimited, "", v+" HTTP 429")
	}
	_, bs = ring(all)
	reg = provider.NewRegistry(s, bs, nil, nil)
	_, err = reg.Search(context.Background(), res, "q", 5)
	if reason.Of(err) != reason.KeylessExhausted || !strings.Contains(err.Error(), "exa, parallel, firecrawl, keenable") {
		t.Fatalf("exhausted: %v", err)
	}
	// All vendors pinned paid: the honest message.
	sp := s
	sp.SearchBackend = ""
	sp.Tier = map[string]string{"exa": "paid", "parallel": "paid", "firecrawl": "paid", "keenable": "paid"}
	if _, err := provider.Resolve(provider.CapSearch, sp); err == nil || !strings.Contains(err.Message, "pinned to paid") {
		t.Fatalf("all paid: %v", err)
	}
}

func TestUnpinnedRingAdvancesCursor(t *testing.T) {
	fakes, bs := ring(nil)
	s := settings(nil)
	reg := provider.NewRegistry(s, bs, provider.NewCursor("seed"), nil)
	res, _ := reg.Resolve(provider.CapSearch)
	seen := map[string]bool{}
	for range 4 {
		out, err := reg.Search(context.Background(), res, "q", 5)
		if err != nil {
			t.Fatal(err)
		}
		seen[out.ServedBy] = true
	}
	if len(seen) != 4 {
		t.Fatalf("4 unpinned calls used %v", seen)
	}
	for _, f := range fakes {
		if f.calls.Load() != 1 {
			t.Fatalf("%s called %d times", f.name, f.calls.Load())
		}
	}
}

type fakeExtractor struct {
	name  string
	page  func(u string) provider.Page
	calls atomic.Int32
}

func (f *fakeExtractor) Name() string { return f.name }
func (f *fakeExtractor) Extract(_ context.Context, urls []string, emit func(int, provider.Page)) {
	f.calls.Add(1)
	for i, u := range urls {
		p := f.page(u)
		p.URL = u
		emit(i, p)
	}
}

func extractRing(pages map[string]func(string) provider.Page) (map[string]*fakeExtractor, []*provider.Backend) {
	fakes := map[string]*fakeExtractor{}
	var bs []*provider.Backend
	for _, sp := range provider.Specs() {
		b := &provider.Backend{Spec: sp}
		if fn, ok := pages[sp.Name]; ok && sp.Ring {
			f := &fakeExtractor{name: sp.Name, page: fn}
			fakes[sp.Name], b.KeylessExtract = f, f
		}
		bs = append(bs, b)
	}
	return fakes, bs
}

func TestKeylessExtractRing(t *testing.T) {
	throttled := func(string) provider.Page {
		return provider.Page{Err: reason.New(reason.VendorRateLimited, "", "HTTP 429")}
	}
	ok := func(u string) provider.Page { return provider.Page{Content: "content of " + u} }
	page404 := func(string) provider.Page { return provider.Page{Err: reason.New(reason.HTTPStatus, "", "HTTP 404")} }
	fakes, bs := extractRing(map[string]func(string) provider.Page{"exa": throttled, "parallel": page404, "firecrawl": ok, "keenable": ok})
	s := provider.Settings{ExtractBackend: "exa", KeylessFallback: true, Env: envOf(nil)}
	reg := provider.NewRegistry(s, bs, nil, nil)
	res, err := reg.Resolve(provider.CapExtract)
	if err != nil || res.Mode != provider.ModeKeyless {
		t.Fatalf("%+v %v", res, err)
	}
	ext, _ := reg.Extractor(res)
	var got []provider.Page
	ext.Extract(context.Background(), []string{"https://a.example/"}, func(_ int, p provider.Page) { got = append(got, p) })
	// exa throttled → parallel; parallel's page-level 404 is returned as is.
	if len(got) != 1 || reason.Of(got[0].Err) != reason.HTTPStatus || got[0].ServedBy != "parallel" || fakes["firecrawl"].calls.Load() != 0 {
		t.Fatalf("%+v firecrawl calls %d", got, fakes["firecrawl"].calls.Load())
	}
}

func TestRescueEligibilityAndBackstop(t *testing.T) {
	s := provider.Settings{KeylessFallback: true, KeylessRescue: true, Env: envOf(nil)}
	reg := provider.NewRegistry(s, nil, nil, nil)
	for mode, want := range map[provider.Mode]bool{provider.ModeKeyed: true, provider.ModeKeyless: false,
		provider.ModeEmbedded: false, provider.ModeSelfHosted: false} {
		if got := reg.RescueEligible(provider.Resolution{Name: "x", Mode: mode}); got != want {
			t.Errorf("%s: %v", mode, got)
		}
	}
	off := provider.Settings{KeylessFallback: false, KeylessRescue: true, Env: envOf(nil)}
	if provider.NewRegistry(off, nil, nil, nil).RescueEligible(provider.Resolution{Mode: provider.ModeKeyed}) {
		t.Error("rescue must be off with the keyless tier off (SettingsFrom folds it)")
	}

	// Keyed backstop: exa pinned free (keyless) with a key; the ring is
	// exhausted; web.keyed_backstop retries once on the keyed path.
	all := map[string]error{}
	for _, v := range provider.RingOrder {
		all[v] = reason.New(reason.VendorRateLimited, "", "HTTP 429")
	}
	_, bs := ring(all)
	keyed := &fakeSearcher{name: "exa", rows: []provider.Row{{URL: "https://keyed.example/"}}}
	for _, b := range bs {
		if b.Name == "exa" {
			b.Search = keyed
		}
	}
	bk := provider.Settings{SearchBackend: "exa", KeylessFallback: true, KeyedBackstop: true,
		Tier: map[string]string{"exa": "free"}, Env: envOf(map[string]string{"EXA_API_KEY": "k"})}
	reg = provider.NewRegistry(bk, bs, nil, nil)
	res, _ := reg.Resolve(provider.CapSearch)
	out, err := reg.Search(context.Background(), res, "q", 5)
	if err != nil || keyed.calls.Load() != 1 || out.RescuedFrom != "keyless" || !out.Rescued() {
		t.Fatalf("backstop: %+v %v", out, err)
	}
	bk.KeyedBackstop = false
	reg = provider.NewRegistry(bk, bs, nil, nil)
	if _, err := reg.Search(context.Background(), res, "q", 5); reason.Of(err) != reason.KeylessExhausted || keyed.calls.Load() != 1 {
		t.Fatalf("no backstop when off: %v", err)
	}
}

func TestDoctorAdvice(t *testing.T) {
	s := provider.Settings{SearchBackend: "ddgs", KeylessFallback: false, KeylessRescue: false,
		Tier: map[string]string{"exa": "paid", "tavily": "free"}, Env: envOf(map[string]string{"XAI_API_KEY": "xai-VALUE-never-shown"})}
	r := provider.Doctor(s, true)
	codes := map[string]bool{}
	for _, a := range r.Advice {
		codes[a.Code] = true
		if a.Severity == "warning" && a.Fix == "" && a.Code != "backstop_unused" {
			t.Errorf("%s has no fix", a.Code)
		}
	}
	for _, want := range []string{"rescue_off", "paid_without_key", "tier_not_ring", "ddgs_best_effort"} {
		if !codes[want] {
			t.Errorf("advice %s missing: %+v", want, r.Advice)
		}
	}
	if r.Failed() || r.Search.Backend != "ddgs" || r.Extract.Backend != "direct" {
		t.Errorf("report %+v", r)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "xai-VALUE-never-shown") || !strings.Contains(string(b), `"var":"XAI_API_KEY","present":true`) {
		t.Errorf("report JSON: %s", b)
	}
}

// TestDoctorFlagsUnusableEndpoint: a SEARXNG_URL or FIRECRAWL_API_URL that
// egress refuses on every call (a metadata address, not http(s), not a URL,
// a password in it) is reported before it bites; doctor said "ready" and
// "No problems found" while every search failed. The value is never shown; a
// private address is a fine configured origin.
func TestDoctorFlagsUnusableEndpoint(t *testing.T) {
	for _, c := range []struct {
		val  string
		code reason.Code
	}{
		{"http://169.254.169.254/", reason.SSRFMetadata},
		{"ftp://127.0.0.1/", reason.UnsupportedScheme},
		{"searx.lan:8888", reason.UnsupportedScheme}, // no "http://": read as scheme searx.lan
		{"http://admin:hunter2secret@10.0.0.2:8888/", reason.CredentialsInURL},
	} {
		r := provider.Doctor(settings(map[string]string{"SEARXNG_URL": c.val}), true)
		var found *provider.Advice
		for i, a := range r.Advice {
			if a.Code == "endpoint_invalid" {
				found = &r.Advice[i]
			}
		}
		if found == nil || found.Severity != "error" || !strings.Contains(found.Message, string(c.code)) || found.Fix == "" || !r.Failed() {
			t.Errorf("SEARXNG_URL=%s: advice %+v", c.val, r.Advice)
		}
		for _, p := range r.Providers {
			if p.Name == "searxng" && p.Ready {
				t.Errorf("SEARXNG_URL=%s: searxng still ready", c.val)
			}
		}
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), "hunter2") || strings.Contains(string(b), "169.254") {
			t.Errorf("report carries the value: %s", b)
		}
	}
	for _, ok := range []string{"http://10.0.0.2:8888/", "https://searx.example/", "http://localhost:8080/searx"} {
		r := provider.Doctor(settings(map[string]string{"SEARXNG_URL": ok}), true)
		for _, a := range r.Advice {
			if a.Code == "endpoint_invalid" {
				t.Errorf("SEARXNG_URL=%s flagged: %+v", ok, a)
			}
		}
	}
	// A firecrawl endpoint nobody selected is a warning, not a failure.
	st := settings(map[string]string{"FIRECRAWL_API_URL": "ftp://x/"})
	st.SearchBackend = "ddgs"
	r := provider.Doctor(st, true)
	if r.Failed() {
		t.Errorf("unselected firecrawl endpoint fails doctor: %+v", r.Advice)
	}
	for _, a := range r.Advice {
		if a.Code == "endpoint_invalid" && a.Severity != "warning" {
			t.Errorf("unselected firecrawl endpoint: %+v", a)
		}
	}
}

// TestResolveErrorsNeverEchoASecret: an API key pasted as a backend name
// (web.backend: sk-proj-…) is not printed back by unknown_backend or
// provider_disabled (doctor, extract rows and search errors showed it).
func TestResolveErrorsNeverEchoASecret(t *testing.T) {
	const key = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	for _, s := range []provider.Settings{
		{Backend: key, Env: envOf(nil)},
		{SearchBackend: key, ExtractBackend: key, Disabled: []string{key}, Env: envOf(nil)},
	} {
		for _, c := range []provider.Capability{provider.CapSearch, provider.CapExtract} {
			_, err := provider.Resolve(c, s)
			if err == nil || strings.Contains(err.Message, "abcdefghij") {
				t.Errorf("Resolve(%v) = %v", c, err)
			}
		}
		b, _ := json.Marshal(provider.Doctor(s, true))
		if strings.Contains(string(b), "abcdefghij") {
			t.Errorf("doctor report carries the key: %s", b)
		}
	}
}

// TestAutoKeylessDisclosedAndRefusable: with nothing configured and no key
// set, search autodetects the keyless ring (spec §A4.2) and the resolution
// says it was an automatic choice; doctor's report carries the notice; with
// web.auto_keyless_search: false (RefuseAutoKeyless) the same settings are
// a typed no_provider refusal naming how to configure a backend, while a
// keyless vendor chosen by name still works (issue 16 item 12).
func TestAutoKeylessDisclosedAndRefusable(t *testing.T) {
	s := settings(nil)
	r, err := provider.Resolve(provider.CapSearch, s)
	if err != nil || r.Name != provider.Keyless || !r.AutoKeyless() || !strings.Contains(r.Why, "chosen automatically") {
		t.Fatalf("default: %+v %v; want the keyless ring, marked automatic", r, err)
	}
	rep := provider.Doctor(s, true)
	if !rep.Search.AutoKeyless || !strings.Contains(rep.Search.Notice, "web.auto_keyless_search false") {
		t.Errorf("doctor: %+v; want the automatic keyless notice", rep.Search)
	}
	if n := provider.AutoKeylessNotice("exa"); !strings.Contains(n, "exa's keyless free search service") || !strings.Contains(n, "picked automatically") {
		t.Errorf("notice %q does not name the service", n)
	}
	for _, named := range []provider.Settings{
		{SearchBackend: "exa", KeylessFallback: true, Env: envOf(nil)},
		{SearchBackend: "exa", KeylessFallback: true, RefuseAutoKeyless: true, Env: envOf(nil)},
		settings(map[string]string{"TAVILY_API_KEY": "t"}),
	} {
		r, err := provider.Resolve(provider.CapSearch, named)
		if err != nil || r.AutoKeyless() {
			t.Errorf("%+v: %+v %v; a chosen or keyed backend is not an automatic keyless choice", named, r, err)
		}
	}
	s.RefuseAutoKeyless = true
	if _, err := provider.Resolve(provider.CapSearch, s); err == nil || err.Code != reason.NoProvider ||
		!strings.Contains(err.Message, "web.auto_keyless_search is false") || !strings.Contains(err.Message, "gatehouse config set web.search_backend") {
		t.Errorf("auto keyless off: %v; want no_provider naming how to configure a backend", err)
	}
	if rep := provider.Doctor(s, true); rep.Search.Reason != reason.NoProvider || rep.Search.AutoKeyless {
		t.Errorf("doctor, auto keyless off: %+v", rep.Search)
	}
}
