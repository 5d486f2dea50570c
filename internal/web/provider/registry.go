package provider

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Backend is one vendor's clients: keyed (the vendor API with the user's key, or
// a self-hosted endpoint) and keyless (the vendor's free tier). Nil fields are
// paths the vendor does not have.
type Backend struct {
	Spec
	Search         Searcher  // keyed / self-hosted / embedded search
	Extract        Extractor // keyed / self-hosted / embedded extract
	KeylessSearch  Searcher
	KeylessExtract Extractor
}

// Registry holds the built backends, the settings they were resolved from and
// the ring cursor. Safe for concurrent use.
type Registry struct {
	settings Settings
	backends map[string]*Backend
	cursor   *Cursor
	log      *slog.Logger
}

// NewRegistry returns a registry over backends. cursor may be nil (a cursor
// seeded from "" is used); log nil means slog.Default().
func NewRegistry(s Settings, backends []*Backend, cursor *Cursor, log *slog.Logger) *Registry {
	if cursor == nil {
		cursor = NewCursor("")
	}
	if log == nil {
		log = slog.Default()
	}
	m := make(map[string]*Backend, len(backends))
	for _, b := range backends {
		m[b.Name] = b
	}
	return &Registry{settings: s, backends: m, cursor: cursor, log: log}
}

// Settings returns the settings the registry resolves with.
func (r *Registry) Settings() Settings { return r.settings }

// Backend returns the named backend (nil if not built).
func (r *Registry) Backend(name string) *Backend { return r.backends[Canonical(name)] }

// Resolve is Resolve(c, r.Settings()).
func (r *Registry) Resolve(c Capability) (Resolution, *reason.Error) { return Resolve(c, r.settings) }

// SearchOutcome is the result of one search through the registry.
type SearchOutcome struct {
	Rows []Row
	// Provider is the backend the call was resolved to ("keyless" for the
	// unpinned ring).
	Provider string
	// ServedBy names the keyless vendor that answered when it differs from
	// Provider (ring failover) or the call was rescued.
	ServedBy string
	// RescuedFrom and BackendError are set when the configured backend failed
	// and the keyless ring answered instead (spec §A5.5); such outcomes are
	// never cached.
	RescuedFrom  string
	BackendError string
	// Tried names the keyless vendors the query was handed to, in ring
	// order, when the call walked the keyless ring. Search sets it on a
	// failed keyless call too (the outcome then has no rows and comes with
	// the error), so that a failure can still say which third parties got
	// the query.
	Tried []string
}

// Rescued reports whether the outcome came from the one-shot keyless rescue.
func (o *SearchOutcome) Rescued() bool { return o.RescuedFrom != "" }

// Search runs query on the resolution res: a keyless resolution walks the
// ring with failover; any other calls the backend and, when it fails and the
// rescue is allowed, retries once on the ring (spec §A5.5). Errors carry a
// *reason.Error. A keyless resolution that fails returns, with the error,
// an outcome without rows whose Tried names the vendors the ring handed the
// query to (nil when none was tried); any other failure returns a nil
// outcome.
func (r *Registry) Search(ctx context.Context, res Resolution, query string, limit int) (*SearchOutcome, error) {
	if res.Mode == ModeKeyless {
		rows, served, tried, err := r.ringSearch(ctx, res.Name, res.Pinned, query, limit)
		if err != nil {
			if out, berr := r.backstopSearch(ctx, res, query, limit, err); out != nil {
				return out, berr
			}
			return &SearchOutcome{Provider: res.Name, Tried: tried}, err
		}
		o := &SearchOutcome{Rows: rows, Provider: res.Name, Tried: tried}
		if served != res.Name {
			o.ServedBy = served
		}
		return o, nil
	}
	b := r.backends[res.Name]
	if b == nil || b.Search == nil {
		return nil, reason.Newf(reason.NoProvider, "", "The %s backend has no search client in this build.", res.Name)
	}
	rows, err := b.Search.Search(ctx, query, limit)
	if err == nil {
		return &SearchOutcome{Rows: rows, Provider: res.Name}, nil
	}
	if ctx.Err() != nil || !r.rescueEligible(res) {
		return nil, err
	}
	rows, served, tried, rerr := r.ringSearch(ctx, res.Name, b.Ring, query, limit)
	if rerr != nil {
		return nil, reason.Wrap(reasonOf(err), "", fmt.Sprintf("%s (keyless rescue also failed: %s)", err.Error(), rerr.Error()), err)
	}
	be := backendError(err)
	r.log.Warn("one-shot keyless rescue", "tool", "web_search", "rescued_from", res.Name, "served_by", served, "reason", string(reason.Of(err)))
	return &SearchOutcome{Rows: rows, Provider: res.Name, ServedBy: served, RescuedFrom: res.Name, BackendError: be, Tried: tried}, nil
}

