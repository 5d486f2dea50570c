package config

import (
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/goccy/go-yaml"
)

// field is one node of the key table: a block (children != nil) or a leaf
// (set/get != nil). The table is the single description of the file format:
// Load walks it, Get renders it, Set validates against it, Normalized round-
// trips through it.
type field struct {
	name     string
	typ      string // human-readable type, used in messages
	children []*field

	// set applies a decoded, non-nil YAML value to c. It returns nil when the
	// value was used as given, or a problem: rejected (the default was kept)
	// or adjusted (clamped, entries dropped). home resolves relative paths.
	set func(c *Config, v any, home string) *problem
	// get renders the current value as a YAML-marshalable Go value.
	get func(c *Config) any
	// mapLeaf marks a string map whose entries are addressable as key.<entry>.
	mapLeaf bool
	// literal marks a string-valued leaf: Set takes its text as is.
	literal bool
	// urlNoPassword marks a URL leaf that must never hold a password
	// (state.redis_url: config get prints values): Set refuses one and get
	// shows it as "xxxxx" (the password belongs in the environment).
	urlNoPassword bool
	// isBool marks a boolean leaf: Set writes true/false, never "yes".
	isBool bool
	// canonical marks a leaf whose file value Set writes in the form Load
	// keeps (an enum: "AUTO_DISMISS" is written auto_dismiss).
	canonical bool
	// successor marks a legacy leaf (spec §A6.5): Load still reads it
	// from existing files, with a warning, but Get, Set, Keys and the
	// rendered blocks know only the successor key named here, so the key a
	// user reads is the key a user can write.
	successor string
}

// problem describes why a value was not used exactly as written: msg says
// what is wrong, fallback what Load did instead ("using 20").
type problem struct {
	msg      string
	fallback string
	rejected bool // true: default kept; false: value adjusted
}

// rejectf reports a value that was not used at all.
func rejectf(fallback, format string, a ...any) *problem {
	return &problem{msg: fmt.Sprintf(format, a...), fallback: fallback, rejected: true}
}

// adjustf reports a value that was used after adjustment.
func adjustf(fallback, format string, a ...any) *problem {
	return &problem{msg: fmt.Sprintf(format, a...), fallback: fallback}
}

// warning is the text Load reports.
func (p *problem) warning() string {
	if p.fallback == "" {
		return p.msg
	}
	return p.msg + "; " + p.fallback
}

func (f *field) isBlock() bool { return f.children != nil }

