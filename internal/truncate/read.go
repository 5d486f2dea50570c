package truncate

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Read limits.
const (
	DefaultReadLines = 200     // lines per Read when limit is 0 (the footer's limit=200)
	MaxReadLines     = 2000    // larger limits are lowered
	MaxReadChars     = 100_000 // chars per Read; longer output is cut on a line boundary (a single longer line is cut)
	// ReadLineWidth is the longest line Read counts: a stored line longer
	// than this many chars (a one-line JSON API response, minified text)
	// is read as several lines of ReadLineWidth chars, the last one
	// shorter, so line paging reaches every char of the stored page; the
	// footer's offset (Window.ReadOffset) counts lines the same way. The
	// file itself is not changed (breaker6 D10).
	ReadLineWidth = 10_000
)

// readLines splits text into the lines Read counts: lines ending in "\n"
// (kept), a final line without one, and every line longer than
// ReadLineWidth chars split into pieces of ReadLineWidth chars (on rune
// boundaries; the "\n" stays with the last piece).
func readLines(text string) []string {
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	out := lines[:0:0]
	for _, ln := range lines {
		for countValid(strings.TrimSuffix(ln, "\n")) > ReadLineWidth {
			i := byteOffsetFromStart(ln, ReadLineWidth)
			out = append(out, ln[:i])
			ln = ln[i:]
		}
		out = append(out, ln)
	}
	return out
}

// ReadResult is one window of a stored file.
type ReadResult struct {
	Name       string // store file name (base name under Dir)
	Content    string // the lines offset … offset+Lines−1, joined by "\n"
	Offset     int    // 1-based first line returned
	Lines      int    // number of lines returned
	TotalLines int    // lines in the file (a final line without "\n" counts; an overlong one counts per ReadLineWidth chars)
	NextOffset int    // line to pass as offset to read on; 0 at end of file
	Cut        bool   // the last line returned was cut at MaxReadChars
}

// IsStoreName reports whether name is a file name this store (or the browser
// snapshot store sharing its directory) writes, by their naming schemes:
// "<HostSlug>-<10 lowercase hex>.md" (FileName) or
// "browser-snapshot-<10 lowercase hex>.txt" (browser snapshots). Anything
// else in the directory (a file copied there, an extract-cache entry
// "….cache.md", a hidden file) is not a stored page.
func IsStoreName(name string) bool {
	return !strings.HasPrefix(name, ".") && !strings.HasSuffix(name, ".cache.md") && storeNameRe.MatchString(name)
}

// storeNameRe is the union of FileName's and the browser snapshot store's
// name schemes (HostSlug yields at most 60 of [a-z0-9._-]).
var storeNameRe = lazyregexp.New(`^(?:[a-z0-9._-]{1,60}-[0-9a-f]{10}\.md|browser-snapshot-[0-9a-f]{10}\.txt)$`)

// StoreNameHint names the readable files, for refusal messages.
const StoreNameHint = `stored pages are named <host>-<10 hex digits>.md (truncated web_extract results) or browser-snapshot-<10 hex digits>.txt`

// Read returns limit lines of a stored file starting at the 1-based line
// offset, the way the footer's read call describes (spec §A10.3: offset =
// newlines in the shown head + 2, limit = 200). It is the only way web_read
// reaches the disk, and it reads only regular files that are direct children
// of Dir with a store file name (IsStoreName):
//
//   - path may be that file name, or an absolute path (host path or the
//     agent-visible path of PathMap) naming it;
//   - any ".." component, an absolute path outside Dir, a subdirectory or a
//     name the store never writes → reason read_outside_store;
//   - a symlink (even one pointing inside Dir) → read_symlink; the file is
//     opened with O_NOFOLLOW, so a symlink swapped in after the check is
//     refused too;
//   - a directory, FIFO or device → read_not_regular (opened O_NONBLOCK, so
//     a FIFO cannot block);
//   - no such file → read_not_found.
//
// Lines are counted as readLines does: a line longer than ReadLineWidth
// chars counts as several. offset < 1 is read as 1; limit 0 means DefaultReadLines, larger than
// MaxReadLines means MaxReadLines. Output is at most MaxReadChars chars. An
// offset past the end returns no lines and NextOffset 0. Errors are
// *reason.Error values whose messages never show host paths.
func (s Store) Read(path string, offset, limit int) (ReadResult, error) {
	name, text, err := s.Load(path)
	if err != nil {
		return ReadResult{}, err
	}
	return window(name, text, offset, limit), nil
}