// backstopSearch is the keyed backstop (spec §A5.5, web.keyed_backstop): a
// keyless call on a pinned vendor whose ring is exhausted retries once on the
// vendor's keyed path when a key exists.
func (r *Registry) backstopSearch(ctx context.Context, res Resolution, query string, limit int, ringErr error) (*SearchOutcome, error) {
	if !r.settings.KeyedBackstop || !res.Pinned || ctx.Err() != nil {
		return nil, nil
	}
	b := r.backends[res.Name]
	if b == nil || b.Search == nil || !r.settings.HasKey(b.Spec) {
		return nil, nil
	}
	rows, err := b.Search.Search(ctx, query, limit)
	if err != nil {
		return nil, reason.Wrap(reasonOf(ringErr), "", fmt.Sprintf("%s (keyed backstop also failed: %s)", ringErr.Error(), err.Error()), ringErr)
	}
	return &SearchOutcome{Rows: rows, Provider: res.Name, RescuedFrom: "keyless", BackendError: backendError(ringErr)}, nil
}

// rescueEligible: the rescue is on and the failed call used a vendor's keyed
// API (spec §A5.5: a keyless ring member already walked the ring). Embedded
// and self-hosted backends (direct, ddgs, searxng, a self-hosted firecrawl)
// are never rescued: their users chose not to send queries and URLs to a
// vendor, and a rescue would hand them to a third party they never picked.
func (r *Registry) rescueEligible(res Resolution) bool {
	return r.settings.KeylessRescue && r.settings.KeylessFallback && res.Mode == ModeKeyed
}

// RescueEligible reports whether a failure of res may be rescued by the ring.
func (r *Registry) RescueEligible(res Resolution) bool { return r.rescueEligible(res) }

func backendError(err error) string {
	msg := err.Error()
	if rs := []rune(msg); len(rs) > 300 {
		msg = string(rs[:300]) + "…"
	}
	return msg + " (the next call uses the configured backend again)"
}

func reasonOf(err error) reason.Code {
	if c := reason.Of(err); c != "" {
		return c
	}
	return reason.ProviderError
}

func (r *Registry) walk(entry string, pinned bool) ([]string, *reason.Error) {
	cur := 0
	if !pinned {
		cur = r.cursor.Next()
	}
	w := RingWalk(entry, pinned, cur, r.settings.paidPinned())
	if len(w) == 0 {
		return nil, reason.New(reason.KeylessExhausted, "",
			"All keyless web providers are pinned to paid tiers (web.provider_tier), so the keyless ring is empty. Set an API key, or `gatehouse config set web.provider_tier.exa auto`.")
	}
	return w, nil
}

// ringSearch walks the keyless ring for a search (spec §A5.4): it moves on
// only when MovesRing(err); it returns the vendor that answered and every
// vendor the query was handed to, in order (on failure too).
func (r *Registry) ringSearch(ctx context.Context, entry string, pinned bool, query string, limit int) ([]Row, string, []string, error) {
	w, werr := r.walk(entry, pinned)
	if werr != nil {
		return nil, "", nil, werr
	}
	var tried []string
	var last error
	for _, v := range w {
		b := r.backends[v]
		if b == nil || b.KeylessSearch == nil {
			continue
		}
		tried = append(tried, v)
		rows, err := b.KeylessSearch.Search(ctx, query, limit)
		if err == nil {
			return rows, v, tried, nil
		}
		last = err
		if ctx.Err() != nil || !MovesRing(err) {
			return nil, v, tried, err
		}
	}
	if last == nil {
		return nil, "", nil, reason.New(reason.KeylessExhausted, "", "No keyless search vendor is available in this build.")
	}
	return nil, "", tried, reason.Wrap(reason.KeylessExhausted, "",
		fmt.Sprintf("%s (keyless ring exhausted; tried %s)", last.Error(), strings.Join(tried, ", ")), last)
}