func (f *field) child(name string) *field {
	for _, c := range f.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// childNames lists the block's keys, legacy leaves left out.
func (f *field) childNames() []string {
	out := make([]string, 0, len(f.children))
	for _, c := range f.children {
		if c.successor == "" {
			out = append(out, c.name)
		}
	}
	return out
}

// render returns the block's current values as an ordered YAML mapping.
func (f *field) render(c *Config) any {
	if !f.isBlock() {
		return f.get(c)
	}
	ms := make(yaml.MapSlice, 0, len(f.children))
	for _, ch := range f.children {
		if ch.successor != "" {
			continue // a legacy key: its value shows under its successor
		}
		ms = append(ms, yaml.MapItem{Key: ch.name, Value: ch.render(c)})
	}
	return ms
}

// schema is the root of the key table.
var schema = &field{name: "", children: []*field{
	block("web",
		str("backend", func(c *Config) *string { return &c.Web.Backend }, lowerTrim),
		str("search_backend", func(c *Config) *string { return &c.Web.SearchBackend }, lowerTrim),
		str("extract_backend", func(c *Config) *string { return &c.Web.ExtractBackend }, lowerTrim),
		charLimitField(),
		boolean("keyless_fallback", func(c *Config) *bool { return &c.Web.KeylessFallback }),
		boolean("keyless_rescue", func(c *Config) *bool { return &c.Web.KeylessRescue }),
		boolean("auto_keyless_search", func(c *Config) *bool { return &c.Web.AutoKeylessSearch }),
		providerTierField(),
		boolean("cache_enabled", func(c *Config) *bool { return &c.Web.CacheEnabled }),
		cacheTTLField(),
		strList("cache_exempt_hosts", func(c *Config) *[]string { return &c.Web.CacheExemptHosts }, listStrict),
		strList("disabled_providers", func(c *Config) *[]string { return &c.Web.DisabledProviders }, listOrScalar),
		extractTimeoutField(),
		enum("extract_render", func(c *Config) *string { return &c.Web.ExtractRender }, RenderAuto, RenderAlways, RenderNever),
		boolean("keyed_backstop", func(c *Config) *bool { return &c.Web.KeyedBackstop }),
		strMap("agent_visible_paths", func(c *Config) *map[string]string { return &c.Web.AgentVisiblePaths }, nil),
		block("xai",
			str("model", func(c *Config) *string { return &c.Web.XAI.Model }, strings.TrimSpace),
			strList("allowed_domains", func(c *Config) *[]string { return &c.Web.XAI.AllowedDomains }, listOrScalar),
			strList("excluded_domains", func(c *Config) *[]string { return &c.Web.XAI.ExcludedDomains }, listOrScalar),
			boolean("enable_image_search", func(c *Config) *bool { return &c.Web.XAI.EnableImageSearch }),
			seconds("timeout", func(c *Config) *time.Duration { return &c.Web.XAI.Timeout }, DefaultXAITimeout, 0),
		),
		block("direct",
			seconds("connect_timeout", func(c *Config) *time.Duration { return &c.Web.Direct.ConnectTimeout }, DefaultDirectConnectTimeout, 0),
			seconds("timeout", func(c *Config) *time.Duration { return &c.Web.Direct.Timeout }, DefaultDirectTimeout, 0),
			maxBodyField(),
			str("user_agent", func(c *Config) *string { return &c.Web.Direct.UserAgent }, strings.TrimSpace),
		),
	),
	block("security",
		boolean("allow_private_urls", func(c *Config) *bool { return &c.Security.AllowPrivateURLs }),
		boolean("redact_secrets", func(c *Config) *bool { return &c.Security.RedactSecrets }),
		fakeIPField(),
		block("website_blocklist",
			boolean("enabled", func(c *Config) *bool { return &c.Security.WebsiteBlocklist.Enabled }),
			strList("domains", func(c *Config) *[]string { return &c.Security.WebsiteBlocklist.Domains }, listOrScalar),
			sharedFilesField(),
		),
	),
	block("browser",
		str("backend", func(c *Config) *string { return &c.Browser.Backend }, lowerTrim),
		str("executable_path", func(c *Config) *string { return &c.Browser.ExecutablePath }, strings.TrimSpace),
		seconds("inactivity_timeout", func(c *Config) *time.Duration { return &c.Browser.InactivityTimeout }, DefaultInactivityTimeout, MinInactivityTimeout),
		seconds("command_timeout", func(c *Config) *time.Duration { return &c.Browser.CommandTimeout }, DefaultCommandTimeout, MinCommandTimeout),
		intFloor("snapshot_threshold", func(c *Config) *int { return &c.Browser.SnapshotThreshold }, DefaultSnapshotThreshold, MinSnapshotThreshold),
		boolean("record_sessions", func(c *Config) *bool { return &c.Browser.RecordSessions }),
		boolean("headed", func(c *Config) *bool { return &c.Browser.Headed }),
		legacy(boolean("allow_private_urls", func(c *Config) *bool { return &c.Browser.AllowPrivateURLs }), "security.allow_private_urls"),
		enum("engine", func(c *Config) *string { return &c.Browser.Engine }, EngineAuto, EngineChrome, EngineLightpanda),
		boolean("auto_local_for_private_urls", func(c *Config) *bool { return &c.Browser.AutoLocalForPrivateURLs }),
		str("cdp_url", func(c *Config) *string { return &c.Browser.CDPURL }, strings.TrimSpace),
		nodeAllowField(),
		intRange("standby_replicas", func(c *Config) *int { return &c.Browser.StandbyReplicas }, DefaultStandbyReplicas, 0, MaxStandbyReplicas),
		boolean("use_real_profile", func(c *Config) *bool { return &c.Browser.UseRealProfile }),
		boolean("real_profile_autoclose", func(c *Config) *bool { return &c.Browser.RealProfileAutoclose }),
		str("real_profile_pin", func(c *Config) *string { return &c.Browser.RealProfilePin }, strings.TrimSpace),
		boolean("allow_unsafe_evaluate", func(c *Config) *bool { return &c.Browser.AllowUnsafeEvaluate }),
		boolean("restrict_evaluate", func(c *Config) *bool { return &c.Browser.RestrictEvaluate }),
		enum("dialog_policy", func(c *Config) *string { return &c.Browser.DialogPolicy }, DialogMustRespond, DialogAutoDismiss, DialogAutoAccept),
		seconds("dialog_timeout_s", func(c *Config) *time.Duration { return &c.Browser.DialogTimeout }, DefaultDialogTimeout, 0),
		block("camofox",
			boolean("managed_persistence", func(c *Config) *bool { return &c.Browser.Camofox.ManagedPersistence }),
			str("user_id", func(c *Config) *string { return &c.Browser.Camofox.UserID }, strings.TrimSpace),
			str("session_key", func(c *Config) *string { return &c.Browser.Camofox.SessionKey }, strings.TrimSpace),
			boolean("adopt_existing_tab", func(c *Config) *bool { return &c.Browser.Camofox.AdoptExistingTab }),
			boolean("rewrite_loopback_urls", func(c *Config) *bool { return &c.Browser.Camofox.RewriteLoopbackURLs }),
			str("loopback_host_alias", func(c *Config) *string { return &c.Browser.Camofox.LoopbackHostAlias }, strings.TrimSpace),
		),
		block("extension_control",
			boolean("enabled", func(c *Config) *bool { return &c.Browser.ExtensionControl.Enabled }),
			boolean("developer_mode", func(c *Config) *bool { return &c.Browser.ExtensionControl.DeveloperMode }),
		),
		cloudProviderField(),
	),
	block("mcp",
		boolean("content_boundaries", func(c *Config) *bool { return &c.MCP.ContentBoundaries }),
		intFloor("principal_max_calls", func(c *Config) *int { return &c.MCP.PrincipalMaxCalls }, DefaultPrincipalMaxCalls, 1),
		positive("principal_rate", func(c *Config) *float64 { return &c.MCP.PrincipalRate }, DefaultPrincipalRate),
		intFloor("replica_max_calls", func(c *Config) *int { return &c.MCP.ReplicaMaxCalls }, DefaultReplicaMaxCalls, 1),
	),
	block("state",
		noPassword(str("redis_url", func(c *Config) *string { return &c.State.RedisURL }, strings.TrimSpace)),
	),
}}

func block(name string, children ...*field) *field {
	return &field{name: name, typ: "mapping", children: children}
}

// legacy marks leaf f as a legacy key whose successor is the dotted key
// successor: files written for the described system still load, but Get,
// Set, Keys and rendered blocks name only the successor.
func legacy(f *field, successor string) *field {
	f.successor = successor
	return f
}

func lowerTrim(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// describe names v for a message: numbers by value, everything else by type
// (strings are not echoed: a misplaced secret must not reach a log).
func describe(v any) string {
	if _, isBool := v.(bool); !isBool {
		if f, ok := floatValue(v, false); ok {
			return fmt.Sprint(f)
		}
	}
	return typeName(v)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case float32, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	if _, ok := intValue(v, false); ok {
		return "an integer"
	}
	return fmt.Sprintf("%T", v)
}

func boolean(name string, p func(*Config) *bool) *field {
	return &field{
		name: name, typ: "boolean (true/false)", isBool: true,
		set: func(c *Config, v any, _ string) *problem {
			b, ok := boolValue(v)
			if !ok {
				return rejectf(fmt.Sprintf("keeping the default %t", *p(c)), "want true or false (or yes/no, on/off, 1/0), got %s", typeName(v))
			}
			*p(c) = b
			return nil
		},
		get: func(c *Config) any { return *p(c) },
	}
}

func str(name string, p func(*Config) *string, norm func(string) string) *field {
	return &field{
		name: name, typ: "string", literal: true,
		set: func(c *Config, v any, _ string) *problem {
			s, ok := v.(string)
			if !ok {
				return rejectf(fmt.Sprintf("keeping the default %q", *p(c)), "want a string, got %s (quote the value)", typeName(v))
			}
			*p(c) = norm(s)
			return nil
		},
		get: func(c *Config) any { return *p(c) },
	}
}

// noPassword marks URL leaf f as one that never holds a password (see
// field.urlNoPassword).
func noPassword(f *field) *field {
	f.urlNoPassword = true
	get := f.get
	f.get = func(c *Config) any {
		v, _ := get(c).(string)
		return RedactURLPassword(v)
	}
	return f
}

// URLHasPassword reports whether raw parses as a URL whose userinfo holds a
// password (redis://:pw@host, redis://user:pw@host).
func URLHasPassword(raw string) bool {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return false
	}
	_, has := u.User.Password()
	return has
}

// RedactURLPassword returns raw with a userinfo password replaced by
// "xxxxx" (raw unchanged when it holds none or does not parse).
func RedactURLPassword(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); !has {
		return raw
	}
	u.User = url.UserPassword(u.User.Username(), "xxxxx")
	return u.String()
}

