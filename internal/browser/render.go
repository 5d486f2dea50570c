package browser

import (
	"context"
	_ "embed"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/network"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

// The render step of web_extract (the direct backend's direct.Renderer):
// one page loaded once in a fresh BrowserContext of the local Chromium, its
// rendered DOM serialised for the content pipeline.

//go:embed render.js
var renderJS string

// Render limits.
const (
	// renderLoadTimeout bounds the navigation (up to DOMContentLoaded).
	renderLoadTimeout = 20 * time.Second
	// renderSettleCap bounds, in wall-clock time, the wait after
	// DOMContentLoaded (virtual time, else the quiet-wait), longer than the
	// browser tools' cap, as an application fetches its data after load.
	renderSettleCap = 3 * time.Second
	// renderBudget is the virtual time a page is given after
	// DOMContentLoaded (see backend.Tab.FastForward).
	renderBudget = 3 * time.Second
	// renderSerialiseTimeout bounds the DOM serialisation.
	renderSerialiseTimeout = 10 * time.Second
)

var _ direct.Renderer = (*Manager)(nil)

// Render implements direct.Renderer: it loads rawURL in a fresh, isolated,
// cookie-less BrowserContext (its own cookies, storage and cache, discarded
// afterwards) whose traffic goes through its own egress proxy listener
// judging every request with guard (the extract pipeline's guard: private
// addresses refused unless security.allow_private_urls) on the dialed IP,
// and with the website policy on its host; images, media, fonts, style
// sheets, pings and CSP reports are refused inside the browser
// (renderBlockTypes). It waits for DOMContentLoaded (at most 20 s), then
// gives the page 3 s of virtual time (backend.Tab.FastForward: its timers
// run as soon as it is idle, so the wait ends once the page is), or, in a
// browser without virtual time, waits for the network and the DOM to go
// quiet (renderSettle); both at most 3 s of wall-clock time. It serialises
// the DOM: open shadow roots flattened into their
// hosts (slots filled with their assigned nodes), same-origin iframes
// inlined in place of the <iframe>, scripts (but JSON-LD), styles,
// <noscript> and <template> dropped; at most 10 MB.
//
// Errors: the gates' codes when the document itself was refused, or when a
// redirect or a script navigation ended on a refused URL (redirect_private,
// redirect_metadata, ssrf_*, policy_blocked); navigation_failed when the
// page could not be loaded; chromium_missing and browser_failed.
func (m *Manager) Render(ctx context.Context, rawURL string, guard *egress.Guard) (direct.Rendered, error) {
	u, perr := urlsafe.Parse(rawURL)
	if perr != nil {
		return direct.Rendered{}, perr
	}
	t0 := time.Now()
	l, err := m.ensureBrowser(ctx)
	if err != nil {
		return direct.Rendered{}, err
	}
	slot, err := m.takeRenderSlot(ctx, l, guard)
	if err != nil {
		return direct.Rendered{}, err
	}
	// The used context is discarded in the background, and the next one
	// prepared (a new BrowserContext costs ~200 ms).
	defer m.releaseRenderSlot(slot, l, guard)
	tab, p := slot.tab, slot.proxy
	tOpen := time.Now()

	start := time.Now()
	// Up to DOMContentLoaded: the rest of the load (async scripts, frames,
	// their data) is what the quiet-wait waits for, within its own cap, so a
	// sub-resource that never finishes costs the cap, not the load timeout.
	nctx, cancel := context.WithTimeout(ctx, renderLoadTimeout)
	nr, err := tab.NavigateUntil(nctx, u.Href, "DOMContentLoaded")
	loadTimedOut := reason.Of(err) == reason.CommandTimeout && ctx.Err() == nil && tab.Healthy()
	cancel()
	if loadTimedOut {
		// The document is there but never finished parsing (a script that
		// never loads): wait for quiet and take it as it stands.
		cur, cerr := tab.Current(ctx)
		if cerr != nil {
			return direct.Rendered{}, err
		}
		nr, err = cur, nil
	}
	if err != nil {
		return direct.Rendered{}, err
	}
	if rerr := m.renderRefusal(p, start, u.Href, nr.URL, guard); rerr != nil {
		return direct.Rendered{}, rerr
	}
	if nr.ErrorText != "" {
		return direct.Rendered{}, reason.Newf(reason.NavigationFailed, "", "The browser could not load the page to render it (%s).", nr.ErrorText)
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
	raw, err := tab.CallIsolated(sctx, renderJS)
	if err != nil {
		return direct.Rendered{}, err
	}
	var out struct {
		HTML string `json:"html"`
		URL  string `json:"url"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return direct.Rendered{}, reason.Wrap(reason.BrowserFailed, "", "The render script returned an unexpected value.", err)
	}
	m.logger.Debug("web_extract render", "open_ms", tOpen.Sub(t0).Milliseconds(), "load_ms", tLoad.Sub(start).Milliseconds(),
		"settle_ms", tSettle.Sub(tLoad).Milliseconds(), "serialise_ms", time.Since(tSettle).Milliseconds(), "busy", busy)
	// A script may have navigated the page meanwhile: its URL is judged too.
	if rerr := m.renderRefusal(p, start, u.Href, out.URL, guard); rerr != nil {
		return direct.Rendered{}, rerr
	}
	if _, status := slot.watch.Document(); status >= 400 {
		// The browser was answered with an error page (a bot check's 403,
		// or a script that navigated to a missing page): not the page.
		return direct.Rendered{}, reason.Newf(reason.NavigationFailed, "", "The rendered page ended on an HTTP %d error page%s.", status, navigatedNote(u.Href, out.URL))
	}
	return direct.Rendered{HTML: out.HTML, FinalURL: out.URL}, nil
}

// navigatedNote says that a script navigated away from requested, if it did.
func navigatedNote(requested, final string) string {
	if final == "" || final == requested {
		return ""
	}
	return " (a script navigated to " + originOf(final) + ")"
}

// renderRefusal judges the page's current URL final (after redirects or a
// script navigation) against requested: refused statically by the guard or
// the website policy, or refused by the proxy (on its dialed IP) while
// loading, it is the matching redirect_* or gate refusal.
func (m *Manager) renderRefusal(p *egress.ProxySession, since time.Time, requested, final string, guard *egress.Guard) *reason.Error {
	if final == "" || final == "about:blank" {
		return nil
	}
	if sc, _, _ := splitScheme(final); sc == "chrome-error" {
		// The document failed to load: the first load, a redirect or a
		// script navigation. When the egress proxy refused something by
		// its gates (not a DNS failure) meanwhile, that was it.
		for _, rf := range p.RefusedSince(since) {
			if strings.HasPrefix(string(rf.Reason), "dns_") {
				continue
			}
			return redirectRefusal(reason.Newf(rf.Reason, reason.GateSSRF, "Blocked: the egress proxy refused %s (%s).", rf.Host, rf.Reason))
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
	} else if b := m.gates.Policy.Check(fu.Href); b != nil {
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
				return reason.Newf(reason.NavigationFailed, "", "The rendered page navigated to %s, whose host could not be resolved (%s).", originOf(fu.Href), rf.Reason)
			}
			rerr = reason.Newf(rf.Reason, reason.GateSSRF, "Blocked: the egress proxy refused the page's host (%s).", rf.Reason)
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

// renderBlockTypes are the resource types a render context refuses inside
// the browser: text extraction needs none of them, and not loading them is
// most of what makes a render cheap. Documents (frames too), scripts and
// their fetch/XHR/WebSocket/EventSource traffic load as usual, through the
// egress proxy, which stays the security boundary for every request.
// (Chromium's Fetch filter rejects the TextTrack, Manifest, Prefetch,
// SignedExchange and FedCM types as unknown: those load, rarely and small.)
var renderBlockTypes = []network.ResourceType{
	network.ResourceTypeImage, network.ResourceTypeMedia, network.ResourceTypeFont,
	network.ResourceTypeStylesheet, network.ResourceTypePing, network.ResourceTypeCSPViolationReport,
}

// renderDocJS runs in Gatehouse's isolated world at the start of every
// document of a render context, before the page's scripts: it records the
// time of the document's last DOM mutation (the parser's insertions
// included), which renderQuietJS reads.
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
// load event fired, no request in flight and none finished for quietWindow,
// and no DOM mutation for quietWindow — for at most limit; busy reports that
// limit (or ctx) ended the wait first. It waits on the tab's events and on
// timers set to the moment the window would close, never polling, and the
// mutation time comes from renderDocJS, so a page that has been quiet since
// it loaded is done at once.
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
		case now.Sub(a.LastNet) < quietWindow:
			wait = quietWindow - now.Sub(a.LastNet)
		default:
			qctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			raw, err := tab.CallIsolated(qctx, renderQuietJS)
			cancel()
			var since float64
			if err != nil || json.Unmarshal(raw, &since) != nil {
				since = 0
			}
			quiet := time.Duration(since * float64(time.Millisecond))
			if quiet >= quietWindow {
				if b := tab.Activity(); b.Inflight == 0 && !b.Loading && !b.LastNet.After(a.LastNet) {
					return false
				}
				continue // the network woke meanwhile
			}
			wait = quietWindow - quiet
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

// renderSpares is how many render contexts are kept prepared, so that a
// burst of renders does not wait for BrowserContexts to be created.
const renderSpares = 2

// renderPool holds up to renderSpares pre-started render contexts (a blank
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
// and the website policy, prepared for rendering (renderBlockTypes refused,
// renderDocJS installed).
func (m *Manager) newRenderSlot(ctx context.Context, l *backend.Local, guard *egress.Guard) (*renderSlot, error) {
	// The website policy on every request's host, whether or not guard
	// carries it (web.NewGuard's does not).
	policy := egress.HostDeciderFunc(func(_, host string, _ uint16) *reason.Error {
		if m.gates.Policy == nil || !m.gates.Policy.Enabled() {
			return nil
		}
		h := host
		if strings.Contains(h, ":") {
			h = "[" + h + "]"
		}
		if b := m.gates.Policy.Check("https://" + h + "/"); b != nil {
			return b.Err()
		}
		return nil
	})
	p, err := egress.NewProxySession(egress.ProxyOptions{Name: "web_extract render", Guard: guard, Decider: policy, Logger: m.logger})
	if err != nil {
		return nil, reason.Wrap(reason.BrowserFailed, "", "Could not start the render step's egress proxy.", err)
	}
	tab, err := l.NewTab(ctx, backend.TabOptions{ProxyURL: p.URL(), DialogPolicy: backend.DialogDismiss})
	if err != nil {
		p.Close()
		return nil, err
	}
	w, err := tab.PrepareRender(ctx, backend.RenderOptions{BlockTypes: renderBlockTypes, DocumentScript: renderDocJS})
	if err != nil {
		tab.Close()
		p.Close()
		return nil, err
	}
	return &renderSlot{guard: guard, local: l, tab: tab, proxy: p, watch: w}, nil
}

// takeRenderSlot returns a spare context when one is ready for this browser
// and guard (it has never loaded a page), else a new one.
func (m *Manager) takeRenderSlot(ctx context.Context, l *backend.Local, guard *egress.Guard) (*renderSlot, error) {
	for wait := true; ; wait = false {
		m.rpool.mu.Lock()
		var s *renderSlot
		for i, sp := range m.rpool.spares {
			if sp.fits(l, guard) {
				s = sp
				m.rpool.spares = append(m.rpool.spares[:i:i], m.rpool.spares[i+1:]...)
				break
			}
		}
		filled := m.rpool.filled
		m.rpool.mu.Unlock()
		if s != nil {
			return s, nil
		}
		if !wait || filled == nil {
			return m.newRenderSlot(ctx, l, guard)
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
// renderSpares (spares of another browser or guard are discarded), all in
// the background.
func (m *Manager) releaseRenderSlot(used *renderSlot, l *backend.Local, guard *egress.Guard) {
	m.rpool.mu.Lock()
	defer m.rpool.mu.Unlock()
	m.rpool.wg.Add(1)
	go func() {
		defer m.rpool.wg.Done()
		used.discard()
	}()
	if m.rpool.closed {
		return
	}
	keep := m.rpool.spares[:0]
	for _, sp := range m.rpool.spares {
		if sp.fits(l, guard) {
			keep = append(keep, sp)
			continue
		}
		m.rpool.wg.Add(1)
		go func() {
			defer m.rpool.wg.Done()
			sp.discard()
		}()
	}
	m.rpool.spares = keep
	for n := renderSpares - len(keep) - m.rpool.filling; n > 0; n-- {
		m.fillRenderSlotLocked(l, guard)
	}
}

// fillRenderSlotLocked prepares one spare in the background; m.rpool.mu is
// held.
func (m *Manager) fillRenderSlotLocked(l *backend.Local, guard *egress.Guard) {
	m.rpool.filling++
	if m.rpool.filled == nil {
		m.rpool.filled = make(chan struct{})
	}
	m.rpool.wg.Add(1)
	go func() {
		defer m.rpool.wg.Done()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := m.newRenderSlot(ctx, l, guard)
		if err == nil {
			// Warm the renderer and the isolated world.
			_, err = s.tab.CallIsolated(ctx, renderQuietJS)
		}
		m.rpool.mu.Lock()
		m.rpool.filling--
		if m.rpool.filled != nil {
			close(m.rpool.filled)
			m.rpool.filled = nil
			if m.rpool.filling > 0 {
				m.rpool.filled = make(chan struct{})
			}
		}
		keep := err == nil && !m.rpool.closed && len(m.rpool.spares) < renderSpares
		if keep {
			m.rpool.spares = append(m.rpool.spares, s)
		}
		m.rpool.mu.Unlock()
		if !keep && s != nil {
			s.discard()
		}
	}()
}

// close waits for the background work and discards the spares
// (Manager.Close, before the browser stops).
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
