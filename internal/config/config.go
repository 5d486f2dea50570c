// Package config loads and edits Gatehouse's configuration: the home directory,
// <home>/config.yaml and <home>/.env.
//
// # Layout
//
// The home directory is $GATEHOUSE_HOME, else ~/.gatehouse (see [Home]). It holds
// config.yaml (settings, see [Load], [Get], [Set]) and .env (API keys, see
// [LoadEnv] and [Lookup]). The key names follow the described system (spec §A12,
// §B13, §A6.5, §A8, §A9, §A10.1) so an existing config of that system reads
// unchanged: web.*, security.*, browser.*.
//
// # Values
//
// [Default] returns a complete value; every default is a named constant below.
// [Load] never fails on content it merely dislikes: an unknown key, a wrong type
// or an out-of-range number becomes a [Warning] (with file, line and column) and
// the key keeps its default or is clamped, so a typo can neither crash the tool
// nor stop the other keys from applying. A file that is not valid YAML (or
// cannot be read), or whose problem would silently weaken the website blocklist
// (see [KeyError]), is an error naming file:line:col; the tools then fail closed
// with reason config_invalid ([Invalid]); [Diagnose] reports the same for doctor.
//
// The file is decoded by walking the goccy/go-yaml AST against a private table
// of known keys (schema.go), and every value passes through the same setter and
// clamp functions whichever way it arrives: from the file ([Load]), from the CLI
// ([Set]) or from a Config built in Go ([Config.Normalized]).
//
// # Security
//
// Nothing in this package, and nothing that uses it, reads an environment
// variable that could weaken a gate. In particular there is deliberately no
// equivalent of the described system's HERMES_ALLOW_PRIVATE_URLS toggle (spec
// §A6.5): private URLs are allowed only by security.allow_private_urls (or the
// legacy browser.allow_private_urls) written in config.yaml. The only variable
// read here is GATEHOUSE_HOME, and only by [Home], at the edge; everything else
// takes the home directory as an argument.
package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// EnvHome names the environment variable that overrides the home directory.
const EnvHome = "GATEHOUSE_HOME"

// FileName is the settings file inside the home directory; EnvFileName the
// API-key file.
const (
	FileName    = "config.yaml"
	EnvFileName = ".env"
)

// maxFileBytes caps config.yaml and .env; a larger file is refused rather than
// parsed (a settings file is a few kilobytes).
const maxFileBytes = 1 << 20

// Web defaults and bounds (spec §A12, §A9.1, §A10.1, §A3).
const (
	DefaultExtractCharLimit = 15000  // chars; spec §A10.1
	MinExtractCharLimit     = 2000   // chars
	MaxExtractCharLimit     = 500000 // chars
	DefaultCacheTTLMinutes  = 20     // minutes; spec §A9.1
	MinCacheTTLMinutes      = 1
	MaxCacheTTLMinutes      = 1440 // 24 h
	// DefaultExtractTimeout is the per-dispatch wall-clock cap on extraction
	// (spec §A3); 0 in a Config means no cap.
	DefaultExtractTimeout = 120 * time.Second

	DefaultDirectConnectTimeout = 10 * time.Second
	DefaultDirectTimeout        = 30 * time.Second
	DefaultDirectMaxBodyBytes   = 10 << 20 // 10485760 bytes

	DefaultXAIModel   = "grok-build-0.1"
	DefaultXAITimeout = 90 * time.Second
)

// Provider tier values for web.provider_tier.<vendor> (spec §A5.2).
const (
	TierAuto = "auto" // keyed when a key is present, else keyless
	TierFree = "free" // always keyless
	TierPaid = "paid" // always keyed; excluded from the keyless ring
)

