// Package cache holds the two result caches of the web tools (spec §A9):
// the extract cache on disk (Cache), shared across processes, and the
// in-memory search memo with single-flight coalescing (Memo).
//
// Both caches sit after every gate in the pipelines: a hit only skips the
// paid vendor call, never a safety check, and a cached page still goes
// through truncate.Apply.
package cache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// TTL bounds and index size (spec §A9).
const (
	DefaultTTL        = 20 * time.Minute   // web.cache_ttl_minutes default
	MinTTL            = time.Minute        // web.cache_ttl_minutes is clamped to [1, 1440] minutes
	MaxTTL            = 1440 * time.Minute //
	DefaultMaxEntries = 500                // index entries kept; the oldest by fetched_at are evicted
	IndexFile         = "extract-index.json"
	lockFile          = "extract-index.lock"
	// maxEntryBytes bounds what Get reads: StoreCap chars of at most 4 bytes.
	maxEntryBytes = 4 * truncate.StoreCap
	// maxIndexBytes bounds the index read (500 entries are ~150 KB).
	maxIndexBytes = 64 << 20
)

// Options configures a Cache. New copies it; nil or zero fields take the
// documented defaults.
type Options struct {
	// Dir is the cache directory, normally <home>/cache/web (shared with the
	// truncate full-text store). Created 0700 on the first Put (files 0600). An empty Dir
	// disables the cache.
	Dir string
	// TTL is how long an entry is served (web.cache_ttl_minutes). Zero or
	// negative means DefaultTTL; other values are clamped to [MinTTL, MaxTTL].
	TTL time.Duration
	// Enabled is web.cache_enabled. False makes every Get miss and every Put
	// a no-op.
	Enabled bool
	// ExemptHosts is web.cache_exempt_hosts: hosts never cached (see
	// ExemptMatch), for sites that change under a stable public URL.
	ExemptHosts []string
	// PrivateAllowed, if set, reports whether rawURL was admitted only
	// because private addresses are allowed (security.allow_private_urls,
	// or a trusted private-resolving host, spec §A6.3 step 4): such pages are
	// internal and never cached. The cache does no DNS itself; the pipeline,
	// which knows the SSRF verdict, supplies this. Nil means no URL is.
	PrivateAllowed func(rawURL string) bool
	// MaxEntries caps the index; 0 means DefaultMaxEntries.
	MaxEntries int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Shared, when set, keeps the entries in shared state (Redis,
	// GATEHOUSE_REDIS_URL; internal/state) instead of under Dir: the same
	// Key values, the TTL kept by the store, no index (the store's own
	// eviction replaces the index-of-MaxEntries rule). Cacheable, the TTL
	// and the final-URL rules are unchanged; Dir must still be set (it
	// enables the cache). Nil is the embedded default: the disk layout
	// described on Cache.
	Shared SharedEntries
}

// SharedEntries is where a Cache with Options.Shared keeps its entries:
// key is Key(rawURL, format, provider). Implementations validate what they
// read like input (a value they did not write is an error, never a panic)
// and are safe for concurrent use. Errors: the store unreachable (a
// *reason.Error with code state_unavailable) or a corrupt value
// (state_corrupt).
type SharedEntries interface {
	// GetEntry returns the entry under key; false when there is none.
	GetEntry(ctx context.Context, key string) (Entry, bool, error)
	// PutEntry stores e under key for ttl (> 0), unless the entry already
	// stored has a later FetchedAt (a slow fetch finishing after a newer one).
	PutEntry(ctx context.Context, key string, e Entry, ttl time.Duration) error
}

// Cache is the disk-backed extract cache (spec §A9.2). Entries live in
// <Dir>/<host-slug>-<Key>.cache.md with an index <Dir>/extract-index.json
// mapping Key → {url, final_url, file, title, fetched_at (epoch seconds)},
// the layout of the described system, so an existing cache directory reads
// unchanged. A *Cache is safe for concurrent use, and several processes may
// share one Dir.
type Cache struct {
	o      Options
	dir    string // absolute Dir, "" when disabled
	exempt []string

	mu     sync.Mutex // guards memo of the parsed index
	memoFI os.FileInfo
	memoIx map[string]indexEntry
}

// indexMu serialises index updates within this process; the flock on
// extract-index.lock serialises them across processes.
var indexMu sync.Mutex

// Entry is one cached page.
type Entry struct {
	URL       string    // the requested URL (the cache key)
	FinalURL  string    // the URL the provider reports after redirects; Put uses URL when empty
	Title     string    // page title, may be empty
	Content   string    // full clean text (not truncated)
	FetchedAt time.Time // when the page was fetched; Put uses Now when zero
	// Extra is opaque JSON the pipeline keeps with the page (its metadata
	// and links), stored in a sidecar file <entry>.meta.json next to the
	// entry file; nil when none. At most maxExtraBytes.
	Extra []byte
}

// maxExtraBytes bounds an entry's Extra (200 links of long URLs fit).
const maxExtraBytes = 1 << 20

// extraFile returns the sidecar file of an entry file.
func extraFile(file string) string { return strings.TrimSuffix(file, ".cache.md") + ".meta.json" }

type indexEntry struct {
	URL       string  `json:"url"`
	FinalURL  string  `json:"final_url,omitempty"`
	File      string  `json:"file"`
	Title     string  `json:"title"`
	FetchedAt float64 `json:"fetched_at"`
}

// New returns a Cache for o (copied). See Options for defaults.
func New(o Options) *Cache {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	o.TTL = min(max(o.TTL, MinTTL), MaxTTL)
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Cache{o: o, exempt: append([]string(nil), o.ExemptHosts...)}
	c.o.ExemptHosts = c.exempt
	if o.Dir != "" {
		if abs, err := filepath.Abs(o.Dir); err == nil {
			c.dir = abs
		}
	}
	return c
}

// TTL returns the effective (clamped) TTL.
func (c *Cache) TTL() time.Duration { return c.o.TTL }

// Key returns the cache key of (rawURL, format, provider): the first 16 hex
// digits of sha256(rawURL + "\n" + format + "\n" + provider), with an empty
// format meaning "markdown" (spec §A9.2). Format and provider are part of the
// key because HTML and markdown renderings differ and one backend's rendering
// is never served as another's.
func Key(rawURL, format, provider string) string {
	if format == "" {
		format = "markdown"
	}
	sum := sha256.Sum256([]byte(rawURL + "\n" + format + "\n" + provider))
	return hex.EncodeToString(sum[:])[:16]
}

// FileName returns the entry file name: <truncate.HostSlug(rawURL)>-<Key>.cache.md.
func FileName(rawURL, format, provider string) string {
	return truncate.HostSlug(rawURL) + "-" + Key(rawURL, format, provider) + ".cache.md"
}

// Cacheable reports whether pages of rawURL may be cached: the cache is
// enabled, the host is not a local-dev host (see isLocalDevHost: a freshness
// heuristic on the host name only, no DNS), not matched by ExemptHosts, and
// not reported by Options.PrivateAllowed.
// A URL that does not parse, or has no host, is treated as local (not
// cached). Both Get and Put check the requested and the final URL.
func (c *Cache) Cacheable(rawURL string) bool {
	if c == nil || !c.o.Enabled || c.dir == "" {
		return false
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return false
	}
	host := strings.ToLower(u.Hostname())
	if isLocalDevHost(host) {
		return false
	}
	for _, p := range c.exempt {
		if ExemptMatch(host, p) {
			return false
		}
	}
	return c.o.PrivateAllowed == nil || !c.o.PrivateAllowed(rawURL)
}

// ExemptMatch reports whether host matches one web.cache_exempt_hosts
// pattern (spec §A9.2): case-insensitive; surrounding dots and a leading "*."
// are removed from the pattern; it then matches the host exactly or as a
// label-boundary suffix ("mysite.dev" covers "preview.mysite.dev", not
// "evilmysite.dev"; "*.ngrok-free.app" also covers "ngrok-free.app"). An
// empty pattern matches nothing.
func ExemptMatch(host, pattern string) bool {
	host = strings.Trim(strings.ToLower(host), ".")
	pattern = strings.Trim(strings.ToLower(strings.TrimSpace(pattern)), ".")
	pattern = strings.TrimPrefix(pattern, "*.")
	return pattern != "" && (host == pattern || strings.HasSuffix(host, "."+pattern))
}

// Get returns the cached page for (rawURL, format, provider) if there is a
// fresh one (spec §A9.2): rawURL is cacheable, the index has the key,
// 0 ≤ now − fetched_at < TTL, the entry records a final URL that is itself
// cacheable (entries without redirect provenance are misses), the entry
// file is a regular file inside Dir reached without any symlink, in a Dir
// that is a real directory of the current user (readContained: a tampered
// index or a planted link can never cause a read elsewhere), and it holds valid UTF-8 (a BOM
// is tolerated). Every failure is a miss. Entry.Extra is the entry's
// sidecar (<entry>.meta.json, read with the same containment checks) when
// it exists and is valid JSON, else nil.
func (c *Cache) Get(rawURL, format, provider string) (Entry, bool) {
	if c != nil && c.o.Shared != nil {
		e, ok, err := c.Lookup(context.Background(), rawURL, format, provider)
		return e, ok && err == nil
	}
	if !c.Cacheable(rawURL) {
		return Entry{}, false
	}
	ix := c.index()
	ie, ok := ix[Key(rawURL, format, provider)]
	if !ok {
		return Entry{}, false
	}
	fetched := fromEpoch(ie.FetchedAt)
	age := c.o.Now().Sub(fetched)
	if age < 0 || age >= c.o.TTL {
		return Entry{}, false
	}
	if ie.FinalURL == "" || !c.Cacheable(ie.FinalURL) {
		return Entry{}, false
	}
	data, err := c.readContained(ie.File)
	if err != nil {
		return Entry{}, false
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if len(data) == 0 || !utf8.Valid(data) {
		return Entry{}, false
	}
	e := Entry{URL: rawURL, FinalURL: ie.FinalURL, Title: ie.Title, Content: string(data), FetchedAt: fetched}
	if strings.HasSuffix(ie.File, ".cache.md") {
		if x, err := c.readContained(extraFile(ie.File)); err == nil && len(x) <= maxExtraBytes && json.Valid(x) {
			e.Extra = x
		}
	}
	return e, true
}

// readContained reads an index "file" value after checking that it names a
// regular file strictly inside the cache directory, reached without any
// symlink: the cache directory itself is checked with truncate.CheckDir (a
// symlinked or foreign directory is never read), every component below it
// is lstat()ed (a symlink, even one pointing inside Dir, is refused), and
// the file is opened with O_NOFOLLOW, so a swap of its last component is
// refused too.
func (c *Cache) readContained(file string) ([]byte, error) {
	if file == "" {
		return nil, errors.New("no file")
	}
	if !filepath.IsAbs(file) {
		file = filepath.Join(c.dir, file)
	}
	file = filepath.Clean(file)
	if _, err := truncate.CheckDir(c.dir); err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(c.dir, file)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return nil, fmt.Errorf("cache: %s is outside the cache directory", file)
	}
	p := c.dir
	parts := strings.Split(rel, string(filepath.Separator))
	for _, part := range parts[:len(parts)-1] {
		p = filepath.Join(p, part)
		fi, err := os.Lstat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			return nil, fmt.Errorf("cache: %s is a symlink or not a directory", p)
		}
	}
	return readRegular(file)
}