func enum(name string, p func(*Config) *string, def string, others ...string) *field {
	allowed := append([]string{def}, others...)
	return &field{
		name: name, typ: "one of " + strings.Join(allowed, ", "), literal: true, canonical: true,
		set: func(c *Config, v any, _ string) *problem {
			s, ok := v.(string)
			if !ok {
				return rejectf(fmt.Sprintf("using %q", def), "want one of %s, got %s", strings.Join(allowed, ", "), typeName(v))
			}
			s = lowerTrim(s)
			for _, a := range allowed {
				if s == a {
					*p(c) = s
					return nil
				}
			}
			*p(c) = def
			return rejectf(fmt.Sprintf("using %q", def), "unknown value %q (want one of %s)", s, strings.Join(allowed, ", "))
		},
		get: func(c *Config) any { return *p(c) },
	}
}

// seconds is a duration written as a number of seconds. A value ≤ 0, or
// unparseable, keeps def; a positive value under floor is raised to floor.
func seconds(name string, p func(*Config) *time.Duration, def, floor time.Duration) *field {
	return &field{
		name: name, typ: "number of seconds",
		set: func(c *Config, v any, _ string) *problem {
			f, ok := floatValue(v, true)
			if !ok {
				*p(c) = def
				return rejectf(fmt.Sprintf("using %v", def), "want a number of seconds, got %s", typeName(v))
			}
			if f <= 0 {
				*p(c) = def
				return rejectf(fmt.Sprintf("using %v", def), "must be positive")
			}
			d := secondsToDuration(f)
			if d < floor {
				*p(c) = floor
				return adjustf(fmt.Sprintf("raised to %v", floor), "%v is below the minimum %v", d, floor)
			}
			*p(c) = d
			return nil
		},
		get: func(c *Config) any { return durationSeconds(*p(c)) },
	}
}

