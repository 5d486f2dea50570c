package gatehouse

import (
	"context"
	"encoding/json"
)

// MaxURLs is the number of URLs one Extract call takes (web_extract's batch
// limit, spec §A1).
const MaxURLs = 5

// ExtractOptions tune Extract. A nil *ExtractOptions means the defaults.
type ExtractOptions struct {
	// CharLimit is the per-page budget in characters (Unicode code points);
	// 0 means web.extract_char_limit (default 15000). Clamped to
	// 2000..500000. Longer pages are cut to a head and tail window and the
	// full text is stored (see Read).
	CharLimit int
	// Progress, if set, is called as pages finish with (finished, total).
	Progress func(done, total int)
}

// ExtractResult is the result of Extract; its JSON is exactly that of
// `gatehouse extract --json`. On success Results holds one Page per URL in
// input order. A whole-call refusal (a credential in any URL: nothing was
// fetched) has Success false, Error, Reason and Index (the offending URL).
type ExtractResult struct {
	Success *bool  `json:"success,omitempty"`
	Error   string `json:"error,omitempty"`
	Reason  Reason `json:"reason,omitempty"`
	Index   *int   `json:"index,omitempty"`
	Results []Page `json:"results,omitempty"`
}

// Refused reports whether the whole call was refused.
func (r *ExtractResult) Refused() bool { return r.Success != nil && !*r.Success }

// Page is one URL's row. Exactly one of Content (success) and Error is set.
type Page struct {
	URL     string `json:"url"`
	Title   string `json:"title"`
	Content string `json:"content"` // markdown; for a truncated page, head + tail + a footer naming the stored file
	// Error is the human message of a failure (it names the fix); nil on success.
	Error *string `json:"error"`
	// Reason is the failure's stable code; "" on success.
	Reason Reason `json:"reason,omitempty"`
	// BlockedByPolicy names the blocklist rule when Reason is policy_blocked.
	BlockedByPolicy *PolicyBlock `json:"blocked_by_policy,omitempty"`
	// Meta is the provenance of a successful row; nil on failure.
	Meta *PageMeta `json:"meta,omitempty"`
}

// OK reports whether the row is a success.
func (p Page) OK() bool { return p.Error == nil }

// PolicyBlock is the website-blocklist rule that refused a URL.
type PolicyBlock struct {
	Host   string `json:"host"`   // the URL's host
	Rule   string `json:"rule"`   // the matching rule, e.g. "*.example.com"
	Source string `json:"source"` // "config" or the shared file it came from
}

// PageMeta is the provenance of a successful row.
type PageMeta struct {
	Provider      string   `json:"provider"`       // backend that fetched it ("direct" is embedded)
	Cached        bool     `json:"cached"`         // served from the disk cache
	AgeS          int64    `json:"age_s"`          // seconds since it was fetched (0 when fresh)
	Truncated     bool     `json:"truncated"`      // Content is a head/tail window; the full text is stored
	OriginalChars int      `json:"original_chars"` // characters of the full clean text
	FinalURL      string   `json:"final_url"`      // URL after redirects
	StoredPath    string   `json:"stored_path,omitempty"`
	Notes         []string `json:"notes,omitempty"`
}

// Extract fetches up to MaxURLs pages through the gates and returns them as
// markdown (tool web_extract). ctx cancellation interrupts the call: pages
// not yet finished get Reason "interrupted". The error is non-nil only when
// the call could not run (an *Error for invalid arguments such as more than
// MaxURLs URLs, or ErrClosed); refusals and failed pages are in the result.
func (g *Gatehouse) Extract(ctx context.Context, urls []string, opts *ExtractOptions) (*ExtractResult, error) {
	in := extractInput{URLs: urls}
	var progress func(int, int, string)
	if opts != nil {
		in.CharLimit = opts.CharLimit
		if opts.Progress != nil {
			progress = func(d, t int, _ string) { opts.Progress(d, t) }
		}
	}
	var out ExtractResult
	if err := g.run(ctx, "web_extract", in, progress, &out, true); err != nil {
		return nil, err
	}
	return &out, nil
}

// CheckOptions select whose rules Check applies. A nil *CheckOptions means
// web_extract's rules.
type CheckOptions struct {
	// Browser applies the browser's rules: credential-named query parameters
	// are allowed, and private addresses are allowed unless CloudBackend is
	// set (cloud-metadata endpoints never are).
	Browser      bool
	CloudBackend bool
}

// CheckResult is the gates' verdict on one URL (`gatehouse check --json`).
type CheckResult struct {
	URL     string  `json:"url"` // as given; redacted when it carries a credential
	Allowed bool    `json:"allowed"`
	Gate    *string `json:"gate"`   // parse, scheme, secret, ssrf or policy; nil when allowed
	Reason  *Reason `json:"reason"` // nil when allowed
	Host    *string `json:"host"`   // canonical host; nil when the URL cannot be parsed
	Message string  `json:"message,omitempty"`
	// BlockedByPolicy names the blocklist rule when Reason is policy_blocked.
	BlockedByPolicy *PolicyBlock `json:"blocked_by_policy,omitempty"`
}