// Browser defaults and floors (spec §B13, §B5, §B7, §B9, §B12).
const (
	DefaultInactivityTimeout = 120 * time.Second
	MinInactivityTimeout     = 30 * time.Second
	DefaultCommandTimeout    = 30 * time.Second
	MinCommandTimeout        = 5 * time.Second
	DefaultSnapshotThreshold = 15000 // chars
	MinSnapshotThreshold     = 1000  // chars
	DefaultDialogTimeout     = 300 * time.Second
	// DefaultStandbyReplicas is browser.standby_replicas when unset.
	DefaultStandbyReplicas = 1
	// MaxStandbyReplicas caps browser.standby_replicas: every standby is one
	// more CDP attachment per session (docs/deploy.md).
	MaxStandbyReplicas   = 16
	DefaultLoopbackAlias = "host.docker.internal"
)

// Browser engines (browser.engine; unknown → auto).
const (
	EngineAuto       = "auto"
	EngineChrome     = "chrome"
	EngineLightpanda = "lightpanda"
)

// Dialog policies (browser.dialog_policy; unknown → must_respond).
const (
	DialogMustRespond = "must_respond"
	DialogAutoDismiss = "auto_dismiss"
	DialogAutoAccept  = "auto_accept"
)

// Config is the whole, typed configuration. A value from [Default], [Load] or
// [Config.Normalized] is complete: every field holds its default or a clamped
// user value, and maps and slices are non-nil.
type Config struct {
	Web      Web
	Security Security
	Browser  Browser
	MCP      MCP
	State    State
}

// State holds the shared-state settings (YAML block "state"; Gatehouse's
// own, issue 18): where replicas of one Gatehouse service keep what they
// share. The zero value is the embedded default (disk cache, one process).
type State struct {
	// RedisURL (state.redis_url) points every replica at one Redis:
	// redis://host:port/db, or rediss:// for TLS. The environment variable
	// GATEHOUSE_REDIS_URL wins over it; the password belongs in
	// REDIS_PASSWORD (environment or .env), not in config.yaml (a password in
	// this key refuses start-up, since `config get` prints values). ""
	// means no Redis: the embedded default. Trimmed; validated at start-up
	// (internal/state.Open), never silently dropped.
	RedisURL string
}

// MCP holds the MCP server settings (YAML block "mcp"; Gatehouse's own).
type MCP struct {
	// ContentBoundaries wraps page text in tool results in untrusted-content
	// markers with a per-call nonce (default true; `gatehouse mcp
	// --no-content-boundaries` also turns it off). The CLI's --json output is
	// never wrapped.
	ContentBoundaries bool
	// PrincipalMaxCalls caps the tool calls one principal (a caller of the
	// --tokens file, or the one caller of --token) runs at once over HTTP,
	// across all its sessions (mcp.principal_max_calls, integer ≥ 1,
	// default DefaultPrincipalMaxCalls); more are refused with
	// too_many_calls (HTTP 429, Retry-After).
	PrincipalMaxCalls int
	// PrincipalRate is the sustained tool calls per second one principal may
	// start over HTTP (mcp.principal_rate, a number > 0, default
	// DefaultPrincipalRate): a token bucket holding
	// max(PrincipalMaxCalls, ⌈rate⌉) calls; more are refused with
	// rate_limited (HTTP 429, Retry-After).
	PrincipalRate float64
	// ReplicaMaxCalls caps the tool calls one `gatehouse mcp --http` process
	// runs at once, over all sessions and principals (key
	// mcp.replica_max_calls, at least 1, default DefaultReplicaMaxCalls). A
	// call past it is answered HTTP 429 with Retry-After and reason
	// too_many_calls, so a load balancer tries another replica.
	ReplicaMaxCalls int
}

// Defaults of the per-principal limits (principal.DefaultMaxCalls and
// principal.DefaultRate): one agent never meets them.
const (
	DefaultPrincipalMaxCalls = 16
	DefaultPrincipalRate     = 10.0
)

// DefaultReplicaMaxCalls is mcp.replica_max_calls when unset: tool calls one
// HTTP server runs at once. Most calls wait on the network, so it is well
// above the core count; a browser call holds a Chromium tab for its length.
const DefaultReplicaMaxCalls = 64