// positive is a number > 0 (a rate); anything else keeps def.
func positive(name string, p func(*Config) *float64, def float64) *field {
	return &field{
		name: name, typ: "number > 0",
		set: func(c *Config, v any, _ string) *problem {
			f, ok := floatValue(v, true)
			if !ok || f <= 0 || math.IsInf(f, 0) {
				*p(c) = def
				return rejectf(fmt.Sprintf("using %g", def), "want a number greater than 0, got %v", v)
			}
			*p(c) = f
			return nil
		},
		get: func(c *Config) any { return *p(c) },
	}
}

// intFloor is an integer with a floor; a non-number keeps def.
func intFloor(name string, p func(*Config) *int, def, floor int) *field {
	return intRange(name, p, def, floor, 1<<31-1)
}

// intRange is an integer in [floor, ceil]; a non-number keeps def, one
// outside is clamped (and said so).
func intRange(name string, p func(*Config) *int, def, floor, ceil int) *field {
	typ := fmt.Sprintf("integer ≥ %d", floor)
	if ceil < 1<<31-1 {
		typ = fmt.Sprintf("integer %d–%d", floor, ceil)
	}
	return &field{
		name: name, typ: typ,
		set: func(c *Config, v any, _ string) *problem {
			n, ok := intValue(v, false)
			if !ok {
				*p(c) = def
				return rejectf(fmt.Sprintf("using %d", def), "want an integer, got %s", typeName(v))
			}
			m := clampInt64(n, int64(floor), int64(ceil))
			*p(c) = int(m)
			switch {
			case n < int64(floor):
				return adjustf(fmt.Sprintf("using %d", m), "%d is below the minimum %d", n, floor)
			case n > int64(ceil):
				return adjustf(fmt.Sprintf("using %d", m), "%d is above the maximum %d", n, ceil)
			}
			return nil
		},
		get: func(c *Config) any { return int64(*p(c)) },
	}
}