// Check runs only the gates on up to 20 URLs (tool web_check): parse,
// secret, scheme, SSRF (DNS is resolved) and website policy, and reports per
// URL whether it would be refused and why. Nothing is fetched. Results are
// in input order. The error is an *Error for invalid arguments (no URL, more
// than 20) or ErrClosed.
func (g *Gatehouse) Check(ctx context.Context, urls []string, opts *CheckOptions) ([]CheckResult, error) {
	in := checkInput{URLs: urls, For: "extract"}
	if opts != nil && opts.Browser {
		in.For, in.Backend = "browser", "local"
		if opts.CloudBackend {
			in.Backend = "cloud"
		}
	}
	var out struct {
		Results []CheckResult `json:"results"`
		refusalFields
	}
	if err := g.run(ctx, "web_check", in, nil, &out, false); err != nil {
		return nil, err
	}
	return out.Results, nil
}

// ReadResult is a window of a stored page (tool web_read).
type ReadResult struct {
	Path       string `json:"path"`                  // store file name
	Offset     int    `json:"offset"`                // first line returned, 1-based
	Lines      int    `json:"lines"`                 // lines returned
	TotalLines int    `json:"total_lines"`           // lines in the stored page
	NextOffset int    `json:"next_offset,omitempty"` // offset to read on; 0 at the end
	Cut        bool   `json:"cut,omitempty"`         // the last line was cut at 100000 chars
	Content    string `json:"content"`
}

// ReadOptions select the window Read returns. A nil *ReadOptions means the
// first 200 lines.
type ReadOptions struct {
	// Offset is the first line returned, 1-based; 0 means 1.
	Offset int
	// Limit is the number of lines returned; 0 means 200, at most 2000.
	Limit int
}

// Read returns a window of lines (opts) of a page stored when an Extract
// result was truncated: pass the path the footer names (the store file name
// or its full path). Only regular files inside the store are read; anything
// else is an *Error with Reason read_outside_store, read_symlink,
// read_not_regular or read_not_found.
func (g *Gatehouse) Read(ctx context.Context, path string, opts *ReadOptions) (*ReadResult, error) {
	in := readInput{Path: path}
	if opts != nil {
		in.Offset, in.Limit = opts.Offset, opts.Limit
	}
	var out struct {
		ReadResult
		refusalFields
	}
	if err := g.run(ctx, "web_read", in, nil, &out, false); err != nil {
		return nil, err
	}
	return &out.ReadResult, nil
}

// The tools' inputs, as their JSON schemas name them (zero fields are left
// out, so the tool applies its default).
type (
	extractInput struct {
		URLs      []string `json:"urls"`
		CharLimit int      `json:"char_limit,omitempty"`
	}
	checkInput struct {
		URLs    []string `json:"urls"`
		For     string   `json:"for"`
		Backend string   `json:"backend,omitempty"`
	}
	readInput struct {
		Path   string `json:"path"`
		Offset int    `json:"offset,omitempty"`
		Limit  int    `json:"limit,omitempty"`
	}
	searchInput struct {
		Query string `json:"query"`
		Limit int    `json:"limit,omitempty"`
	}
)

// Tool describes one tool of the registry, as MCP clients see it.
type Tool struct {
	Name        string          // e.g. "web_extract"
	Title       string          // short human-readable name
	Description string          // written for a model: what it does, limits, units
	InputSchema json.RawMessage // JSON Schema of the arguments object
	ReadOnly    bool            // MCP readOnlyHint
	Idempotent  bool            // MCP idempotentHint
	OpenWorld   bool            // MCP openWorldHint
}

// Unavailable is a registered tool this process cannot run, and why (the
// text names the fix).
type Unavailable struct {
	Name string
	Why  string
}

// Tools returns the tools usable in this process, in registration order
// (what `gatehouse mcp` lists), and the registered ones that are not, with
// the reason.
func (g *Gatehouse) Tools() ([]Tool, []Unavailable) {
	var out []Tool
	for _, t := range g.reg.Tools() {
		s, _ := json.Marshal(t.InputSchema())
		a := t.Annotations()
		out = append(out, Tool{Name: t.Name(), Title: t.Title(), Description: t.Description(), InputSchema: s,
			ReadOnly: a.ReadOnly, Idempotent: a.Idempotent, OpenWorld: a.OpenWorld})
	}
	var un []Unavailable
	for _, u := range g.reg.Unavailable() {
		un = append(un, Unavailable{Name: u.Name, Why: u.Why})
	}
	return out, un
}

// Call runs any registered tool by name with JSON arguments (an object) and
// returns its JSON result, exactly as an MCP client would get it (without
// content boundaries), and whether the call was refused as a whole
// (isError). A refusal is not a Go error; the error is non-nil only for an
// unknown tool name, ErrClosed or a tool that broke.
func (g *Gatehouse) Call(ctx context.Context, name string, args json.RawMessage) (result json.RawMessage, refused bool, err error) {
	var raw json.RawMessage
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil, false, ErrClosed
	}
	res, err := g.reg.Call(ctx, name, args, toolsOptions(g))
	if err != nil {
		return nil, false, err
	}
	raw, err = res.JSON(false)
	if err != nil {
		return nil, false, err
	}
	return raw, res.Refused, nil
}

func (r *ExtractResult) refusal() (Reason, string) { return r.Reason, r.Error }
