// Package renderstep is the render step of web_extract (the direct backend's
// render.Renderer): one page loaded once in a fresh, cookie-less
// BrowserContext of the local Chromium behind its own egress proxy session,
// its rendered DOM serialised (render.js, with the shared visibility
// judgement of visibility.js) for the content pipeline. A small pool keeps
// prepared contexts ready. The Chromium itself is the browser Manager's.
package renderstep

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/gate"
	"github.com/gatehouse-dev/gatehouse/internal/policy"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/render"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
)

//go:embed render.js
var renderJSSource string

//go:embed visibility.js
var visibilityJS string

// renderJS is render.js with visibility.js spliced in, built on first use
// (at package init the splice cost every start of the CLI 80 KB).
var renderJS = sync.OnceValue(func() string { return WithVisibility(renderJSSource) })

// WithVisibility returns the in-page function fn (a function expression, as
// Runtime.callFunctionOn takes) wrapped so that its body sees the object
// `visibility` that visibility.js returns (the one judgement of what a
// sighted reader would not see, shared by render.js and the browser tools'
// page.js); this and the arguments are passed through.
func WithVisibility(fn string) string {
	return "function (...args) {\nconst visibility = (" + visibilityJS + ")();\nreturn (" + fn + ").apply(this, args);\n}"
}

// Renderer renders pages for web_extract (Render) in the Chromium that
// Browser returns. Set Browser, Policy and Logger before the first Render;
// Close ends it.
type Renderer struct {
	// Browser returns the running local Chromium, launching it when none
	// runs.
	Browser func(context.Context) (*backend.Local, error)
	// Policy is the website policy, judged on every request's host and on
	// the page's final URL (nil: none).
	Policy *policy.Policy
	Logger *slog.Logger

	pool renderPool
}

// Render limits.
const (
	// QuietWindow is how long the DOM and the network stay idle before a
	// page counts as quiet (also the browser tools' settle wait).
	QuietWindow = 40 * time.Millisecond
	// LoadTimeout bounds the navigation (up to DOMContentLoaded).
	LoadTimeout = 20 * time.Second
	// renderSettleCap bounds, in wall-clock time, the wait after
	// DOMContentLoaded (virtual time, else the quiet-wait), longer than the
	// browser tools' cap, as an application fetches its data after load.
	renderSettleCap = 3 * time.Second
	// renderBudget is the virtual time a page is given after
	// DOMContentLoaded (see backend.Tab.FastForward).
	renderBudget = 3 * time.Second
	// renderProbeTimeout is how long a page whose load timed out gets to
	// answer a trivial evaluation before it counts as spinning in a script.
	renderProbeTimeout = 2 * time.Second
	// renderSerialiseTimeout bounds the DOM serialisation.
	renderSerialiseTimeout = 10 * time.Second
	// renderReleaseBackstop is when a rendered page's context is discarded
	// if the caller never calls Rendered.Done.
	renderReleaseBackstop = 5 * time.Second
)