// Web holds the web_search / web_extract settings (YAML block "web", spec §A12).
type Web struct {
	// Backend, SearchBackend and ExtractBackend name a provider (web.backend,
	// web.search_backend, web.extract_backend), trimmed and lower-cased; ""
	// means autodetect (spec §A4.2).
	Backend, SearchBackend, ExtractBackend string
	// SearchBackendFrom and ExtractBackendFrom name where SearchBackend and
	// ExtractBackend came from when it was not config.yaml (a per-call CLI
	// flag, "--backend"), so that an error blames the flag and names its
	// fix; "" means the config key. Never read from or written to YAML.
	SearchBackendFrom, ExtractBackendFrom string
	// ExtractCharLimit is the truncation budget in chars, clamped to
	// [MinExtractCharLimit, MaxExtractCharLimit] by [ClampCharLimit].
	ExtractCharLimit int
	// KeylessFallback enables the keyless tier; KeylessRescue the one-shot
	// keyless retry after a keyed failure (spec §A5).
	KeylessFallback, KeylessRescue bool
	// AutoKeylessSearch (web.auto_keyless_search, default true: spec
	// §A4.2's autodetect) lets search fall back on the keyless free-tier
	// ring when no search backend is configured and no vendor key is set.
	// False: such a search is refused (no_provider) instead of sending the
	// query to a third party nobody chose; a keyless vendor named in
	// web.search_backend, and the one-shot rescue, are not affected.
	AutoKeylessSearch bool
	// ProviderTier maps a lower-cased vendor name to TierFree, TierPaid or
	// TierAuto (spec §A5.2). Never nil.
	ProviderTier map[string]string
	// CacheEnabled turns the search memo and extract cache on (spec §A9).
	CacheEnabled bool
	// CacheTTLMinutes is the cache lifetime in whole minutes, clamped to
	// [1, 1440]; see [TTLFromMinutes] and [Web.CacheTTL].
	CacheTTLMinutes int
	// CacheExemptHosts lists host patterns never cached (spec §A9.2). Never nil.
	CacheExemptHosts []string
	// DisabledProviders lists backend names switched off (Gatehouse's counterpart
	// of a disabled web plugin, spec §A4.4): selecting one is a provider_disabled
	// error, never a silent reroute. Never nil.
	DisabledProviders []string
	// ExtractTimeout caps one extraction dispatch; 0 means no cap (spec §A3).
	ExtractTimeout time.Duration
	// AgentVisiblePaths maps a host path prefix to the prefix the agent sees
	// (used when reporting stored-file paths). Never nil.
	AgentVisiblePaths map[string]string
	// KeyedBackstop enables the keyed backstop after keyless failures.
	KeyedBackstop bool
	// XAI holds the web.xai block (spec §A11).
	XAI XAI
	// Direct holds the settings of Gatehouse's embedded fetcher (web.direct).
	Direct Direct
	// ExtractRender is web.extract_render: when the direct backend loads a
	// page in the local Chromium and converts its rendered DOM. RenderAuto
	// (default): when the fetched page is empty or an application shell;
	// RenderAlways: every HTML page; RenderNever: never.
	ExtractRender string
}

// Render modes (web.extract_render).
const (
	RenderAuto   = "auto"
	RenderAlways = "always"
	RenderNever  = "never"
)

// CacheTTL returns CacheTTLMinutes as a duration.
func (w Web) CacheTTL() time.Duration {
	return time.Duration(w.CacheTTLMinutes) * time.Minute
}

// XAI is the web.xai block (spec §A11).
type XAI struct {
	Model             string
	AllowedDomains    []string // never nil
	ExcludedDomains   []string // never nil
	EnableImageSearch bool
	Timeout           time.Duration // > 0
}

// Direct configures the embedded fetcher (YAML block web.direct). Durations
// are written in seconds in the file; a value ≤ 0 or unparseable keeps the
// default.
type Direct struct {
	ConnectTimeout time.Duration // TCP+TLS connect; default 10 s
	Timeout        time.Duration // whole request; default 30 s
	MaxBodyBytes   int64         // bytes read from a body; default 10485760
	UserAgent      string        // "" = the fetcher's default
}

