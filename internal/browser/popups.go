package browser

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"path/filepath"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// New tabs and downloads an action causes (issue 9 item 7).
//
// A tab the page opens (window.open, a target=_blank link) in the session's
// BrowserContext is reported in the result's popup field and followed: the
// session's tab becomes the new one (its egress proxy and cookies are the
// same BrowserContext's), and the result carries its snapshot. browser_back
// in a followed tab with no earlier history entry closes it and returns to
// the opener. The session keeps its whole chain of tabs and closes it as one.
// A tab opened while browser_navigate or browser_back loads a page is
// reported in its result (followed: false) and not followed: the agent
// asked for that page, not for what it opens by itself. One opened before a
// call (by a timer, or during an earlier navigation) is not that call's and
// is never reported or followed by it.
//
// A download an action starts is saved into the session's download dir
// (<GATEHOUSE_HOME>/downloads/<session>/, created by Chromium on the first
// download) under a sanitised form of the server's file name, capped at
// Options.DownloadCap bytes (default backend.DefaultDownloadCap, 100 MiB;
// over it the download is cancelled, its partial file removed and the entry
// says too_large). The result lists {name, url, size, path, state}; the page
// and the session stay usable.

// downloadWait bounds how long an action waits for a download it started.
const downloadWait = 30 * time.Second

// downloadDir returns a fresh per-session download directory path.
func (m *Manager) downloadDir() string {
	var b [6]byte
	rand.Read(b[:])
	return filepath.Join(m.home, "downloads", "s-"+hex.EncodeToString(b[:]))
}

// afterEffects handles what an action opened: it waits (≤ downloadWait) for
// downloads it started and reports them, and reports the tabs it opened,
// following the last one when follow is set. followed reports a tab switch
// (the caller snapshots the new tab).
func (m *Manager) afterEffects(ctx context.Context, s *Session, p *Page, mark int64, follow bool) (followed bool) {
	m.collectDownloads(ctx, s, p, mark)
	pops := s.tab.TakePopups()
	if len(pops) == 0 {
		return false
	}
	last := pops[len(pops)-1]
	info := &PopupInfo{URL: redactText(last.URL), Opened: len(pops)}
	p.Popup = info
	if !follow {
		return false
	}
	nt, err := s.tab.Adopt(ctx, last)
	if err != nil {
		m.logger.Info("popup not followed", "session", s.Key, "err", err)
		return false
	}
	m.switchTab(s, nt)
	info.Followed = true
	m.waitPopupLoad(ctx, s, last.URL)
	if cur, err := s.tab.Current(ctx); err == nil {
		info.URL = redactText(cur.URL)
	}
	return true
}

// collectDownloads waits (≤ downloadWait) for the downloads started since
// mark and reports them in p (agent-visible paths, redacted URLs).
func (m *Manager) collectDownloads(ctx context.Context, s *Session, p *Page, mark int64) {
	waitTab(ctx, s, downloadWait, func() bool { return !s.tab.DownloadsPending(mark) })
	if ds := s.tab.DownloadsSince(mark); len(ds) > 0 {
		for i := range ds {
			if ds[i].Path != "" {
				ds[i].Path = m.store.AgentPath(ds[i].Path)
			}
			ds[i].URL = redactText(ds[i].URL)
		}
		p.Downloads = ds
	}
}

// waitTab waits until done reports true, for at most limit (and ctx),
// re-checking at every change of the tab's state and every 50 ms.
func waitTab(ctx context.Context, s *Session, limit time.Duration, done func() bool) {
	if done() {
		return
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for !done() && wctx.Err() == nil {
		a := s.tab.Activity()
		select {
		case <-a.Changed:
		case <-time.After(50 * time.Millisecond):
		case <-wctx.Done():
		}
	}
}

// switchTab makes t the session's tab and resets the per-document ref state
// (refs of the old tab are stale in the new one; numbers keep rising).
func (m *Manager) switchTab(s *Session, t *backend.Tab) {
	m.mu.Lock()
	s.tab = t
	m.mu.Unlock()
	s.lastSnap, s.lastDoc = "", -1
	s.frameK, s.frameOf, s.frameRef = map[backend.FrameID]int{}, map[int]backend.FrameID{}, map[int]int{}
}

// waitPopupLoad waits (≤ 5 s) until the adopted tab left its initial
// about:blank (unless that is where it was opened) and went quiet.
func (m *Manager) waitPopupLoad(ctx context.Context, s *Session, opened string) {
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for wctx.Err() == nil {
		cur, err := s.tab.Current(wctx)
		if err == nil && (cur.URL != "about:blank" && cur.URL != "" || opened == "about:blank") {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	m.settleWithin(wctx, s, backend.Activity{}, 3*time.Second)
}

// backToOpener closes a followed tab and returns the session to the tab
// that opened it; false when the session's tab is its own (no opener).
func (m *Manager) backToOpener(s *Session) bool {
	op := s.tab.Opener()
	if op == nil {
		return false
	}
	cur := s.tab
	m.switchTab(s, op)
	cur.CloseAlone() //nolint:errcheck // idempotent; gone is fine
	return true
}

// isNoHistory reports browser_back's no_history error.
func isNoHistory(err error) bool { return reason.Of(err) == reason.NoHistory }