// Render implements render.Renderer: it loads rawURL in a fresh, isolated,
// cookie-less BrowserContext (its own cookies, storage and cache, discarded
// afterwards) whose traffic goes through its own egress proxy listener
// judging every request with guard (the extract pipeline's guard: private
// addresses refused unless security.allow_private_urls) on the dialed IP,
// and with the website policy on its host. When fetched is the page the
// direct backend fetched from rawURL, the browser's request for the
// document is answered with it (CDP Fetch.fulfillRequest: one network fetch
// per page, not two), with its Content-Type, Content-Language and
// Content-Security-Policy fields and no cookie, plus renderCSP; every other
// request (style sheets, scripts, their fetch/XHR, frames, script
// navigations) goes through the egress proxy. Images, media, fonts, pings
// and CSP reports are refused inside the browser (renderCSP,
// backend.RenderBlockTypes); style sheets load, as they say what is hidden. It
// waits for DOMContentLoaded (at most 20 s), then gives the page 3 s of
// virtual time (backend.Tab.FastForward: its timers run as soon as it is
// idle, so the wait ends once the page is), or, in a browser without
// virtual time, waits for the network and the DOM to go quiet
// (renderSettle); both at most 3 s of wall-clock time. It serialises the
// DOM (render.js): open shadow roots flattened into their hosts (slots
// filled with their assigned nodes), same-origin iframes inlined in place
// of the <iframe>, scripts (but JSON-LD), styles, <noscript> and <template>
// dropped, and what a sighted reader would not see dropped by its computed
// style and layout (display none, visibility hidden, opacity 0, font size
// 0, off the page, clipped to 1px, …); at most 10 MB. The caller calls
// Rendered.Done when it has converted the result: the used context is
// discarded, and the next one prepared, then (or 5 s later).
//
// Errors: the gates' codes when the document itself was refused, or when a
// redirect or a script navigation ended on a refused URL (redirect_private,
// redirect_metadata, ssrf_*, policy_blocked); navigation_failed when the
// page could not be loaded; chromium_missing and browser_failed.
func (r *Renderer) Render(ctx context.Context, rawURL string, guard *egress.Guard, fetched *render.Fetched) (render.Rendered, error) {
	u, perr := urlsafe.Parse(rawURL)
	if perr != nil {
		return render.Rendered{}, perr
	}
	t0 := time.Now()
	l, err := r.Browser(ctx)
	if err != nil {
		return render.Rendered{}, err
	}
	slot, err := r.takeRenderSlot(ctx, l, guard)
	if err != nil {
		return render.Rendered{}, err
	}
	// The used context is discarded in the background, and the next one
	// prepared (a new BrowserContext costs ~200 ms of the browser's CPU):
	// after the caller is done with the result (Rendered.Done), so that this
	// work does not compete with the conversion of the rendered DOM, or at
	// once when the render failed.
	var once sync.Once
	release := func() { once.Do(func() { r.releaseRenderSlot(slot, l, guard) }) }
	handed := false
	defer func() {
		if !handed {
			release()
		}
	}()
	tab, p := slot.tab, slot.proxy
	tOpen := time.Now()

	if fetched != nil {
		if fu, ferr := urlsafe.Parse(fetched.URL); ferr == nil && fu.Href == u.Href {
			slot.watch.Serve(servedDocument(fetched, u.Href))
		}
	}
	start := time.Now()
	// Up to DOMContentLoaded: the rest of the load (async scripts, frames,
	// their data) is what the quiet-wait waits for, within its own cap, so a
	// sub-resource that never finishes costs the cap, not the load timeout.
	nctx, cancel := context.WithTimeout(ctx, LoadTimeout)
	nr, err := tab.NavigateUntil(nctx, u.Href, "DOMContentLoaded")
	loadTimedOut := reason.Of(err) == reason.CommandTimeout && ctx.Err() == nil && tab.Healthy()
	cancel()
	if loadTimedOut && !tab.Responsive(ctx, renderProbeTimeout) {
		// A script that never ends (an app shell spinning in a loop): the
		// page has nothing more to give. Stop it, so the tab is discarded
		// at once, and say what happened (breaker5 D21).
		tab.StopScript(ctx)
		return render.Rendered{}, reason.Wrap(reason.CommandTimeout, "",
			fmt.Sprintf("The page's script kept the browser busy: the document did not finish loading within %.0f s and the page stopped answering (a script that never ends).", LoadTimeout.Seconds()), err)
	}
	if loadTimedOut {
		// The document is there but never finished parsing (a script that
		// never loads): wait for quiet and take it as it stands.
		// Bounded: a tab whose document never finished loading may not
		// answer at all.
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		cur, cerr := tab.Current(cctx)
		ccancel()
		if cerr != nil {
			return render.Rendered{}, err
		}
		nr, err = cur, nil
	}
	if err != nil {
		return render.Rendered{}, err
	}
	if rerr := r.renderRefusal(p, start, u.Href, nr.URL, guard); rerr != nil {
		return render.Rendered{}, rerr
	}
	if nr.ErrorText != "" {
		return render.Rendered{}, reason.Newf(reason.NavigationFailed, "", "The browser could not load the page to render it (%s).", nr.ErrorText)
	}
	tLoad := time.Now()
	fctx, fcancel := context.WithTimeout(ctx, renderSettleCap)
	expired, ferr := tab.FastForward(fctx, slot.watch, renderBudget)
	fcancel()
	busy := !expired
	if ferr != nil {
		busy = renderSettle(ctx, tab, renderSettleCap)
	}
	tSettle := time.Now()

	sctx, scancel := context.WithTimeout(ctx, renderSerialiseTimeout)
	defer scancel()
	raw, err := tab.CallIsolated(sctx, renderJS())
	if err != nil {
		return render.Rendered{}, err
	}
	tSer := time.Now()
	var out struct {
		HTML string `json:"html"`
		URL  string `json:"url"`
		// The document's navigation timing (ms since its navigation start).
		Timing struct {
			Request, Response, ResponseEnd, Interactive, Loaded float64
		} `json:"timing"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return render.Rendered{}, reason.Wrap(reason.BrowserFailed, "", "The render script returned an unexpected value.", err)
	}
	tm := out.Timing
	r.Logger.Debug("web_extract render", "open_ms", tOpen.Sub(t0).Milliseconds(), "load_ms", tLoad.Sub(start).Milliseconds(),
		"settle_ms", tSettle.Sub(tLoad).Milliseconds(), "serialise_ms", tSer.Sub(tSettle).Milliseconds(), "decode_ms", time.Since(tSer).Milliseconds(),
		"busy", busy, "served", slot.watch.Served(),
		// Inside the browser: to the document request, its response's
		// first and last byte, parsing (inline scripts included), deferred
		// scripts and DOMContentLoaded handlers.
		"nav_request_ms", int64(tm.Request), "nav_first_byte_ms", int64(tm.Response-tm.Request), "nav_body_ms", int64(tm.ResponseEnd-tm.Response),
		"nav_parse_ms", int64(tm.Interactive-tm.ResponseEnd), "nav_dcl_ms", int64(tm.Loaded-tm.Interactive))
	// A script may have navigated the page meanwhile: its URL is judged too.
	if rerr := r.renderRefusal(p, start, u.Href, out.URL, guard); rerr != nil {
		return render.Rendered{}, rerr
	}
	if _, status := slot.watch.Document(); status >= 400 {
		// The browser was answered with an error page (a bot check's 403,
		// or a script that navigated to a missing page): not the page.
		return render.Rendered{}, reason.Newf(reason.NavigationFailed, "", "The rendered page ended on an HTTP %d error page%s.", status, navigatedNote(u.Href, out.URL))
	}
	handed = true
	backstop := time.AfterFunc(renderReleaseBackstop, release)
	return render.Rendered{HTML: out.HTML, FinalURL: out.URL, Done: func() { backstop.Stop(); release() }}, nil
}

// navigatedNote says that a script navigated away from requested, if it did.
func navigatedNote(requested, final string) string {
	if final == "" || final == requested {
		return ""
	}
	return " (a script navigated to " + gate.Origin(final) + ")"
}

// renderRefusal judges the page's current URL final (after redirects or a
// script navigation) against requested: refused statically by the guard or
// the website policy, or refused by the proxy (on its dialed IP) while
// loading, it is the matching redirect_* or gate refusal.
func (r *Renderer) renderRefusal(p *egress.ProxySession, since time.Time, requested, final string, guard *egress.Guard) *reason.Error {
	if final == "" || final == "about:blank" {
		return nil
	}
	if i := strings.IndexByte(final, ':'); i > 0 && strings.EqualFold(final[:i], "chrome-error") {
		// The document failed to load: the first load, a redirect or a
		// script navigation. When the egress proxy refused something by
		// its gates (not a DNS failure) meanwhile, that was it.
		for _, rf := range p.RefusedSince(since) {
			if strings.HasPrefix(string(rf.Reason), "dns_") {
				continue
			}
			return redirectRefusal(reason.Newf(rf.Reason, reason.GateSSRF, "Blocked: the egress proxy refused the request for %s (%s).", net.JoinHostPort(rf.Host, strconv.Itoa(int(rf.Port))), rf.Reason))
		}
		return reason.New(reason.NavigationFailed, "", "The rendered page navigated to an address that could not be loaded.")
	}
	fu, err := urlsafe.Parse(final)
	if err != nil || (fu.Scheme != "http" && fu.Scheme != "https") {
		return nil // about:, data:, … carry no network address
	}
	var rerr *reason.Error
	if e := guard.CheckStatic(fu); e != nil {
		rerr = e
	} else if b := r.Policy.CheckURL(fu); b != nil {
		rerr = b.Err()
	}
	if rerr == nil {
		for _, rf := range p.RefusedSince(since) {
			if rf.Host != fu.Host {
				continue
			}
			if strings.HasPrefix(string(rf.Reason), "dns_") {
				// Not refused: the page's new host does not resolve (a
				// script navigated to it). The page could not be loaded.
				return reason.Newf(reason.NavigationFailed, "", "The rendered page navigated to %s, whose host could not be resolved (%s).", gate.Origin(fu.Href), rf.Reason)
			}
			rerr = reason.Newf(rf.Reason, reason.GateSSRF, "Blocked: the egress proxy refused the request for %s (%s).", gate.Origin(fu.Href), rf.Reason)
			break
		}
	}
	if rerr == nil {
		return nil
	}
	if rerr.Code == reason.PolicyBlocked {
		rerr.Gate = reason.GatePolicy
	}
	if fu.Href != requested {
		return redirectRefusal(rerr)
	}
	return rerr
}

// redirectRefusal is the refusal of a rendered page that redirected or
// navigated to an address refused with rerr.
func redirectRefusal(rerr *reason.Error) *reason.Error {
	switch rerr.Code {
	case reason.SSRFMetadata:
		return reason.Wrap(reason.RedirectMetadata, reason.GateSSRF, "Blocked: the rendered page redirected or navigated to a cloud metadata endpoint.", rerr)
	case reason.SSRFPrivate:
		return reason.Wrap(reason.RedirectPrivate, reason.GateSSRF, "Blocked: the rendered page redirected or navigated to a private/internal address.", rerr)
	case reason.PolicyBlocked:
		return reason.Wrap(reason.PolicyBlocked, reason.GatePolicy, "Blocked: the rendered page redirected or navigated to a host on the website blocklist. "+rerr.Message, rerr)
	}
	if rerr.Gate == "" {
		rerr.Gate = reason.GateSSRF
	}
	return rerr
}

// renderCSP is the Content-Security-Policy added to a document the render
// step serves from the fetched page: the renderer itself then never asks
// for images, media, fonts, plugins or manifests (which cannot change the
// text), with no CDP round trip per request as the Fetch filter
// (backend.RenderBlockTypes) takes; it stays for what the policy does not cover
// (frames' documents carry their own policy).
const renderCSP = "img-src 'none'; media-src 'none'; font-src 'none'; object-src 'none'; manifest-src 'none'"

// servedDocument is the response the render tab is given for the page's
// document: the fetched page with its Content-Type, Content-Language and
// Content-Security-Policy fields (its own policy restricts the page; the
// body is already decoded, and no cookie is set: a render is cookie-less),
// plus renderCSP.
func servedDocument(f *render.Fetched, href string) *backend.Response {
	r := &backend.Response{URL: href, Status: f.Status, Body: f.Body}
	if r.Status < 200 || r.Status > 299 {
		r.Status = 200
	}
	ct := f.Header.Get("Content-Type")
	if ct == "" {
		ct = "text/html"
	}
	r.Header = append(r.Header, [2]string{"Content-Type", ct})
	if v := f.Header.Get("Content-Language"); v != "" {
		r.Header = append(r.Header, [2]string{"Content-Language", v})
	}
	for _, v := range f.Header.Values("Content-Security-Policy") {
		r.Header = append(r.Header, [2]string{"Content-Security-Policy", v})
	}
	r.Header = append(r.Header, [2]string{"Content-Security-Policy", renderCSP})
	return r
}

// renderDocJS, run in Gatehouse's isolated world of a document, records the
// time of the document's last DOM mutation, which renderQuietJS reads (and
// installs it when missing).
const renderDocJS = `(() => {
  if (globalThis.__ghr) return;
  const q = globalThis.__ghr = { lastMut: performance.now() };
  new MutationObserver(() => { q.lastMut = performance.now(); })
    .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
})()`

// renderQuietJS returns the milliseconds since the document's last DOM
// mutation (0 when renderDocJS did not run in this document: it is
// installed now and the quiet window starts).
const renderQuietJS = `function () {
  let q = globalThis.__ghr;
  if (!q) { ` + renderDocJS + `; return 0; }
  return performance.now() - q.lastMut;
}`

// renderSettle waits for the rendered page to go quiet — the main frame's
// load event fired, no request in flight and none finished for QuietWindow,
// and no DOM mutation for QuietWindow — for at most limit; busy reports that
// limit (or ctx) ended the wait first. It waits on the tab's events and on
// timers set to the moment the window would close, never polling; the
// mutation time comes from renderDocJS, installed at its first look (the
// DOM's quiet window starts then).
func renderSettle(ctx context.Context, tab *backend.Tab, limit time.Duration) (busy bool) {
	deadline := time.Now().Add(limit)
	for {
		a := tab.Activity()
		now := time.Now()
		if !now.Before(deadline) || ctx.Err() != nil {
			return true
		}
		var wait time.Duration // 0: wait for the next tab event
		switch {
		case a.Loading || a.Inflight > 0:
		case now.Sub(a.LastNet) < QuietWindow:
			wait = QuietWindow - now.Sub(a.LastNet)
		default:
			qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			raw, err := tab.CallIsolated(qctx, renderQuietJS)
			cancel()
			var since float64
			if err != nil || json.Unmarshal(raw, &since) != nil {
				since = 0
			}
			quiet := time.Duration(since * float64(time.Millisecond))
			if quiet >= QuietWindow {
				if b := tab.Activity(); b.Inflight == 0 && !b.Loading && !b.LastNet.After(a.LastNet) {
					return false
				}
				continue // the network woke meanwhile
			}
			wait = QuietWindow - quiet
		}
		if rem := time.Until(deadline); wait == 0 || wait > rem {
			wait = max(rem, time.Millisecond)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-a.Changed:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// Spares is how many render contexts are kept prepared, so that a
// burst of renders does not wait for BrowserContexts to be created.
const Spares = 2

// renderPool holds up to Spares pre-started render contexts (a blank
// tab in a fresh BrowserContext with its own egress proxy listener for one
// guard), so a render does not wait for a BrowserContext to be created, and
// tracks the background work of preparing and discarding contexts.
type renderPool struct {
	mu      sync.Mutex
	spares  []*renderSlot
	filling int           // contexts being prepared
	filled  chan struct{} // closed when a fill under way ends; nil when none
	closed  bool
	wg      sync.WaitGroup
}

type renderSlot struct {
	guard *egress.Guard
	local *backend.Local
	tab   *backend.Tab
	proxy *egress.ProxySession
	watch *backend.RenderWatch
}

func (s *renderSlot) discard() {
	s.tab.Close()
	s.proxy.Close()
}

func (s *renderSlot) fits(l *backend.Local, guard *egress.Guard) bool {
	return s.guard == guard && s.local == l && s.tab.Healthy()
}

// newRenderSlot opens a fresh BrowserContext whose proxy judges with guard
// and the website policy, prepared for rendering (backend.RenderBlockTypes refused,
// the document served from the fetched page).
func (r *Renderer) newRenderSlot(ctx context.Context, l *backend.Local, guard *egress.Guard) (*renderSlot, error) {
	// The website policy on every request's host, whether or not guard
	// carries it (web.NewGuard's does not).
	policy := egress.HostDeciderFunc(func(_, host string, _ uint16) *reason.Error {
		if r.Policy == nil || !r.Policy.Enabled() {
			return nil
		}
		h := host
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
		if b := r.Policy.Check("https://" + h + "/"); b != nil {
			return b.Err()
		}
		return nil
	})
	// Private Network Access (egress/pna.go): the render tab reports no
	// documents, so the proxy treats it as public; private addresses pass
	// only where web_extract's guard allows them (security.allow_private_urls).
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "web_extract render", Guard: guard, Decider: policy, Logger: r.Logger,
		AllowPrivateFromPublic: guard.Options().Gate.AllowPrivate})
	if err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not start the render step's egress proxy.", err)
	}
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), DialogPolicy: backend.DialogDismiss})
	if err != nil {
		p.Close()
		return nil, err
	}
	// No DocumentScript: renderDocJS's observer would see every node the
	// parser inserts, work for the renderer on every page for the sake of
	// the quiet-wait, which only runs in a browser without virtual time and
	// installs it itself (renderQuietJS).
	w, err := tab.PrepareRender(ctx, backend.RenderOptions{BlockTypes: backend.RenderBlockTypes, ServeDocuments: true})
	if err != nil {
		tab.Close()
		p.Close()
		return nil, err
	}
	return &renderSlot{guard: guard, local: l, tab: tab, proxy: p, watch: w}, nil
}

// takeRenderSlot returns a spare context when one is ready for this browser
// and guard (it has never loaded a page), else a new one.
func (r *Renderer) takeRenderSlot(ctx context.Context, l *backend.Local, guard *egress.Guard) (*renderSlot, error) {
	for wait := true; ; wait = false {
		r.pool.mu.Lock()
		var s *renderSlot
		for i, sp := range r.pool.spares {
			if sp.fits(l, guard) {
				s = sp
				r.pool.spares = append(r.pool.spares[:i:i], r.pool.spares[i+1:]...)
				break
			}
		}
		filled := r.pool.filled
		r.pool.mu.Unlock()
		if s != nil {
			return s, nil
		}
		if !wait || filled == nil {
			return r.newRenderSlot(ctx, l, guard)
		}
		// A spare is being prepared: waiting for it is quicker than
		// opening another context next to it.
		select {
		case <-filled:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// releaseRenderSlot discards a used context and tops the spares up to
// Spares (spares of another browser or guard are discarded), all in
// the background.
func (r *Renderer) releaseRenderSlot(used *renderSlot, l *backend.Local, guard *egress.Guard) {
	r.pool.mu.Lock()
	defer r.pool.mu.Unlock()
	r.pool.wg.Add(1)
	go func() {
		defer r.pool.wg.Done()
		used.discard()
	}()
	if r.pool.closed {
		return
	}
	keep := r.pool.spares[:0]
	for _, sp := range r.pool.spares {
		if sp.fits(l, guard) {
			keep = append(keep, sp)
			continue
		}
		r.pool.wg.Add(1)
		go func() {
			defer r.pool.wg.Done()
			sp.discard()
		}()
	}
	r.pool.spares = keep
	for n := Spares - len(keep) - r.pool.filling; n > 0; n-- {
		r.fillRenderSlotLocked(l, guard)
	}
}

// fillRenderSlotLocked prepares one spare in the background; r.pool.mu is
// held.
func (r *Renderer) fillRenderSlotLocked(l *backend.Local, guard *egress.Guard) {
	r.pool.filling++
	if r.pool.filled == nil {
		r.pool.filled = make(chan struct{})
	}
	r.pool.wg.Add(1)
	go func() {
		defer r.pool.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := r.newRenderSlot(ctx, l, guard)
		if err == nil {
			// Warm the renderer and the isolated world.
			_, err = s.tab.CallIsolated(ctx, renderQuietJS)
		}
		r.pool.mu.Lock()
		r.pool.filling--
		if r.pool.filled != nil {
			close(r.pool.filled)
			r.pool.filled = nil
			if r.pool.filling > 0 {
				r.pool.filled = make(chan struct{})
			}
		}
		keep := err == nil && !r.pool.closed && len(r.pool.spares) < Spares
		if keep {
			r.pool.spares = append(r.pool.spares, s)
		}
		r.pool.mu.Unlock()
		if !keep && s != nil {
			s.discard()
		}
	}()
}

// Close waits for the background work and discards the prepared contexts
// (before the browser stops); Render is not called after.
func (r *Renderer) Close() { r.pool.close() }

// SparesReady is the number of prepared contexts waiting.
func (r *Renderer) SparesReady() int {
	r.pool.mu.Lock()
	defer r.pool.mu.Unlock()
	return len(r.pool.spares)
}

func (p *renderPool) close() {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	p.wg.Wait()
	p.mu.Lock()
	sp := p.spares
	p.spares = nil
	p.mu.Unlock()
	for _, s := range sp {
		s.discard()
	}
}