// ringExtract walks the ring for an extract batch: it moves on only when
// every row failed for a vendor-side reason (ExtractMovesRing).
func (r *Registry) ringExtract(ctx context.Context, entry string, pinned bool, urls []string) ([]Page, string, *reason.Error) {
	w, werr := r.walk(entry, pinned)
	if werr != nil {
		return nil, "", werr
	}
	var tried []string
	var last []Page
	for _, v := range w {
		b := r.backends[v]
		if b == nil || b.KeylessExtract == nil {
			continue
		}
		tried = append(tried, v)
		pages := collect(ctx, b.KeylessExtract, urls)
		for i := range pages {
			pages[i].ServedBy = v
		}
		last = pages
		if ctx.Err() != nil || !ExtractMovesRing(pages) {
			return pages, v, nil
		}
	}
	if last == nil {
		return nil, "", reason.New(reason.KeylessExhausted, "", "No keyless extract vendor is available in this build.")
	}
	msg := "keyless ring exhausted; tried " + strings.Join(tried, ", ")
	for i := range last {
		if last[i].Err != nil {
			last[i].Err = reason.Wrap(reason.KeylessExhausted, "", last[i].Err.Error()+" ("+msg+")", last[i].Err)
		}
	}
	return last, tried[len(tried)-1], nil
}

// collect runs ext over urls and returns one Page per URL (a URL the
// extractor never emitted gets a no_result_for_url page).
func collect(ctx context.Context, ext Extractor, urls []string) []Page {
	pages := make([]Page, len(urls))
	got := make([]bool, len(urls))
	var mu sync.Mutex
	ext.Extract(ctx, urls, func(i int, p Page) {
		mu.Lock()
		defer mu.Unlock()
		if i >= 0 && i < len(pages) && !got[i] {
			pages[i], got[i] = p, true
		}
	})
	for i := range pages {
		if !got[i] {
			pages[i] = Page{URL: urls[i], Err: reason.Newf(reason.NoResultForURL, "", "The %s backend returned nothing for this URL.", ext.Name())}
		}
	}
	return pages
}

// Extractor returns the extractor for res: the backend's own client, or for a
// keyless resolution a ring walker that starts at res.Name.
func (r *Registry) Extractor(res Resolution) (Extractor, *reason.Error) {
	if res.Mode == ModeKeyless {
		return &ringExtractor{r: r, entry: res.Name, pinned: res.Pinned}, nil
	}
	b := r.backends[res.Name]
	if b == nil || b.Extract == nil {
		return nil, reason.Newf(reason.NoProvider, "", "No extract client for %q is set up in this process. `gatehouse config set web.extract_backend direct` uses the embedded fetcher.", res.Name)
	}
	return b.Extract, nil
}

type ringExtractor struct {
	r      *Registry
	entry  string
	pinned bool
}

func (x *ringExtractor) Name() string { return x.entry }

func (x *ringExtractor) Extract(ctx context.Context, urls []string, emit func(int, Page)) {
	pages, _, err := x.r.ringExtract(ctx, x.entry, x.pinned, urls)
	for i := range urls {
		if err != nil {
			emit(i, Page{URL: urls[i], Err: err})
			continue
		}
		emit(i, pages[i])
	}
}

// RescueExtract re-fetches urls (the genuinely failed, non-policy rows of a
// batch whose every row failed) once through the keyless ring, starting at the
// failed backend when it is a ring member (spec §A5.5). It returns nil when
// the ring failed everywhere: the caller keeps its original rows. The
// returned pages carry ServedBy; the caller adds rescued_from and
// backend_error, never caches them, and logs the rescue.
func (r *Registry) RescueExtract(ctx context.Context, failed Resolution, urls []string) []Page {
	b := r.backends[failed.Name]
	ring := b != nil && b.Ring
	pages, served, err := r.ringExtract(ctx, failed.Name, ring, urls)
	if err != nil || pages == nil {
		return nil
	}
	ok := false
	for _, p := range pages {
		if p.Err == nil {
			ok = true
		}
	}
	if !ok {
		return nil
	}
	r.log.Warn("one-shot keyless rescue", "tool", "web_extract", "rescued_from", failed.Name, "served_by", served, "urls", len(urls))
	return pages
}