// readRegular reads path if it is a regular file (never through a symlink
// at its last component; a FIFO does not block) of at most maxEntryBytes.
func readRegular(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxEntryBytes {
		return nil, fmt.Errorf("cache: %s is not a regular file of acceptable size", path)
	}
	data := make([]byte, 0, fi.Size()+1)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(data) > maxEntryBytes {
			return nil, fmt.Errorf("cache: %s grew past the size limit", path)
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	return data, nil
}

// Put stores one successful extraction (spec §A9.2, §A3 step 7). It is a
// no-op (nil error) when the content is empty, longer than
// truncate.StoreCap chars (serving a capped copy as if whole would lose the
// tail), or when rawURL or the final URL is not cacheable. Otherwise it
// writes the entry file with truncate.WriteNoFollow (a planted symlink is
// replaced, never followed) and records it in the index, which is rewritten
// atomically (temp file + rename) under a process-wide mutex and an flock on
// <Dir>/extract-index.lock; when the index exceeds MaxEntries, only the
// newest MaxEntries by fetched_at are kept and the evicted entry files are
// removed. Put never replaces an entry whose FetchedAt is later than e's
// (a slow fetch finishing after a newer one), and writes the entry file and
// its Extra sidecar (removed when Extra is empty) under the index lock.
// Only successes must be passed in: Put cannot tell an error page.
// Errors are I/O failures; callers treat them as "not cached".
func (c *Cache) Put(rawURL string, e Entry, format, provider string) error {
	if c.o.Shared != nil {
		return c.Store(context.Background(), rawURL, e, format, provider)
	}
	final := e.FinalURL
	if final == "" {
		final = rawURL
	}
	if e.Content == "" || !c.Cacheable(rawURL) || !c.Cacheable(final) {
		return nil
	}
	if truncate.CountChars(e.Content) > truncate.StoreCap {
		return nil
	}
	if len(e.Extra) > maxExtraBytes {
		e.Extra = nil
	}
	if err := truncate.PrivateDir(c.dir); err != nil {
		return err
	}
	path := filepath.Join(c.dir, FileName(rawURL, format, provider))
	fetched := e.FetchedAt
	if fetched.IsZero() {
		fetched = c.o.Now()
	}
	key := Key(rawURL, format, provider)

	indexMu.Lock()
	defer indexMu.Unlock()
	unlock, err := lockPath(filepath.Join(c.dir, lockFile))
	if err != nil {
		return err
	}
	defer unlock()
	ix, _ := c.readIndex()
	if old, ok := ix[key]; ok && old.FetchedAt > toEpoch(fetched) {
		// A page fetched later is already stored: never write a stale page
		// over a fresh one (a slow fetch finishing after a newer one).
		return nil
	}
	// (Written under the lock, so the file always matches its index entry.)
	if err := truncate.WriteNoFollow(path, []byte(e.Content), 0o600); err != nil {
		return err
	}
	if len(e.Extra) > 0 {
		if err := truncate.WriteNoFollow(extraFile(path), e.Extra, 0o600); err != nil {
			return err
		}
	} else {
		os.Remove(extraFile(path))
	}
	ix[key] = indexEntry{URL: rawURL, FinalURL: final, File: path, Title: e.Title, FetchedAt: toEpoch(fetched)}
	evicted := evict(ix, c.o.MaxEntries)
	if err := c.writeIndex(ix); err != nil {
		return err
	}
	for _, ie := range evicted {
		c.removeEvicted(ie.File, ix)
	}
	return nil
}

// evict keeps the max newest entries of ix by fetched_at (ties broken by key
// for determinism) and returns the dropped ones.
func evict(ix map[string]indexEntry, max int) []indexEntry {
	if len(ix) <= max {
		return nil
	}
	keys := make([]string, 0, len(ix))
	for k := range ix {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := ix[keys[i]], ix[keys[j]]
		if a.FetchedAt != b.FetchedAt {
			return a.FetchedAt > b.FetchedAt
		}
		return keys[i] < keys[j]
	})
	var out []indexEntry
	for _, k := range keys[max:] {
		out = append(out, ix[k])
		delete(ix, k)
	}
	return out
}