type listMode int

const (
	listStrict   listMode = iota // a non-list is rejected
	listOrScalar                 // a single string counts as a one-item list
)

// toStrings turns a decoded YAML value into strings. Non-string items are
// dropped and named in bad; blank items are dropped silently.
func toStrings(v any, mode listMode) (out []string, bad []string, ok bool) {
	var items []any
	switch x := v.(type) {
	case []any:
		items = x
	case string:
		if mode != listOrScalar {
			return nil, nil, false
		}
		items = []any{x}
	default:
		return nil, nil, false
	}
	out = []string{}
	for i, it := range items {
		s, isStr := it.(string)
		if !isStr {
			bad = append(bad, fmt.Sprintf("item %d is %s", i+1, typeName(it)))
			continue
		}
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, bad, true
}

func strList(name string, p func(*Config) *[]string, mode listMode) *field {
	return &field{
		name: name, typ: "list of strings",
		set: func(c *Config, v any, _ string) *problem {
			out, bad, ok := toStrings(v, mode)
			if !ok {
				return rejectf("ignored", "want a list of strings (e.g. [a, b]), got %s", typeName(v))
			}
			*p(c) = out
			if len(bad) > 0 {
				return adjustf("those entries were dropped", "non-string entries: %s", strings.Join(bad, "; "))
			}
			return nil
		},
		get: func(c *Config) any { return append([]string{}, *p(c)...) },
	}
}

// strMap is a mapping of string to string. normVal, when set, normalises a
// value and may reject it (ok false).
func strMap(name string, p func(*Config) *map[string]string, normVal func(string) (string, bool)) *field {
	return &field{
		name: name, typ: "mapping of strings", mapLeaf: true,
		set: func(c *Config, v any, _ string) *problem {
			m, ok := v.(map[string]any)
			if !ok {
				return rejectf("ignored", "want a mapping (key: value), got %s", typeName(v))
			}
			out := make(map[string]string, len(m))
			var bad []string
			for k, raw := range m {
				s, isStr := raw.(string)
				if !isStr {
					bad = append(bad, fmt.Sprintf("%s is %s", k, typeName(raw)))
					continue
				}
				s = strings.TrimSpace(s)
				if normVal != nil {
					var good bool
					if s, good = normVal(s); !good {
						bad = append(bad, fmt.Sprintf("%s has unknown value %q", k, raw))
					}
				}
				out[k] = s
			}
			*p(c) = out
			if len(bad) > 0 {
				sort.Strings(bad)
				return adjustf("", "%s", strings.Join(bad, "; "))
			}
			return nil
		},
		get: func(c *Config) any { return sortedMap(*p(c)) },
	}
}

func sortedMap(m map[string]string) yaml.MapSlice {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	ms := make(yaml.MapSlice, 0, len(keys))
	for _, k := range keys {
		ms = append(ms, yaml.MapItem{Key: k, Value: m[k]})
	}
	return ms
}

// providerTierField: web.provider_tier.<vendor> = free | paid | auto; vendor
// names lower-cased; anything else counts as auto (spec §A5.2).
func providerTierField() *field {
	f := strMap("provider_tier", func(c *Config) *map[string]string { return &c.Web.ProviderTier },
		func(s string) (string, bool) {
			switch s = lowerTrim(s); s {
			case TierFree, TierPaid, TierAuto:
				return s, true
			}
			return TierAuto, false
		})
	inner := f.set
	f.typ = "mapping of vendor to free, paid or auto"
	f.set = func(c *Config, v any, home string) *problem {
		pr := inner(c, v, home)
		lower := make(map[string]string, len(c.Web.ProviderTier))
		for k, t := range c.Web.ProviderTier {
			lower[lowerTrim(k)] = t
		}
		c.Web.ProviderTier = lower
		if pr != nil && !pr.rejected {
			pr.fallback = "treated as auto"
		}
		return pr
	}
	return f
}

func charLimitField() *field {
	return &field{
		name: "extract_char_limit", typ: fmt.Sprintf("integer %d–%d (chars)", MinExtractCharLimit, MaxExtractCharLimit),
		set: func(c *Config, v any, _ string) *problem {
			n, ok := intValue(v, false)
			c.Web.ExtractCharLimit = ClampCharLimit(v)
			if !ok {
				return rejectf(fmt.Sprintf("using %d", DefaultExtractCharLimit), "want an integer number of chars, got %s", typeName(v))
			}
			if int64(c.Web.ExtractCharLimit) != n {
				return adjustf(fmt.Sprintf("clamped to %d", c.Web.ExtractCharLimit), "%d is outside %d–%d", n, MinExtractCharLimit, MaxExtractCharLimit)
			}
			return nil
		},
		get: func(c *Config) any { return int64(c.Web.ExtractCharLimit) },
	}
}

func cacheTTLField() *field {
	return &field{
		name: "cache_ttl_minutes", typ: fmt.Sprintf("integer %d–%d (minutes)", MinCacheTTLMinutes, MaxCacheTTLMinutes),
		set: func(c *Config, v any, _ string) *problem {
			n, ok := intValue(v, true)
			c.Web.CacheTTLMinutes = cacheTTLMinutes(v)
			if !ok {
				return rejectf(fmt.Sprintf("using %d", DefaultCacheTTLMinutes), "want a number of minutes, got %s", typeName(v))
			}
			if int64(c.Web.CacheTTLMinutes) != n {
				return adjustf(fmt.Sprintf("using %d", c.Web.CacheTTLMinutes), "%v is outside %d–%d minutes", v, MinCacheTTLMinutes, MaxCacheTTLMinutes)
			}
			return nil
		},
		get: func(c *Config) any { return int64(c.Web.CacheTTLMinutes) },
	}
}

func extractTimeoutField() *field {
	return &field{
		name: "extract_timeout", typ: `number of seconds (0, a negative number or "none" = no cap)`,
		set: func(c *Config, v any, _ string) *problem {
			if isNoCap(v) {
				c.Web.ExtractTimeout = 0
				return nil
			}
			c.Web.ExtractTimeout = ExtractTimeout(v)
			if _, ok := floatValue(v, true); !ok {
				return rejectf(fmt.Sprintf("using %v", DefaultExtractTimeout), `want a number of seconds, or "none" for no cap, got %s`, typeName(v))
			}
			return nil
		},
		// No cap (set as 0, -1 or "none") reads back as "none", not as a
		// 0 that looks like a zero-second cap or a -1 turned into 0.
		get: func(c *Config) any {
			if c.Web.ExtractTimeout <= 0 {
				return noCap
			}
			return durationSeconds(c.Web.ExtractTimeout)
		},
	}
}

// noCap is how a timeout without a cap is written and read back.
const noCap = "none"

// isNoCap reports whether v is the string "none" (any case, trimmed).
func isNoCap(v any) bool {
	s, ok := v.(string)
	return ok && strings.EqualFold(strings.TrimSpace(s), noCap)
}

func maxBodyField() *field {
	return &field{
		name: "max_body_bytes", typ: "positive integer (bytes)",
		set: func(c *Config, v any, _ string) *problem {
			n, ok := intValue(v, false)
			if !ok || n <= 0 {
				c.Web.Direct.MaxBodyBytes = DefaultDirectMaxBodyBytes
				return rejectf(fmt.Sprintf("using %d", DefaultDirectMaxBodyBytes), "want a positive integer number of bytes, got %s", describe(v))
			}
			c.Web.Direct.MaxBodyBytes = n
			return nil
		},
		get: func(c *Config) any { return c.Web.Direct.MaxBodyBytes },
	}
}

// fakeIPField: a list of CIDRs, or one string of CIDRs separated by commas or
// spaces (spec §A6.5). A bare IP counts as a single-address prefix.
// An unparseable entry is a fail-closed error of Load (guardKey), naming
// the entry; Set refuses it.
func fakeIPField() *field {
	return &field{
		name: "fake_ip_ranges", typ: "list of CIDRs",
		set: func(c *Config, v any, _ string) *problem {
			if s, isStr := v.(string); isStr {
				parts := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' })
				items := make([]any, len(parts))
				for i, p := range parts {
					items[i] = p
				}
				v = items
			}
			out, bad, ok := toStrings(v, listStrict)
			if !ok {
				return rejectf("ignored", "want a list of CIDRs (e.g. [198.18.0.0/15]), got %s", typeName(v))
			}
			good, bad := addrEntries(out, bad, nil, "is not a CIDR or IP address (write it as 198.18.0.0/15 or 192.0.2.1)")
			c.Security.FakeIPRanges = good
			if len(bad) > 0 {
				return adjustf("those entries were dropped", "%s", strings.Join(bad, "; "))
			}
			return nil
		},
		get: func(c *Config) any { return append([]string{}, c.Security.FakeIPRanges...) },
	}
}

// sharedFilesField: paths with "~" expanded and relative paths resolved
// against the home directory (spec §A8).
func sharedFilesField() *field {
	f := strList("shared_files", func(c *Config) *[]string { return &c.Security.WebsiteBlocklist.SharedFiles }, listOrScalar)
	inner := f.set
	f.set = func(c *Config, v any, home string) *problem {
		pr := inner(c, v, home)
		files := c.Security.WebsiteBlocklist.SharedFiles
		for i, p := range files {
			files[i] = resolveSharedFile(home, p)
		}
		return pr
	}
	return f
}

func cloudProviderField() *field {
	return &field{
		name: "cloud_provider", typ: "string", literal: true,
		set: func(c *Config, v any, _ string) *problem {
			s, ok := v.(string)
			if !ok {
				return rejectf("ignored (auto-detect)", "want a string, got %s", typeName(v))
			}
			c.Browser.CloudProvider = lowerTrim(s)
			c.Browser.CloudProviderSet = c.Browser.CloudProvider != ""
			return nil
		},
		get: func(c *Config) any { return c.Browser.CloudProvider },
	}
}

// Keys returns every leaf key in dotted form ("web.backend", …) in file
// order. Entries of map keys (web.provider_tier, web.agent_visible_paths)
// are addressed as key.<entry> by Get and Set.
func Keys() []string {
	var out []string
	var walk func(prefix string, f *field)
	walk = func(prefix string, f *field) {
		for _, ch := range f.children {
			k := ch.name
			if prefix != "" {
				k = prefix + "." + ch.name
			}
			if ch.isBlock() {
				walk(k, ch)
			} else if ch.successor == "" {
				out = append(out, k)
			}
		}
	}
	walk("", schema)
	return out
}

// Normalized returns a copy of c passed through the same validation the file
// loader uses (clamps, floors, enum checks, list and map cleaning), plus the
// warnings that validation produced (File empty, Line/Column zero). A nil c
// gives Default(). Relative blocklist shared files stay relative (there is no
// home to resolve them against).
func (c *Config) Normalized() (*Config, []Warning) {
	out := Default()
	if c == nil {
		return out, nil
	}
	var warns []Warning
	var walk func(prefix string, f *field)
	walk = func(prefix string, f *field) {
		for _, ch := range f.children {
			k := joinKey(prefix, ch.name)
			if ch.isBlock() {
				walk(k, ch)
				continue
			}
			if pr := ch.set(out, toGeneric(ch.get(c)), ""); pr != nil {
				warns = append(warns, Warning{Key: k, Message: pr.warning()})
			}
		}
	}
	walk("", schema)
	return out, warns
}

// toGeneric converts a rendered value to the shapes the YAML decoder yields
// ([]any, map[string]any), so renders can be fed back to setters.
func toGeneric(v any) any {
	switch x := v.(type) {
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case yaml.MapSlice:
		out := make(map[string]any, len(x))
		for _, it := range x {
			out[fmt.Sprint(it.Key)] = toGeneric(it.Value)
		}
		return out
	}
	return v
}

func joinKey(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// nodeAllowField is browser.node_allow (issue 19): CIDRs, IP addresses or
// host names a replica may dial for a browser node; empty = loopback only.
// Entries that are none of these are dropped with a warning.
func nodeAllowField() *field {
	return &field{
		name: "node_allow", typ: "list of CIDRs or hosts",
		set: func(c *Config, v any, _ string) *problem {
			out, bad, ok := toStrings(v, listOrScalar)
			if !ok {
				return rejectf("ignored", "want a list of CIDRs or host names (e.g. [10.0.0.0/8, node1.internal]), got %s", typeName(v))
			}
			for i, s := range out {
				out[i] = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), "."))
			}
			good, bad := addrEntries(out, bad, validNodeHost, "is not a CIDR, IP address or host name")
			c.Browser.NodeAllow = good
			if len(bad) > 0 {
				return adjustf("those entries were dropped", "%s", strings.Join(bad, "; "))
			}
			return nil
		},
		get: func(c *Config) any { return append([]string{}, c.Browser.NodeAllow...) },
	}
}

// addrEntries keeps the entries that parse as a CIDR (netip.ParsePrefix) or
// an IP address (netip.ParseAddr), or that also accepts (nil: none more),
// and returns prior with one message appended per other entry: the entry
// quoted, then notA. good is never nil (an empty list renders as []).
func addrEntries(entries, prior []string, also func(string) bool, notA string) (good, bad []string) {
	good, bad = []string{}, prior
	for _, s := range entries {
		_, perr := netip.ParsePrefix(s)
		_, aerr := netip.ParseAddr(s)
		if perr == nil || aerr == nil || also != nil && also(s) {
			good = append(good, s)
			continue
		}
		bad = append(bad, fmt.Sprintf("%q %s", s, notA))
	}
	return good, bad
}

// validNodeHost reports whether s is a DNS host name in LDH form (RFC 1123:
// labels of letters, digits and hyphens, 1–63 chars, not starting or ending
// with a hyphen; at most 253 chars).
func validNodeHost(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for _, r := range l {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
				return false
			}
		}
	}
	return true
}
