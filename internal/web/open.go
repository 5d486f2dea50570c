package web

import (
	"log/slog"
	"net/netip"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/state"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/vendors"
)

// Env is what Open needs to build a Service from a Gatehouse home.
type Env struct {
	Home   string         // GATEHOUSE_HOME; cache and stored pages go under <Home>/cache/web
	Config *config.Config // loaded config (config.Load); nil → config.Default()
	// Resolver replaces the system DNS resolver (tests); nil → system resolver.
	Resolver egress.Resolver
	// AllowAddrPorts lets the guard reach exactly these private IP:port pairs
	// (tests' loopback servers); set from Go code only.
	AllowAddrPorts []netip.AddrPort
	Logger         *slog.Logger
	Now            func() time.Time
	// Debug writes <Home>/logs/web_tools_debug_<id>.json per call (GATEHOUSE_DEBUG=1).
	Debug bool
	// DirectClient passes client settings (e.g. a test TLS config) to the direct backend.
	DirectClient egress.ClientOptions
	// DotEnv is the parsed $GATEHOUSE_HOME/.env (config.LoadEnv): API keys
	// and vendor URLs, consulted before the process environment. nil means
	// Open reads <Home>/.env itself.
	DotEnv map[string]string
	// SessionID seeds the keyless ring cursor (spec §A5.3); "" → random.
	SessionID string
	// VendorEndpoints overrides vendor base URLs (tests; see vendors.BuildOptions).
	VendorEndpoints map[string]string
	// VendorClient passes client settings to vendor clients (tests).
	VendorClient egress.ClientOptions
	// Renderer is the direct backend's render step (the browser Manager);
	// nil means pages are never rendered (web.extract_render auto then
	// reports rendering unavailable).
	Renderer direct.Renderer
	// State, when set (GATEHOUSE_REDIS_URL / state.redis_url), keeps the
	// extract cache, the search memo with its single flight, and stored
	// pages in Redis, shared by replicas (internal/state). Nil is the
	// embedded default: disk cache and store under Home, in-process memo.
	State *state.Redis
}

// CacheDir returns <home>/cache/web, where the extract cache and the full-text
// store live (spec §A9.2, §A10.4).
func CacheDir(home string) string { return filepath.Join(home, "cache", "web") }

// GateOptions is gate.Options: the urlsafe classification options from cfg;
// warnings name dropped security.fake_ip_ranges entries.
func GateOptions(cfg *config.Config) (urlsafe.Options, []string) { return gate.Options(cfg) }

// NewGuard builds the egress guard for cfg, without a website policy (see
// NewPolicyGuard).
func NewGuard(cfg *config.Config, resolver egress.Resolver, allow []netip.AddrPort) (*egress.Guard, []string) {
	return NewPolicyGuard(cfg, resolver, allow, nil)
}

// NewPolicyGuard builds the egress guard for cfg. pol (may be nil) is the
// website policy the guard's Decide applies to every request and redirect
// hop before it is dialed.
func NewPolicyGuard(cfg *config.Config, resolver egress.Resolver, allow []netip.AddrPort, pol *policy.Policy) (*egress.Guard, []string) {
	gopts, warns := GateOptions(cfg)
	return egress.New(egress.Options{
		Gate: gopts, Resolver: resolver, AllowAddrPorts: allow,
		ConnectTimeout: cfg.Web.Direct.ConnectTimeout, Policy: pol,
	}), warns
}

// LoadPolicy is gate.LoadPolicy: the website policy from cfg (shared files
// relative to home).
func LoadPolicy(cfg *config.Config, home string) (*policy.Policy, []string) {
	return gate.LoadPolicy(cfg, home)
}

// Open builds a Service with the embedded direct backend from env. The returned
// warnings (dropped fake-IP ranges, missing blocklist files) are for the user;
// none is fatal.
func Open(env Env) (*Service, []string) {
	cfg := env.Config
	if cfg == nil {
		cfg = config.Default()
	}
	pol, pw := LoadPolicy(cfg, env.Home)
	guard, warns := NewPolicyGuard(cfg, env.Resolver, env.AllowAddrPorts, pol)
	warns = append(warns, pw...)
	dir := CacheDir(env.Home)
	copts := cache.Options{
		Dir: dir, TTL: time.Duration(cfg.Web.CacheTTLMinutes) * time.Minute,
		Enabled: cfg.Web.CacheEnabled, ExemptHosts: cfg.Web.CacheExemptHosts, Now: env.Now,
	}
	store := &truncate.Store{Dir: dir, PathMap: cfg.Web.AgentVisiblePaths}
	if env.State != nil {
		copts.Shared, store.Shared = env.State, env.State
	}
	c := cache.New(copts)
	d := direct.New(direct.Options{
		Guard: guard, Timeout: cfg.Web.Direct.Timeout, MaxBodyBytes: cfg.Web.Direct.MaxBodyBytes,
		UserAgent: cfg.Web.Direct.UserAgent, ClientOptions: env.DirectClient,
		Render: cfg.Web.ExtractRender, Renderer: env.Renderer,
	})
	dotenv := env.DotEnv
	if dotenv == nil {
		// Every surface gets the keys of $GATEHOUSE_HOME/.env; warnings name
		// lines, never values.
		m, ew, err := config.LoadEnv(env.Home)
		for _, w := range ew {
			warns = append(warns, w.String())
		}
		if err != nil {
			warns = append(warns, err.Error()+" (API keys from the environment only)")
			m = map[string]string{}
		}
		dotenv = m
	}
	settings := provider.SettingsFrom(cfg, dotenv)
	backends := vendors.Build(vendors.BuildOptions{
		Settings: settings, Config: cfg, Guard: guard, ClientOptions: env.VendorClient,
		Direct: d, Endpoints: env.VendorEndpoints,
	})
	seed := env.SessionID
	if seed == "" {
		seed = newID()
	}
	var memoTTL time.Duration
	if cfg.Web.CacheEnabled {
		memoTTL = cfg.Web.CacheTTL()
	}
	deps := Deps{
		Config: cfg, Guard: guard, Policy: pol, Cache: c, Store: store,
		Registry: provider.NewRegistry(settings, backends, provider.NewCursor(seed), env.Logger),
		Memo:     newMemo(memoTTL, env),
		Logger:   env.Logger, Now: env.Now,
	}
	if env.Debug {
		deps.DebugDir = filepath.Join(env.Home, "logs")
	}
	return New(deps), warns
}