// removeEvicted deletes an evicted entry file, but only a *.cache.md file
// directly inside the cache directory that no remaining entry refers to.
func (c *Cache) removeEvicted(file string, ix map[string]indexEntry) {
	if filepath.Dir(file) != c.dir || !strings.HasSuffix(file, ".cache.md") {
		return
	}
	for _, ie := range ix {
		if ie.File == file {
			return
		}
	}
	os.Remove(file) // removes a symlink itself, never its target
	os.Remove(extraFile(file))
}

// readIndex reads and decodes the index from disk. A missing or corrupt
// index is empty; undecodable entries are dropped.
func (c *Cache) readIndex() (map[string]indexEntry, os.FileInfo) {
	ix := make(map[string]indexEntry)
	path := filepath.Join(c.dir, IndexFile)
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow|oNonBlock|syscall.O_CLOEXEC, 0)
	if err != nil {
		return ix, nil
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxIndexBytes {
		return ix, nil
	}
	buf, err := io.ReadAll(io.LimitReader(f, maxIndexBytes))
	if err != nil {
		return ix, nil
	}
	buf = bytes.TrimPrefix(buf, []byte("\xef\xbb\xbf"))
	if json.Unmarshal(buf, &ix) == nil {
		return ix, fi
	}
	// Slow path: keep the entries that decode, drop the rest.
	ix = make(map[string]indexEntry)
	var raw map[string]json.RawMessage
	if json.Unmarshal(buf, &raw) != nil {
		return ix, fi
	}
	for k, v := range raw {
		var ie indexEntry
		if json.Unmarshal(v, &ie) == nil {
			ix[k] = ie
		}
	}
	return ix, fi
}

