package backend

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// DefaultDownloadCap is the per-download size cap when TabOptions.DownloadCap
// is 0: 100 MiB.
const DefaultDownloadCap = 100 << 20

// Download is a file the page started downloading into the session's download
// dir. Chromium writes it under its GUID; on completion it is renamed to a
// sanitised form of the name the server suggested (never a path).
type Download struct {
	Name  string `json:"name"`
	URL   string `json:"url"`
	Size  int64  `json:"size"`           // bytes received
	Path  string `json:"path,omitempty"` // host path of the completed file
	State string `json:"state"`          // in_progress, completed, canceled, too_large
	guid  string
	seq   int64
}

func (t *Tab) downloadBegin(e *browser.EventDownloadWillBegin) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ext.opts.DownloadDir == "" || !t.ownsFrameLocked(e.FrameID) {
		return
	}
	t.dialogSeq++ // one sequence for everything a call reports
	t.ext.downloads = append(t.ext.downloads, &Download{Name: safeName(e.SuggestedFilename), URL: e.URL, State: "in_progress", guid: e.GUID, seq: t.dialogSeq})
	if len(t.ext.downloads) > 50 {
		t.ext.downloads = t.ext.downloads[len(t.ext.downloads)-50:]
	}
	t.bumpLocked()
}

func (t *Tab) downloadProgress(e *browser.EventDownloadProgress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	var d *Download
	for _, x := range t.ext.downloads {
		if x.guid == e.GUID {
			d = x
		}
	}
	if d == nil || d.State != "in_progress" {
		return
	}
	d.Size = int64(e.ReceivedBytes)
	capBytes := t.ext.opts.DownloadCap
	if capBytes <= 0 {
		capBytes = DefaultDownloadCap
	}
	dir := t.ext.opts.DownloadDir
	switch {
	case e.State == browser.DownloadProgressStateInProgress && (d.Size > capBytes || int64(e.TotalBytes) > capBytes):
		d.State = "too_large"
		guid, ctx, bctx := d.guid, t.ctx, t.bctx
		go func() {
			cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			defer cancel()
			chromedp.CallBrowser(cctx, browser.CancelDownload, browser.CancelDownloadParams{GUID: guid, BrowserContextID: bctx}) //nolint:errcheck
			time.Sleep(200 * time.Millisecond)
			os.Remove(filepath.Join(dir, guid))               //nolint:errcheck
			os.Remove(filepath.Join(dir, guid+".crdownload")) //nolint:errcheck
		}()
	case e.State == browser.DownloadProgressStateCanceled:
		d.State = "canceled"
	case e.State == browser.DownloadProgressStateCompleted:
		from := filepath.Join(dir, d.guid)
		to := uniquePath(dir, d.Name)
		if err := os.Rename(from, to); err != nil {
			to = from
		}
		// Chromium writes downloads with the umask's modes (0644 in 0755
		// dirs); a download can hold private content, so it gets the modes
		// of every other file Gatehouse keeps: 0600 in 0700 dirs.
		os.Chmod(to, 0o600)                //nolint:errcheck // best effort; the path is still reported
		os.Chmod(dir, 0o700)               //nolint:errcheck
		os.Chmod(filepath.Dir(dir), 0o700) //nolint:errcheck
		d.State, d.Path = "completed", to
		if st, err := os.Stat(to); err == nil {
			d.Size = st.Size()
		}
	}
	t.bumpLocked()
}

// DownloadsSince returns the downloads that began after mark (DialogMark),
// as they stand now.
func (t *Tab) DownloadsSince(mark int64) []Download {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Download
	for _, d := range t.ext.downloads {
		if d.seq > mark {
			out = append(out, *d)
		}
	}
	return out
}

// DownloadsPending reports whether a download is still in progress.
func (t *Tab) DownloadsPending(mark int64) bool {
	for _, d := range t.DownloadsSince(mark) {
		if d.State == "in_progress" {
			return true
		}
	}
	return false
}

// safeName reduces a suggested file name to one path element of printable
// characters (no separators, no leading dots), at most 120 runes.
func safeName(s string) string {
	s = filepath.Base(strings.ReplaceAll(s, `\`, "/"))
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '/' || r == 0 || !unicode.IsPrint(r):
			b.WriteRune('_')
		default:
			b.WriteRune(r)
		}
	}
	out := strings.TrimLeft(b.String(), ". ")
	if r := []rune(out); len(r) > 120 {
		out = string(r[:120])
	}
	if out == "" {
		out = "download"
	}
	return out
}

// uniquePath returns dir/name, or dir/name (n).ext when that exists.
func uniquePath(dir, name string) string {
	p := filepath.Join(dir, name)
	ext := filepath.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	for i := 1; i < 1000; i++ {
		if _, err := os.Lstat(p); os.IsNotExist(err) {
			return p
		}
		p = filepath.Join(dir, fmt.Sprintf("%s (%d)%s", stem, i, ext))
	}
	return p
}