// Load returns the store file name and the whole text (invalid UTF-8
// repaired) of the stored file path names, under the same confinement rules
// and reason codes as Read. The text is at most about StoreCap chars (the
// store caps what it writes; Load reads at most 4×StoreCap bytes).
func (s Store) Load(path string) (name, text string, err error) {
	name, err = s.storeName(path)
	if err != nil {
		return "", "", err
	}
	if s.Shared != nil {
		return s.loadShared(name)
	}
	dir, aerr := filepath.Abs(s.Dir)
	if aerr != nil {
		return "", "", reason.New(reason.ReadNotFound, "", "The store directory is not set up.")
	}
	if _, err := CheckDir(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		// A symlinked (or foreign) store directory: its files are not
		// the ones the store wrote.
		return "", "", reason.New(reason.ReadSymlink, "",
			"The full-text store directory is a symlink or not your own; web_read reads only the store Gatehouse wrote. Remove it and re-run web_extract.")
	}
	full := filepath.Join(dir, name)
	if fi, err := os.Lstat(full); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return "", "", symlinkErr(name)
	}
	f, err := os.OpenFile(full, os.O_RDONLY|oNoFollow|oNonBlock|syscall.O_CLOEXEC, 0)
	if err != nil {
		switch {
		case errors.Is(err, os.ErrNotExist):
			return "", "", notFoundErr(name)
		case errors.Is(err, syscall.ELOOP), errors.Is(err, syscall.EMLINK):
			return "", "", symlinkErr(name)
		}
		return "", "", reason.Wrap(reason.ReadNotRegular, "", "The stored file cannot be opened.", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", "", reason.Newf(reason.ReadNotRegular, "", "%q is not a regular file; web_read reads only stored pages.", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4*StoreCap+4096)) // a capped store file is ≤ 4 bytes/char
	if err != nil {
		return "", "", reason.Wrap(reason.ReadNotRegular, "", "The stored file cannot be read.", err)
	}
	return name, validUTF8(string(b)), nil
}

// loadShared is Load from the Shared store: a page of another principal
// is read_not_found, exactly as a missing one.
func (s Store) loadShared(name string) (string, string, error) {
	ctx, p := s.bound()
	text, ok, err := s.Shared.LoadPage(ctx, p, name)
	if err != nil {
		return "", "", err
	}
	if !ok {
		return "", "", notFoundErr(name)
	}
	if len(text) > 4*StoreCap+4096 {
		text = text[:4*StoreCap+4096]
	}
	return name, validUTF8(text), nil
}

func notFoundErr(name string) error {
	return reason.Newf(reason.ReadNotFound, "",
		"No stored page named %q. Stored pages come from truncated web_extract results; re-run web_extract to store it again.", name)
}

func symlinkErr(name string) error {
	return reason.Newf(reason.ReadSymlink, "", "%q is a symlink; web_read reads only regular files the store wrote.", name)
}

// storeName maps path to a store file name or refuses it.
func (s Store) storeName(path string) (string, error) {
	outside := func() error {
		return reason.New(reason.ReadOutsideStore, "",
			`web_read reads only pages in Gatehouse's full-text store (`+StoreNameHint+`): pass the path="…" exactly as a truncated result's footer gives it.`)
	}
	p := strings.TrimSpace(path)
	if p == "" || strings.ContainsRune(p, 0) {
		return "", outside()
	}
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if part == ".." {
			return "", outside()
		}
	}
	if !filepath.IsAbs(p) {
		if !IsStoreName(p) {
			return "", outside()
		}
		return p, nil
	}
	dir, err := filepath.Abs(s.Dir)
	if err != nil || s.Dir == "" {
		return "", outside()
	}
	clean := filepath.Clean(p)
	// Accept the host path, or the agent-visible path the footer showed.
	for _, cand := range []string{clean, s.hostPath(clean)} {
		if cand != "" && filepath.Dir(cand) == dir && IsStoreName(filepath.Base(cand)) {
			return filepath.Base(cand), nil
		}
	}
	return "", outside()
}

// hostPath maps an agent-visible path back through PathMap ("" if none matches).
func (s Store) hostPath(agent string) string {
	best, bestLen := "", -1
	for host, ag := range s.PathMap {
		a := cleanPrefix(ag)
		if a == "" {
			continue
		}
		if agent == a || strings.HasPrefix(agent, strings.TrimSuffix(a, "/")+"/") {
			if len(a) > bestLen {
				best, bestLen = filepath.Join(cleanPrefix(host), strings.TrimPrefix(agent, a)), len(a)
			}
		}
	}
	return best
}

// window cuts lines offset… of text.
func window(name, text string, offset, limit int) ReadResult {
	if offset < 1 {
		offset = 1
	}
	switch {
	case limit <= 0:
		limit = DefaultReadLines
	case limit > MaxReadLines:
		limit = MaxReadLines
	}
	lines := readLines(text)
	r := ReadResult{Name: name, Offset: offset, TotalLines: len(lines)}
	if offset > len(lines) {
		return r
	}
	var b strings.Builder
	chars := 0
	i := offset - 1
	for ; i < len(lines) && i < offset-1+limit; i++ {
		ln := lines[i]
		n := countValid(ln)
		if chars+n > MaxReadChars {
			if r.Lines == 0 { // one overlong line: cut it
				b.WriteString(ln[:byteOffsetFromStart(ln, MaxReadChars)])
				r.Lines, r.Cut = 1, true
				i++
			}
			break
		}
		b.WriteString(ln)
		chars += n
		r.Lines++
	}
	r.Content = strings.TrimSuffix(b.String(), "\n")
	if i < len(lines) {
		r.NextOffset = i + 1
	}
	return r
}