// Security holds the gate settings (YAML block "security", spec §A6.5, §A8).
type Security struct {
	// AllowPrivateURLs lets SSRF checks pass private/internal answers (never
	// the metadata floor). Set only from the file: security.allow_private_urls,
	// or when that key is absent the legacy browser.allow_private_urls.
	AllowPrivateURLs bool
	// RedactSecrets (security.redact_secrets, default true, spec §A12)
	// redacts secrets (urlsafe.Redact) in page content: titles, markdown and
	// the stored full text. URLs and messages of Gatehouse's own output (rows,
	// meta.final_url, notes, logs, debug files, check) are always redacted,
	// whatever this says.
	RedactSecrets bool
	// FakeIPRanges lists CIDRs (or single IPs) declared as fake-IP DNS ranges;
	// syntactically invalid entries are dropped with a warning. The check for
	// undeclarable networks (spec §A6.1) belongs to the SSRF gate. Never nil.
	FakeIPRanges []string
	// WebsiteBlocklist is security.website_blocklist (spec §A8).
	WebsiteBlocklist Blocklist
}

// Blocklist is security.website_blocklist (spec §A8). Rules are kept as
// written (trimmed); normalising them is the policy gate's job.
type Blocklist struct {
	Enabled bool
	Domains []string // never nil
	// SharedFiles are rule-file paths. [Load] expands a leading "~" and makes
	// relative paths absolute against the home directory. Never nil.
	SharedFiles []string
}

// Browser holds the browser toolset settings (YAML block "browser", spec §B13).
type Browser struct {
	Backend string
	// ExecutablePath is browser.executable_path: the Chromium binary to run;
	// "" means look it up (CHROME_PATH, /usr/lib/chromium/chromium, PATH).
	ExecutablePath string
	// InactivityTimeout closes an idle session; floor 30 s (spec §B7).
	InactivityTimeout time.Duration
	// CommandTimeout bounds one browser command; floor 5 s (spec §B5).
	CommandTimeout time.Duration
	// SnapshotThreshold is the snapshot size in chars above which it is
	// truncated; floor 1000 (spec §B9).
	SnapshotThreshold int
	RecordSessions    bool
	Headed            bool
	// AllowPrivateURLs is the legacy spelling; see Security.AllowPrivateURLs.
	AllowPrivateURLs bool
	// Engine is EngineAuto, EngineChrome or EngineLightpanda.
	Engine                  string
	AutoLocalForPrivateURLs bool
	CDPURL                  string
	// NodeAllow is browser.node_allow: the addresses (CIDRs, IP addresses,
	// host names) a replica may dial when a browser node's record in Redis
	// names them (issue 19). Empty means loopback only. A node record is
	// data, not trust: an address outside this list is never dialed, and a
	// metadata address never, whatever the list says.
	NodeAllow []string
	// StandbyReplicas is browser.standby_replicas (issue 19, browser
	// nodes with shared state): how many other replicas attach to a new
	// record session in the background, before its next call reaches them
	// (docs/browser.md "Standby attachments"); each costs one CDP
	// attachment per session per standby replica. 0 turns it off; default
	// DefaultStandbyReplicas, 0–MaxStandbyReplicas.
	StandbyReplicas      int
	UseRealProfile       bool
	RealProfileAutoclose bool
	RealProfilePin       string
	AllowUnsafeEvaluate  bool
	RestrictEvaluate     bool
	// DialogPolicy is DialogMustRespond, DialogAutoDismiss or DialogAutoAccept.
	DialogPolicy string
	// DialogTimeout is the safety auto-dismiss under must_respond; a value
	// ≤ 0 or invalid keeps 300 s (spec §B12).
	DialogTimeout    time.Duration
	Camofox          Camofox
	ExtensionControl ExtensionControl
	// CloudProvider is browser.cloud_provider, trimmed and lower-cased.
	// CloudProviderSet reports whether it is non-empty: absent, null or ""
	// means auto-detect (Browser Use, then Browserbase); a name pins the
	// choice ("local" pins no cloud provider) (spec §B4).
	CloudProvider    string
	CloudProviderSet bool
}

