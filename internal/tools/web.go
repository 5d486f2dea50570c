package tools

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/node"
	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// Tool names of this file.
const (
	WebExtract = "web_extract"
	WebRead    = "web_read"
	WebCheck   = "web_check"
)

// StoreURIPrefix is the MCP resource URI prefix of stored pages: a truncated
// page's full text is the resource StoreURIPrefix + <store file name>.
const StoreURIPrefix = "gatehouse://store/"

// MaxCheckURLs is the number of URLs one web_check call accepts.
const MaxCheckURLs = 20

// Env is what Default builds the tools of this process from.
type Env struct {
	// Web configures the web pipeline (home, config, resolver, logger); see
	// web.Env. Web.Config nil means config.Default().
	Web web.Env
	// Service, if non-nil, is used instead of web.Open(Web).
	Service *web.Service
	// Browser, if non-nil, serves the browser tools (the caller closes it);
	// nil means one is built from Web and closed by Registry.Close.
	Browser *browser.Manager

	browserG *browser.Gates // the gates of the Manager addBrowser built
}

func (e *Env) config() *config.Config {
	if e.Web.Config == nil {
		e.Web.Config = config.Default()
	}
	return e.Web.Config
}

func (e *Env) logger() *slog.Logger {
	if e.Web.Logger == nil {
		return slog.Default()
	}
	return e.Web.Logger
}

// pageStore is the shared page store of env (nil: files under Home).
func (e *Env) pageStore() truncate.PageStore {
	if e.Web.State == nil {
		return nil
	}
	return e.Web.State
}

// browserNodes is the browser node placement of env (issue 19): with
// shared state, new browser sessions go to the nodes registered in its
// Redis, dialed where browser.node_allow allows, with the node token
// (GATEHOUSE_NODE_TOKEN); nil without shared state.
func (e *Env) browserNodes() *browser.NodeOptions {
	if e.Web.State == nil {
		return nil
	}
	allow, _ := node.ParseAllow(e.config().Browser.NodeAllow) // config.Load dropped bad entries with a warning
	return &browser.NodeOptions{Registry: node.NewRegistry(e.Web.State.Client()), Allow: allow,
		Token: config.Lookup(e.Web.DotEnv, node.EnvToken)}
}

// Store returns the full-text store of env (where truncated pages are saved
// and web_read reads).
func (e *Env) Store() *truncate.Store {
	st := &truncate.Store{Dir: web.CacheDir(e.Web.Home), PathMap: e.config().Web.AgentVisiblePaths}
	if e.Web.State != nil {
		st.Shared = e.Web.State // pages live in Redis, shared by replicas
	}
	return st
}

// Default builds the registry of every Gatehouse tool from env. Warnings
// (dropped config entries, missing blocklist files) are for the user, each
// once; none is fatal. Registration of every tool happens here, so a test calling Default
// sees any schema-inference panic.
func Default(env Env) (*Registry, []string) {
	r := NewRegistry()
	r.home = env.Web.Home
	var warns []string
	if env.Browser == nil {
		// One browser (started on first use) serves the browser tools and
		// web_extract's render step.
		env.Browser, warns = browser.New(browser.Options{
			Config: env.config(), Home: env.Web.Home, Resolver: env.Web.Resolver,
			AllowAddrPorts: env.Web.AllowAddrPorts, Logger: env.logger(),
			StorePathMap: env.config().Web.AgentVisiblePaths, StoreShared: env.pageStore(),
			Nodes: env.browserNodes(),
		})
		r.OnClose(env.Browser.Close)
	}
	if env.Web.Renderer == nil {
		env.Web.Renderer = env.Browser
	}
	warns = append(warns, addWeb(r, &env)...)
	warns = append(warns, addBrowser(r, &env)...)
	return r, distinct(warns)
}

