package vendors

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// XAICloud is xAI's API base (spec §A11).
const XAICloud = "https://api.x.ai/v1"

// XAIOptions configure the xAI search backend (web.xai, spec §A11).
type XAIOptions struct {
	Model           string
	AllowedDomains  []string // at most 5; exclusive with ExcludedDomains
	ExcludedDomains []string // at most 5
	ImageSearch     bool
	Timeout         time.Duration
}

// XAI is the search-only xAI Web Search backend: POST <base>/responses with
// the web_search server-side tool and "Authorization: Bearer <key>". Rows
// are read from a JSON object in the output text ({"results": [{title, url,
// description}]}), else from url_citation annotations, else from the
// top-level citations list. A 200 answer carrying an error object is a failure.
type XAI struct {
	a api
	o XAIOptions
}

// NewXAI returns an xAI client.
func NewXAI(o Options, xo XAIOptions) *XAI {
	if xo.Model == "" {
		xo.Model = "grok-build-0.1"
	}
	if xo.Timeout <= 0 {
		xo.Timeout = 90 * time.Second
	}
	return &XAI{o: xo, a: api{vendor: "xai", label: "xAI", base: strings.TrimRight(orStr(o.Base, XAICloud), "/"),
		key: o.Key, keyEnv: "XAI_API_KEY", client: o.Client, auth: bearer}}
}

// Name returns "xai".
func (x *XAI) Name() string { return "xai" }

// Search runs one query.
func (x *XAI) Search(ctx context.Context, query string, limit int) ([]provider.Row, error) {
	if len(x.o.AllowedDomains) > 0 && len(x.o.ExcludedDomains) > 0 {
		return nil, reason.New(reason.VendorError, "", "web.xai.allowed_domains and web.xai.excluded_domains are both set; xAI accepts only one. Clear one with `gatehouse config set web.xai.excluded_domains []`.")
	}
	n := clampLimit(limit)
	tool := map[string]any{"type": "web_search"}
	filters := map[string]any{}
	if d := x.o.AllowedDomains; len(d) > 0 {
		filters["allowed_domains"] = d[:min(len(d), 5)]
	}
	if d := x.o.ExcludedDomains; len(d) > 0 {
		filters["excluded_domains"] = d[:min(len(d), 5)]
	}
	if len(filters) > 0 {
		tool["filters"] = filters
	}
	if x.o.ImageSearch {
		tool["enable_image_understanding"] = true
	}
	prompt := fmt.Sprintf("Search the web for: %s\n\nAnswer with only a JSON object {\"results\": [{\"title\": string, \"url\": string, \"description\": string}]} listing up to %d of the most relevant pages, best first.", query, n)
	ctx, cancel := withTimeout(ctx, x.o.Timeout)
	defer cancel()
	var out struct {
		Output []struct {
			Type    string `json:"type"`
			Content []struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				Annotations []struct {
					Type  string `json:"type"`
					URL   string `json:"url"`
					Title string `json:"title"`
				} `json:"annotations"`
			} `json:"content"`
		} `json:"output"`
		Citations []json.RawMessage `json:"citations"`
		Error     json.RawMessage   `json:"error"`
	}
	if err := x.a.json(ctx, request{method: http.MethodPost, path: "/responses", body: map[string]any{
		"model": x.o.Model, "input": []map[string]any{{"role": "user", "content": prompt}}, "tools": []any{tool},
	}}, &out); err != nil {
		return nil, err
	}
	if len(out.Error) > 0 && string(out.Error) != "null" {
		return nil, reason.Newf(reason.VendorError, "", "xAI API reported an error: %s", scrub(clip(string(out.Error), 300), x.a.key))
	}
	var text string
	var rows []provider.Row
	for _, o := range out.Output {
		for _, c := range o.Content {
			if c.Type == "output_text" {
				text += c.Text
				for _, a := range c.Annotations {
					if a.Type == "url_citation" && a.URL != "" {
						rows = append(rows, provider.Row{URL: a.URL, Title: a.Title})
					}
				}
			}
		}
	}
	if js := jsonObject(text); js != "" {
		var parsed struct {
			Results []provider.Row `json:"results"`
		}
		if json.Unmarshal([]byte(js), &parsed) == nil && len(parsed.Results) > 0 {
			rows = parsed.Results
		}
	}
	if len(rows) == 0 {
		for _, c := range out.Citations {
			var s string
			var o struct {
				URL   string `json:"url"`
				Title string `json:"title"`
			}
			if json.Unmarshal(c, &s) == nil {
				rows = append(rows, provider.Row{URL: s})
			} else if json.Unmarshal(c, &o) == nil {
				rows = append(rows, provider.Row{URL: o.URL, Title: o.Title})
			}
		}
	}
	if out.Output == nil && out.Citations == nil {
		return nil, reason.New(reason.VendorBadResponse, "", "xAI API answer has no output.")
	}
	rows = numbered(dedupeRows(rows))
	if len(rows) > n {
		rows = rows[:n]
	}
	return rows, nil
}

// jsonObject returns the outermost {...} in s (the model may wrap it in prose
// or a code fence), or "".
func jsonObject(s string) string {
	i, j := strings.Index(s, "{"), strings.LastIndex(s, "}")
	if i < 0 || j <= i {
		return ""
	}
	return s[i : j+1]
}

func dedupeRows(in []provider.Row) []provider.Row {
	seen := map[string]bool{}
	var out []provider.Row
	for _, r := range in {
		if r.URL == "" || seen[r.URL] {
			continue
		}
		seen[r.URL] = true
		out = append(out, r)
	}
	return out
}
