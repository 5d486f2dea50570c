package tools

import (
	"encoding/json"
	"path/filepath"

	"github.com/gatehouse-dev/gatehouse/internal/browser"
	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// This file is the audit of every tool result for page-derived strings
// (issue 16 item 4): each result type's Pages lists every string a page, or
// a vendor relaying a page, wrote, so that the MCP surface (WrapPages) puts
// each inside a boundary of the call's nonce. The verdicts, field by field
// (JSON names; "wrapped" = inside the boundary over MCP, "URL" = kept bare
// with forged markers escaped, because the agent passes it back to a tool
// (wrapped instead when it is not URL-shaped: whitespace or control chars),
// "ours" = written by Gatehouse or the caller, no page text):
//
// web_extract, per row: content (wrapped, url label; the truncation footer
// stays outside), title, meta.description, meta.author, meta.published,
// meta.language, meta.site_name, links[].text (wrapped); url (the caller's
// input), meta.final_url, meta.canonical_url, links[].url (URL); meta.notes
// (ours; may quote a refresh target URL: escaped); error (ours, escaped: an
// HTTP status is quoted by code and standard text, never the server's
// reason phrase; a Content-Type or Content-Encoding only when it is a
// token); reason, gate, blocked_by_policy, meta.provider, cached, age_s,
// truncated, original_chars, served_by, rescued_from, render_*,
// links_total, pages, links[].allowed/reason/gate/main (ours);
// meta.stored_path (ours: over MCP the store name web_read takes, never a
// path on the server); meta.backend_error (ours, quoting the vendor's
// error, not a page).
//
// Any string of any result (Boundary.Seal, the MCP surface's last pass):
// the words of a server a message quotes (after reason.RemoteLead: a
// vendor's response body or error text) are wrapped; forged markers are
// escaped everywhere.
//
// web_search: data.web[].title, description (wrapped); url (URL);
// position, unsafe_url, meta (ours).
//
// web_read: content (wrapped); path (the store name), offsets and counts
// (ours). web_check: nothing fetched, nothing page-derived (not Paged).
//
// Every browser_* result (browser.Page): title, dialogs[] and
// pending_dialogs[] message and default_prompt, downloads[].name and
// downloads[].path (wrapped: the path ends with the name the server sent;
// over MCP it starts $GATEHOUSE_HOME/downloads/, never with the server's
// home); url, popup.url, downloads[].url (URL); error (ours, except eval_failed,
// which quotes the exception the page's code threw: wrapped whole; a
// dialog_pending error names the dialog's id, its text is in
// pending_dialogs); session_key, reason, page_busy, recycled, id, type,
// action, by, size, state (ours).
// Then per tool:
//   - browser_navigate: snapshot (wrapped, url label); element_count,
//     truncated, bot_detection_warning (ours: it does not quote the title),
//     blocked_by_policy, backend fields, used_real_profile (ours).
//   - browser_snapshot: snapshot (wrapped); recent_dialogs[] as dialogs.
//   - browser_click, browser_type, browser_scroll, browser_back,
//     browser_press, browser_dialog: snapshot, delta (wrapped); clicked,
//     intercepted_by, element (refs), typed (the caller's text, redacted),
//     scrolled, pressed, action, navigated, element_count (ours);
//     browser_dialog's dialog as dialogs.
//   - browser_console: console_messages[].text, js_errors[].message,
//     result_description (wrapped); result (a JSON string is wrapped as a
//     string; an object or array becomes its JSON text, wrapped, as one
//     string; numbers, booleans and null carry no text); type, source,
//     result_type, totals (ours).
//   - browser_get_images: images[].alt (wrapped); images[].src (URL);
//     width, height, count (ours).
//   - browser_vision: annotations[].label (wrapped: an element's role and
//     name); question (the caller's); screenshot_path (as downloads[].path);
//     the PNG is an image block.
//   - browser_close: closed (session keys, ours).

// Pages implements Paged: the content of every successful row (with its
// stored full text), its title, meta strings and link texts, and its URLs.
func (o *ExtractOutput) Pages() []Page {
	if o.ExtractResponse == nil {
		return nil
	}
	var out []Page
	for i := range o.Results {
		r := &o.Results[i]
		if !r.OK() {
			out = append(out, escaped(r.Error)...) // ours, but never a live marker
			continue
		}
		p := Page{Text: &r.Content, URL: r.URL}
		if r.Meta != nil {
			p.Truncated = r.Meta.Truncated
			if r.Meta.StoredPath != "" {
				p.Stored = filepath.Base(r.Meta.StoredPath)
			}
		}
		out = append(out, p)
		out = append(out, field(&r.Title)...)
		if m := r.Meta; m != nil {
			out = append(out, field(&m.Description, &m.Author, &m.Published, &m.Language, &m.SiteName)...)
			out = append(out, urls(&m.FinalURL, &m.CanonicalURL)...)
			for j := range m.Notes {
				out = append(out, escaped(&m.Notes[j])...)
			}
		}
		for j := range r.Links {
			out = append(out, field(&r.Links[j].Text)...)
			out = append(out, urls(&r.Links[j].URL)...)
		}
	}
	return out
}

// Pages implements Paged: a search result's titles and descriptions come
// from the pages (and the vendor), so they are untrusted text for a model
// just as page bodies are.
func (o *SearchOutput) Pages() []Page {
	if o.SearchResponse == nil || o.Data == nil {
		return nil
	}
	var out []Page
	for i := range o.Data.Web {
		r := &o.Data.Web[i]
		out = append(out, field(&r.Title, &r.Description)...)
		out = append(out, urls(&r.URL)...)
	}
	return out
}

// Pages implements Paged: the page text read.
func (o *ReadOutput) Pages() []Page {
	if o.Refused() {
		return nil
	}
	return []Page{{Text: &o.Content}}
}

// pageQuoting are the reason codes whose messages quote text the page
// wrote (the exception a page script threw): such an error is wrapped whole.
var pageQuoting = map[reason.Code]bool{reason.EvalFailed: true}

// browserPages returns the page-derived strings every browser result shares
// (browser.Page) and bodies (snapshot, delta) labelled with the page's URL.
func browserPages(p *browser.Page, bodies ...*string) []Page {
	var out []Page
	for _, b := range bodies {
		if b != nil && *b != "" {
			out = append(out, Page{Text: b, URL: p.URL})
		}
	}
	out = append(out, field(&p.Title)...)
	out = append(out, urls(&p.URL)...)
	if pageQuoting[p.Reason] {
		out = append(out, field(&p.Error)...)
	} else {
		out = append(out, escaped(&p.Error)...) // ours, but never a live marker
	}
	out = append(out, dialogPages(p.Dialogs)...)
	out = append(out, dialogPages(p.PendingDialogs)...)
	if p.Popup != nil {
		out = append(out, urls(&p.Popup.URL)...)
	}
	for i := range p.Downloads {
		d := &p.Downloads[i]
		out = append(out, field(&d.Name, &d.Path)...) // the path ends with the name
		out = append(out, urls(&d.URL)...)
	}
	return out
}

// dialogPages returns the page-written strings of dialogs: the message and
// a prompt's default text.
func dialogPages(ds []backend.Dialog) []Page {
	var out []Page
	for i := range ds {
		out = append(out, field(&ds[i].Message, &ds[i].DefaultPrompt)...)
	}
	return out
}

// Pages implements Paged.
func (o *NavigateOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot) }