// index returns the parsed index, re-reading it only when the file changed
// (identity, size or mtime), so a hit does not re-parse 500 entries.
// The returned map must not be modified.
func (c *Cache) index() map[string]indexEntry {
	fi, err := os.Stat(filepath.Join(c.dir, IndexFile))
	if err != nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.memoFI != nil && os.SameFile(c.memoFI, fi) && c.memoFI.Size() == fi.Size() && c.memoFI.ModTime().Equal(fi.ModTime()) {
		return c.memoIx
	}
	ix, rfi := c.readIndex()
	c.memoIx, c.memoFI = ix, rfi
	if rfi != nil && !(os.SameFile(rfi, fi) && rfi.Size() == fi.Size() && rfi.ModTime().Equal(fi.ModTime())) {
		c.memoFI = nil // changed between stat and read: do not trust the memo next time
	}
	return ix
}

// writeIndex writes ix to a temp file in the cache directory and renames it
// over the index, so readers see the old or the new index, never a partial
// one. Concurrent writers in other processes are serialised by the flock.
func (c *Cache) writeIndex(ix map[string]indexEntry) error {
	data, err := json.Marshal(ix)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, ".extract-index-*.tmp") // O_EXCL: never follows a planted symlink
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, IndexFile)); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

func toEpoch(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func fromEpoch(s float64) time.Time {
	sec := int64(s)
	return time.Unix(sec, int64((s-float64(sec))*1e9))
}

// Lookup is Get with a context and an error: with Options.Shared it reads
// the shared store (same Cacheable, TTL, final-URL and UTF-8 rules as Get),
// and an unreachable store is an error (state_unavailable), never a silent
// miss; a corrupt stored value is a miss. Without Options.Shared it is Get
// (the error is always nil).
func (c *Cache) Lookup(ctx context.Context, rawURL, format, provider string) (Entry, bool, error) {
	if c == nil || c.o.Shared == nil {
		e, ok := c.Get(rawURL, format, provider)
		return e, ok, nil
	}
	if !c.Cacheable(rawURL) {
		return Entry{}, false, nil
	}
	e, ok, err := c.o.Shared.GetEntry(ctx, Key(rawURL, format, provider))
	if err != nil {
		if isCorrupt(err) {
			return Entry{}, false, nil
		}
		return Entry{}, false, err
	}
	if !ok {
		return Entry{}, false, nil
	}
	age := c.o.Now().Sub(e.FetchedAt)
	if age < 0 || age >= c.o.TTL || e.FinalURL == "" || !c.Cacheable(e.FinalURL) {
		return Entry{}, false, nil
	}
	e.Content = strings.TrimPrefix(e.Content, "\ufeff")
	if e.Content == "" || !utf8.ValidString(e.Content) || !utf8.ValidString(e.Title) {
		return Entry{}, false, nil
	}
	if len(e.Extra) > maxExtraBytes || (len(e.Extra) > 0 && !json.Valid(e.Extra)) {
		e.Extra = nil
	}
	e.URL = rawURL
	return e, true, nil
}

// Store is Put with a context: with Options.Shared the entry goes to the
// shared store for the TTL left (TTL − age of FetchedAt; nothing is stored
// when none is left), under the same rules as Put (empty, over-cap and
// uncacheable pages are not stored; a nil error). Without Options.Shared
// it is Put.
func (c *Cache) Store(ctx context.Context, rawURL string, e Entry, format, provider string) error {
	if c.o.Shared == nil {
		return c.Put(rawURL, e, format, provider)
	}
	if e.FinalURL == "" {
		e.FinalURL = rawURL
	}
	if e.Content == "" || !c.Cacheable(rawURL) || !c.Cacheable(e.FinalURL) {
		return nil
	}
	if truncate.CountChars(e.Content) > truncate.StoreCap {
		return nil
	}
	if len(e.Extra) > maxExtraBytes {
		e.Extra = nil
	}
	if e.FetchedAt.IsZero() {
		e.FetchedAt = c.o.Now()
	}
	ttl := c.o.TTL - c.o.Now().Sub(e.FetchedAt)
	if ttl <= 0 {
		return nil
	}
	e.URL = rawURL
	return c.o.Shared.PutEntry(ctx, Key(rawURL, format, provider), e, ttl)
}

// isCorrupt reports whether err is a state_corrupt refusal (a value in the
// shared store that Gatehouse did not write): the cache treats it as a miss.
func isCorrupt(err error) bool {
	e := reason.As(err)
	return e != nil && e.Code == reason.StateCorrupt
}