// Camofox is browser.camofox (spec §B11).
type Camofox struct {
	ManagedPersistence  bool
	UserID              string
	SessionKey          string
	AdoptExistingTab    bool
	RewriteLoopbackURLs bool
	LoopbackHostAlias   string
}

// ExtensionControl is browser.extension_control.
type ExtensionControl struct {
	Enabled       bool
	DeveloperMode bool
}

// Default returns a complete configuration holding every default. Each call
// returns a fresh value (maps and slices are not shared).
func Default() *Config {
	return &Config{
		MCP: MCP{ContentBoundaries: true, PrincipalMaxCalls: DefaultPrincipalMaxCalls, PrincipalRate: DefaultPrincipalRate, ReplicaMaxCalls: DefaultReplicaMaxCalls},
		Web: Web{
			ExtractCharLimit:  DefaultExtractCharLimit,
			KeylessFallback:   true,
			KeylessRescue:     true,
			AutoKeylessSearch: true,
			ProviderTier:      map[string]string{},
			CacheEnabled:      true,
			CacheTTLMinutes:   DefaultCacheTTLMinutes,
			CacheExemptHosts:  []string{},
			DisabledProviders: []string{},
			ExtractTimeout:    DefaultExtractTimeout,
			ExtractRender:     RenderAuto,
			AgentVisiblePaths: map[string]string{},
			XAI: XAI{
				Model:           DefaultXAIModel,
				AllowedDomains:  []string{},
				ExcludedDomains: []string{},
				Timeout:         DefaultXAITimeout,
			},
			Direct: Direct{
				ConnectTimeout: DefaultDirectConnectTimeout,
				Timeout:        DefaultDirectTimeout,
				MaxBodyBytes:   DefaultDirectMaxBodyBytes,
			},
		},
		Security: Security{
			RedactSecrets: true,
			FakeIPRanges:  []string{},
			WebsiteBlocklist: Blocklist{
				Domains:     []string{},
				SharedFiles: []string{},
			},
		},
		Browser: Browser{
			InactivityTimeout:       DefaultInactivityTimeout,
			CommandTimeout:          DefaultCommandTimeout,
			SnapshotThreshold:       DefaultSnapshotThreshold,
			Engine:                  EngineAuto,
			AutoLocalForPrivateURLs: true,
			NodeAllow:               []string{},
			StandbyReplicas:         DefaultStandbyReplicas,
			DialogPolicy:            DialogMustRespond,
			DialogTimeout:           DefaultDialogTimeout,
			Camofox:                 Camofox{LoopbackHostAlias: DefaultLoopbackAlias},
		},
	}
}

// Home returns the Gatehouse home directory: $GATEHOUSE_HOME (trimmed, a
// leading "~" expanded, made absolute) when set and non-empty, else
// ~/.gatehouse. It does not create the directory. The error is non-nil only
// when the user's home directory is needed and cannot be determined.
func Home() (string, error) {
	if v := strings.TrimSpace(os.Getenv(EnvHome)); v != "" {
		p, err := expandTilde(v)
		if err != nil {
			return "", err
		}
		return filepath.Abs(p)
	}
	uh, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: cannot find the home directory (set %s): %w", EnvHome, err)
	}
	return filepath.Join(uh, ".gatehouse"), nil
}

// Path returns the config.yaml path inside home.
func Path(home string) string { return filepath.Join(home, FileName) }

// EnvPath returns the .env path inside home.
func EnvPath(home string) string { return filepath.Join(home, EnvFileName) }

// expandTilde expands a leading "~" or "~/" to the user's home directory.
// "~user" forms are returned unchanged.
func expandTilde(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, `~\`) {
		return p, nil
	}
	uh, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: cannot expand %q: %w", p, err)
	}
	if p == "~" {
		return uh, nil
	}
	return filepath.Join(uh, p[2:]), nil
}

// resolveSharedFile applies spec §A8's path rule: "~" expanded, relative paths
// resolved against home.
func resolveSharedFile(home, p string) string {
	if x, err := expandTilde(p); err == nil {
		p = x
	}
	if !filepath.IsAbs(p) && home != "" {
		p = filepath.Join(home, p)
	}
	return filepath.Clean(p)
}