// Pages implements Paged.
func (o *SnapshotOutput) Pages() []Page {
	return append(browserPages(&o.Page, &o.Snapshot), dialogPages(o.RecentDialogs)...)
}

// Pages implements Paged.
func (o *ClickOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot, &o.Delta) }

// Pages implements Paged.
func (o *TypeOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot, &o.Delta) }

// Pages implements Paged.
func (o *FillOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot, &o.Delta) }

// Pages implements Paged.
func (o *ScrollOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot, &o.Delta) }

// Pages implements Paged.
func (o *BackOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot, &o.Delta) }

// Pages implements Paged.
func (o *PressOutput) Pages() []Page { return browserPages(&o.Page, &o.Snapshot, &o.Delta) }

// Pages implements Paged.
func (o *DialogOutput) Pages() []Page {
	out := browserPages(&o.Page, &o.Snapshot, &o.Delta)
	if o.Dialog != nil {
		out = append(out, field(&o.Dialog.Message, &o.Dialog.DefaultPrompt)...)
	}
	return out
}

// Pages implements Paged: console and error texts, the evaluated value and
// its description.
func (o *ConsoleOutput) Pages() []Page {
	out := browserPages(&o.Page)
	for i := range o.ConsoleMessages {
		out = append(out, field(&o.ConsoleMessages[i].Text)...)
	}
	for i := range o.JSErrors {
		out = append(out, field(&o.JSErrors[i].Message)...)
	}
	out = append(out, field(&o.ResultDescription)...)
	if p, ok := jsonValuePage(&o.Result); ok {
		out = append(out, p)
	}
	return out
}

// jsonValuePage returns the Field page of a JSON value a page produced
// (browser_console's result): a string as itself; an object or array as
// its JSON text, so that the wrapped value is one JSON string; false for a
// number, boolean or null (no text) or an empty value.
func jsonValuePage(v *json.RawMessage) (Page, bool) {
	if len(*v) == 0 {
		return Page{}, false
	}
	var text string
	switch (*v)[0] {
	case '"':
		if json.Unmarshal(*v, &text) != nil {
			return Page{}, false
		}
	case '{', '[':
		text = string(*v)
	default:
		return Page{}, false
	}
	return Page{Text: &text, Field: true, Set: func(w string) {
		b, err := json.Marshal(w)
		if err == nil {
			*v = b
		}
	}}, text != ""
}

// Pages implements Paged: images' alt texts and URLs.
func (o *ImagesOutput) Pages() []Page {
	out := browserPages(&o.Page)
	for i := range o.Images {
		out = append(out, field(&o.Images[i].Alt)...)
		out = append(out, urls(&o.Images[i].Src)...)
	}
	return out
}

// Pages implements Paged: annotation labels name page elements.
func (o *VisionOutput) Pages() []Page {
	out := browserPages(&o.Page)
	for i := range o.Annotations {
		out = append(out, field(&o.Annotations[i].Label)...)
	}
	return out
}

// Pages implements Paged.
func (o *CloseOutput) Pages() []Page { return browserPages(&o.Page) }