// distinct returns warns without repeats, in first-seen order: several
// components load the same config (the web service and the browser gates
// both read the blocklist files), and each warning is reported once.
func distinct(warns []string) []string {
	seen := map[string]bool{}
	out := warns[:0]
	for _, w := range warns {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// Check returns a registry holding only web_check, for callers that judge
// URLs and fetch nothing (`gatehouse check`): unlike Default it starts no
// browser manager (whose janitor sweeps orphaned browser directories) and
// opens no web service (cache, search providers), which would cost every
// such command without being used. web_check decides exactly as in
// Default: for=browser with browser.NewGates, the browser's own gates. The
// warnings are the gates' (dropped fake-IP ranges, unreadable blocklist
// files), each once (Default gives them twice, from the browser's gates and
// the web service's), and not the browser backends' (Camofox, cloud
// provider settings), which web_check does not use.
func Check(env Env) (*Registry, []string) {
	cfg := env.config()
	pol, pw := web.LoadPolicy(cfg, env.Web.Home)
	_, warns := web.NewPolicyGuard(cfg, env.Web.Resolver, env.Web.AllowAddrPorts, pol)
	r := NewRegistry()
	r.home = env.Web.Home
	r.Add(checkTool(&env, cfg))
	return r, append(warns, pw...)
}

func addWeb(r *Registry, env *Env) []string {
	cfg := env.config()
	svc, warns := env.Service, []string(nil)
	if svc == nil {
		svc, warns = web.Open(env.Web)
	}
	r.Add(extractTool(svc))
	r.Add(readTool(env.Store()))
	r.Add(checkTool(env, cfg))
	r.Add(searchTool(svc))
	return warns
}

// ExtractInput is the input of web_extract.
type ExtractInput struct {
	URLs      []any `json:"urls" jsonschema:"1 to 5 absolute http(s) URLs (strings, or objects carrying the URL in url or href), fetched in parallel; results come back in this order"` // strings after Prepare
	CharLimit *int  `json:"char_limit,omitempty" jsonschema:"character budget per page (Unicode chars, not tokens); default web.extract_char_limit (15000), clamped to 2000..500000"`
	// Render, IncludeLinks and MaxAgeS are also the CLI flags --render,
	// --links and --max-age (cmd/gatehouse reads their help from this schema).
	Render       string `json:"render,omitempty" jsonschema:"load pages in a local headless browser and extract the rendered DOM: auto (default web.extract_render) renders pages that come back empty or as a script-filled application shell, always renders every HTML page, never turns it off; direct backend only"`
	IncludeLinks bool   `json:"include_links,omitempty" jsonschema:"also return each page's links (distinct absolute http(s) URLs with anchor text, main-content links first, at most 200), each judged by the URL gates: allowed, or the refusing reason code"`
	MaxAgeS      *int   `json:"max_age_s,omitempty" jsonschema:"oldest cached page accepted, in seconds; 0 bypasses the cache and fetches again; default any age within web.cache_ttl_minutes"`
}

// ExtractOutput is the result of web_extract: exactly the JSON of
// `gatehouse extract --json` ({"results":[…]} in input order, or a
// whole-call refusal {"success":false,"error":…,"reason":…}).
type ExtractOutput struct {
	*web.ExtractResponse
}

// Refused reports a whole-call refusal (secret in a URL, no provider).
func (o *ExtractOutput) Refused() bool {
	return o.ExtractResponse != nil && o.Success != nil && !*o.Success
}

// URLItemSchema is the schema of one web_extract urls item (spec §A3 step
// 1): an absolute http(s) URL string, or an object carrying it in a string
// url field (else href; other fields are ignored).
func URLItemSchema() *jsonschema.Schema {
	str := func(d string) *jsonschema.Schema { return &jsonschema.Schema{Type: "string", Description: d} }
	return &jsonschema.Schema{AnyOf: []*jsonschema.Schema{
		str("an absolute http(s) URL"),
		{
			Type:        "object",
			Description: "an object carrying the URL in url (else href), as in a search result or a link list",
			Properties:  map[string]*jsonschema.Schema{"url": str("the URL"), "href": str("the URL, read when url is absent")},
			AnyOf:       []*jsonschema.Schema{{Required: []string{"url"}}, {Required: []string{"href"}}},
		},
	}}
}

// ExtractSchema returns web_extract's input schema, the one definition the
// CLI flags of `gatehouse extract` take their help and values from. Each
// call returns a copy of one schema built on the first call.
func ExtractSchema() *jsonschema.Schema { return extractSchema().CloneSchemas() }

var extractSchema = sync.OnceValue(func() *jsonschema.Schema { return extractTool(nil).InputSchema() })

func extractTool(svc *web.Service) *Tool {
	return New(Spec{
		Name:  WebExtract,
		Title: "Extract web pages as markdown",
		Description: "Fetch up to 5 web pages and return each page's main content as clean markdown. " +
			"Gates run before any byte is fetched: a URL carrying a credential (API key, token, password) refuses the whole call (reason secret_in_url); " +
			"private, loopback and cloud-metadata addresses, blocklisted sites and unparseable URLs fail only their own row. " +
			"Result: {\"results\":[{url,title,content,error,reason,meta}]} in input order; every error has a stable reason code; " +
			"meta.cached and meta.age_s (seconds) say when a page came from the cache (max_age_s 0 fetches afresh); meta has the page's description, author, published, language, canonical_url, site_name when it gives them, pages for a PDF, and rendered:true when the page was rendered in a browser. " +
			"A page longer than char_limit is cut to a head and tail; its footer names the web_read call that pages through the full text.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
		Schema: func(s *jsonschema.Schema) {
			u := s.Properties["urls"]
			u.MinItems, u.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(web.MaxURLs)
			// Spec §A3 step 1 accepts a URL string or an object carrying
			// it in url (else href); the published schema says so (the
			// described schema of spec §A1 says strings only, which hid
			// the object form from clients and models; breaker5 D13).
			u.Items = URLItemSchema()
			s.Properties["render"].Enum = []any{"auto", "always", "never"}
			s.Properties["max_age_s"].Minimum = jsonschema.Ptr(0.0)
		},
		// Items of URLItemSchema become strings; an item that is no URL
		// (a number, null, an object without a url/href string) costs its
		// own row (invalid_item, spec §A3 step 1), not the call. Such an
		// item is validated as "" and put back after validation, so the
		// web layer's row says what it was ("a number", "null"), not "a
		// blank string" (breaker6 D5).
		Prepare: func(args map[string]any) func(map[string]any) {
			items, ok := args["urls"].([]any)
			if !ok {
				return nil
			}
			aside := map[int]any{}
			for i, it := range items {
				if _, isString := it.(string); isString {
					continue
				}
				u, ok := web.NormalizeItem(it)
				if !ok {
					aside[i] = it
				}
				items[i] = u
			}
			if len(aside) == 0 {
				return nil
			}
			return func(args map[string]any) {
				if items, ok := args["urls"].([]any); ok {
					for i, it := range aside {
						if i < len(items) {
							items[i] = it
						}
					}
				}
			}
		},
	}, func(ctx context.Context, c *Call, in ExtractInput) (*ExtractOutput, error) {
		req := web.ExtractRequest{URLs: in.URLs, Render: in.Render, IncludeLinks: in.IncludeLinks, MaxAgeS: in.MaxAgeS}
		if in.CharLimit != nil {
			req.CharLimit = *in.CharLimit
		}
		switch c.Surface {
		case SurfaceMCP:
			req.ReadTool, req.ResourcePrefix = truncate.ReadToolWeb, StoreURIPrefix
		case SurfaceCLI:
			req.ReadTool = truncate.ReadToolCLI // `gatehouse read`, which calls web_read
		}
		req.Progress = func(done, total int) { c.Progress(done, total, "URLs finished") }
		return &ExtractOutput{svc.Extract(ctx, req)}, nil
	})
}

// ReadInput is the input of web_read.
type ReadInput struct {
	Path   string `json:"path" jsonschema:"the stored page: the path=\"…\" value of a truncated web_extract footer"`
	Offset int    `json:"offset,omitempty" jsonschema:"1-based line number to start at (the footer's offset); default 1"`
	Limit  int    `json:"limit,omitempty" jsonschema:"number of lines to return; default 200, max 2000 (output is also capped at 100000 chars)"`
}

// ReadOutput is the result of web_read, or a refusal with a reason code
// (read_outside_store, read_symlink, read_not_regular, read_not_found,
// read_past_end). Lines are counted as truncate.Read does: a stored line
// longer than truncate.ReadLineWidth chars counts as several.
type ReadOutput struct {
	Outcome
	Path       string `json:"path,omitempty"`        // store file name
	Offset     int    `json:"offset,omitempty"`      // first line returned (1-based)
	Lines      int    `json:"lines,omitempty"`       // lines returned
	TotalLines int    `json:"total_lines,omitempty"` // lines in the stored page
	NextOffset int    `json:"next_offset,omitempty"` // offset to read on; absent at the end
	Cut        bool   `json:"cut,omitempty"`         // the last line was cut at 100000 chars (cannot happen while lines are at most truncate.ReadLineWidth chars)
	Content    string `json:"content"`
}

// MarshalJSON writes lines and total_lines on every successful read,
// zeros included (an offset past the end returns 0 lines: a count, not a
// missing field); a refusal has neither.
func (o ReadOutput) MarshalJSON() ([]byte, error) {
	type plain ReadOutput // (without this method)
	if o.Refused() {
		return json.Marshal(plain(o))
	}
	return json.Marshal(struct {
		plain
		Lines      int `json:"lines"`
		TotalLines int `json:"total_lines"`
	}{plain(o), o.Lines, o.TotalLines})
}

func readTool(store *truncate.Store) *Tool {
	return New(Spec{
		Name:  WebRead,
		Title: "Read a stored page",
		Description: "Read lines of a full page that Gatehouse stored when a web_extract result was truncated. " +
			"Pass path, offset and limit as the result's footer gives them; offset is a 1-based line number, limit a line count. " +
			"Result: {path,offset,lines,total_lines,next_offset,content}; next_offset is absent at the end of the page. " +
			"Reads only pages in Gatehouse's store: other paths, '..', symlinks and non-regular files are refused with a reason code.",
		Annotations: Annotations{ReadOnly: true, Idempotent: true},
		Schema: func(s *jsonschema.Schema) {
			s.Properties["path"].MinLength = jsonschema.Ptr(1)
			o := s.Properties["offset"]
			o.Minimum, o.Default = jsonschema.Ptr(1.0), json.RawMessage("1")
			l := s.Properties["limit"]
			l.Minimum, l.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(truncate.MaxReadLines))
			l.Default = json.RawMessage("200")
		},
	}, func(ctx context.Context, c *Call, in ReadInput) (*ReadOutput, error) {
		r, err := store.For(ctx).Read(in.Path, in.Offset, in.Limit)
		if err != nil {
			if e := reason.As(err); e != nil {
				return &ReadOutput{Outcome: Refusal(e)}, nil
			}
			return nil, err
		}
		if !c.MayRead(r.Name) {
			return &ReadOutput{Outcome: Refusal(NotThisSession(r.Name))}, nil
		}
		if r.Lines == 0 && r.Offset > r.TotalLines && r.TotalLines > 0 {
			// A structured refusal, not an empty read, so the CLI exits 1
			// and an agent sees why (breaker6 D10).
			return &ReadOutput{Outcome: Refusal(reason.Newf(reason.ReadPastEnd, "",
				"offset %d is past the end: the stored page has %d lines; pass an offset from 1 to %d.", r.Offset, r.TotalLines, r.TotalLines))}, nil
		}
		return &ReadOutput{Path: r.Name, Offset: r.Offset, Lines: r.Lines, TotalLines: r.TotalLines,
			NextOffset: r.NextOffset, Cut: r.Cut, Content: r.Content}, nil
	})
}

// NotThisSession is the refusal of a stored page that exists but was not
// handed to the reading session (see Options.MayRead): read_not_found, as
// for a page that does not exist, so that a session cannot probe which
// URLs another one read.
func NotThisSession(name string) *reason.Error {
	return reason.Newf(reason.ReadNotFound, "",
		"No stored page named %q was given to this session: web_read and resources/read serve the pages this session's own results linked. "+
			"Run web_extract on the page's URL in this session (a cached page is served without a new fetch), then read the path its footer names.", name)
}

// CheckInput is the input of web_check.
type CheckInput struct {
	URLs    []string `json:"urls" jsonschema:"1 to 20 URLs to judge; nothing is fetched"`
	For     string   `json:"for,omitempty" jsonschema:"whose rules apply: extract (web_extract, default) or browser (credential-named query parameters allowed; private addresses allowed with a local backend, cloud metadata never)"`
	Backend string   `json:"backend,omitempty" jsonschema:"browser backend for for=browser: local (default) or cloud"`
}

// CheckOutput is the result of web_check, the JSON of `gatehouse check --json`.
type CheckOutput struct {
	Results []web.CheckResult `json:"results"`
}

func checkTool(env *Env, cfg *config.Config) *Tool {
	return New(Spec{
		Name:  WebCheck,
		Title: "Check URLs against the gates",
		Description: "Dry-run Gatehouse's URL gates without fetching anything: for each URL say whether it would be allowed, " +
			"and if not which gate refuses it (parse, scheme, secret, ssrf, policy) with a stable reason code and a message naming the fix. " +
			"DNS is resolved (to judge the addresses); no page is requested. " +
			"Result: {\"results\":[{url,allowed,gate,reason,host,message}]} in input order.",
		// It resolves names in DNS, an open world, but changes nothing.
		Annotations: Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true},
		Schema: func(s *jsonschema.Schema) {
			u := s.Properties["urls"]
			u.MinItems, u.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(MaxCheckURLs)
			f := s.Properties["for"]
			f.Enum, f.Default = []any{"extract", "browser"}, json.RawMessage(`"extract"`)
			b := s.Properties["backend"]
			b.Enum, b.Default = []any{"local", "cloud"}, json.RawMessage(`"local"`)
		},
	}, func(ctx context.Context, c *Call, in CheckInput) (*CheckOutput, error) {
		mode := web.CheckMode{Extract: in.For != "browser"}
		if !mode.Extract {
			// The browser's own gate function, so check and browser_navigate
			// cannot disagree (issue 8).
			gates := env.browserGates(cfg)
			active := gates.GuardActive(in.Backend != "cloud", "")
			out := &CheckOutput{Results: make([]web.CheckResult, len(in.URLs))}
			for i, u := range in.URLs {
				out.Results[i] = gates.CheckURL(ctx, u, active)
			}
			return out, nil
		}
		ccfg := *cfg
		if !mode.Extract && (in.Backend != "cloud" || cfg.Browser.AllowPrivateURLs) {
			// A local browser may open private pages (spec §B8.1 3b); metadata stays blocked.
			ccfg.Security.AllowPrivateURLs = true
		}
		guard, _ := web.NewGuard(&ccfg, env.Web.Resolver, env.Web.AllowAddrPorts)
		pol, _ := web.LoadPolicy(&ccfg, env.Web.Home)
		out := &CheckOutput{Results: make([]web.CheckResult, len(in.URLs))}
		for i, u := range in.URLs {
			out.Results[i] = web.CheckURL(ctx, guard, pol, u, mode)
		}
		return out, nil
	})
}

// Reasons returns the whole-call reason or each failed row's reason, in order.
func (o *ExtractOutput) Reasons() []reason.Code {
	if o.ExtractResponse == nil {
		return nil
	}
	if o.Reason != "" {
		return []reason.Code{o.Reason}
	}
	var out []reason.Code
	for _, r := range o.Results {
		if r.Reason != "" {
			out = append(out, r.Reason)
		}
	}
	return out
}

// Reasons returns the reason of each refused URL, in order.
func (o *CheckOutput) Reasons() []reason.Code {
	var out []reason.Code
	for _, r := range o.Results {
		if r.Reason != nil {
			out = append(out, *r.Reason)
		}
	}
	return out
}
