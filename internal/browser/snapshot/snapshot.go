// Package snapshot holds the text side of the browser's accessibility
// snapshot (spec §B9): the threshold and head-only truncation with the full
// text stored (Truncate, Save), ref normalization (@e5), the delta between two
// snapshots (Delta), the bot-detection title hint, and the walk budgets with
// the coverage note of a snapshot that lists only part of a huge page
// (Budget, Coverage, Note). It drives no browser: package browser runs the
// in-page walk (page.js) and hands the text here.
package snapshot

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/config"
	"github.com/gatehouse-dev/gatehouse/internal/lazyregexp"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// StoreCap is the most chars of a full snapshot kept on disk (spec §B9).
const StoreCap = 2_000_000

// Threshold returns the effective browser.snapshot_threshold in chars:
// the default 15 000 for 0 (unset), floored at 1 000 (spec §B9).
func Threshold(v int) int {
	if v == 0 {
		return config.DefaultSnapshotThreshold
	}
	return max(v, config.MinSnapshotThreshold)
}

// Reserve is the room kept for the truncation note (spec §B9):
// min(110 + len(storedPath), threshold/2), in chars.
func Reserve(threshold int, storedPath string) int {
	return min(110+utf8.RuneCountInString(storedPath), threshold/2)
}

// Truncation describes what Truncate did.
type Truncation struct {
	Truncated      bool
	KeptLines      int
	RemainingLines int
	Reserve        int
	ReadOffset     int // 1-based line to read on from (KeptLines+1); 0 when not stored
}

// Truncate applies spec §B9 to a snapshot text of more than threshold
// chars (code points; the text is made valid UTF-8 first, so no output holds a
// lone surrogate or a broken sequence): whole lines are kept from the top
// while the running total of (line length + 1) stays within threshold −
// Reserve(threshold, storedPath); then, after a blank line, one
// bracketed note gives the number of omitted lines and either a web_read call
// (path, offset = kept + 1, limit = 200) when storedPath is set, or a hint to
// scroll and call browser_snapshot again otherwise. The note fits the reserve,
// so the output never exceeds threshold chars. Text within the threshold is
// returned unchanged. There is no head/tail split.
func Truncate(text string, threshold int, storedPath string) (string, Truncation) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) <= threshold {
		return text, Truncation{}
	}
	lines := strings.Split(text, "\n")
	reserve := Reserve(threshold, storedPath)
	budget := threshold - reserve
	total, kept := 0, 0
	for _, l := range lines {
		n := utf8.RuneCountInString(l) + 1
		if total+n > budget {
			break
		}
		total += n
		kept++
	}
	tr := Truncation{Truncated: true, KeptLines: kept, RemainingLines: len(lines) - kept, Reserve: reserve}
	var b strings.Builder
	b.WriteString(strings.Join(lines[:kept], "\n"))
	b.WriteString("\n\n")
	if storedPath != "" {
		tr.ReadOffset = kept + 1
		fmt.Fprintf(&b, "[%d more lines omitted. Full snapshot: web_read path=%q offset=%d limit=200]", tr.RemainingLines, storedPath, tr.ReadOffset)
	} else {
		fmt.Fprintf(&b, "[%d more lines omitted (not stored); scroll, then call browser_snapshot again]", tr.RemainingLines)
	}
	return b.String(), tr
}

// Save writes text (capped at StoreCap chars) to
// <dir>/browser-snapshot-<sha256(text)[:10]>.txt — a content-hash name, so
// identical snapshots share one file — with the symlink-safe writer,
// owner-only (0600 in a 0700 directory, like the page store), and
// returns the host path (spec §B9).
func Save(dir, text string) (string, error) {
	if dir == "" {
		return "", fmt.Errorf("browser: snapshot store directory not configured")
	}
	name, text := snapshotFile(text)
	if err := truncate.PrivateDir(dir); err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if err := truncate.WriteNoFollow(p, []byte(text), 0o600); err != nil {
		return "", err
	}
	return p, nil
}

// snapshotFile returns the store name of a snapshot and the text stored
// under it: text with invalid UTF-8 repaired, capped at SnapshotStoreCap
// chars, named browser-snapshot-<sha256(capped text)[:10]>.txt.
func snapshotFile(text string) (name, capped string) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if utf8.RuneCountInString(text) > StoreCap {
		i, n := 0, 0
		for i = range text {
			if n == StoreCap {
				break
			}
			n++
		}
		text = text[:i]
	}
	sum := sha256.Sum256([]byte(text))
	return "browser-snapshot-" + hex.EncodeToString(sum[:])[:10] + ".txt", text
}

// SaveIn writes a snapshot to st: a file under st.Dir (Save), or the shared
// store when st.Shared is set (GATEHOUSE_REDIS_URL), under st's principal.
// It returns the host path <Dir>/<name>.
func SaveIn(st truncate.Store, text string) (string, error) {
	if st.Shared == nil {
		return Save(st.Dir, text)
	}
	name, capped := snapshotFile(text)
	return st.SaveAs(name, capped)
}

// NormalizeRef returns ref with the "@" prefix the described system uses
// (spec §B2: "e5" → "@e5").
func NormalizeRef(ref string) string {
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "@") {
		ref = "@" + ref
	}
	return ref
}

// RefID returns the bare ref id ("e5") of "@e5", "e5", "[ref=e5]" or "ref=e5".
func RefID(ref string) string {
	r := strings.TrimPrefix(NormalizeRef(ref), "@")
	r = strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(r, "["), "]"), "ref=")
	return r
}

// ScrollPixels is the distance of one browser_scroll call (spec §B2).
const ScrollPixels = 500

// ScrollDelta returns the vertical scroll distance for direction: −500 for
// "up", +500 for "down" (case-sensitive); ok is false for anything else
// (invalid_direction).
func ScrollDelta(direction string) (dy int, ok bool) {
	switch direction {
	case "up":
		return -ScrollPixels, true
	case "down":
		return ScrollPixels, true
	}
	return 0, false
}

// botTitles are the page-title phrases of spec §B2's bot-detection hint.
var botTitles = []string{
	"access denied", "access to this page has been denied", "blocked", "bot detected",
	"verification required", "please verify", "are you a robot", "captcha", "cloudflare",
	"ddos protection", "checking your browser", "just a moment", "attention required",
}

// BotDetectionWarning returns a warning when title looks like a bot-detection
// or challenge page (case-insensitive substring match, spec §B2), else "".
func BotDetectionWarning(title string) string {
	t := strings.ToLower(title)
	for _, p := range botTitles {
		if strings.Contains(t, p) {
			// The title is not quoted: it is page text, shown (inside
			// the content boundary over MCP) in the result's title.
			return "The page title suggests a bot-detection or challenge page; the content may not be the site's. Try again later or use web_extract."
		}
	}
	return ""
}

// item is a snapshot line without its indentation and "- " bullet.
func item(l string) string { return strings.TrimPrefix(strings.TrimSpace(l), "- ") }

// maxDeltaLines caps a snapshot delta.
const maxDeltaLines = 40

var refRe = lazyregexp.New(`\[ref=((?:f\d+)?e\d+)\]`)

// Delta returns a compact diff from snapshot before to after: lines that name
// a ref are matched by ref ("~ " changed, "+ " added, "- " removed); other lines
// are matched by text. At most 40 lines are listed, then a count of the rest.
// "" means no change.
func Delta(before, after string) string {
	type keyed struct {
		line string
		pos  int
	}
	index := func(s string) (map[string]keyed, map[string]int, []string) {
		byRef := map[string]keyed{}
		plain := map[string]int{}
		var order []string
		for i, l := range strings.Split(s, "\n") {
			if l == "" {
				continue
			}
			if m := refRe.FindStringSubmatch(l); m != nil {
				byRef[m[1]] = keyed{item(l), i}
			} else {
				plain[item(l)]++
			}
			order = append(order, l)
		}
		return byRef, plain, order
	}
	bRef, bPlain, _ := index(before)
	aRef, aPlain, aOrder := index(after)
	var out []string
	for _, l := range aOrder {
		t := item(l)
		if m := refRe.FindStringSubmatch(l); m != nil {
			old, ok := bRef[m[1]]
			switch {
			case !ok:
				out = append(out, "+ "+t)
			case old.line != t:
				out = append(out, "~ "+t)
			}
			continue
		}
		if bPlain[t] > 0 {
			bPlain[t]--
			aPlain[t]--
			continue
		}
		out = append(out, "+ "+t)
	}
	for _, l := range strings.Split(before, "\n") {
		t := item(l)
		if t == "" {
			continue
		}
		if m := refRe.FindStringSubmatch(l); m != nil {
			if _, ok := aRef[m[1]]; !ok {
				out = append(out, "- "+t)
			}
			continue
		}
		if bPlain[t] > 0 {
			bPlain[t]--
			out = append(out, "- "+t)
		}
	}
	if len(out) > maxDeltaLines {
		rest := len(out) - maxDeltaLines
		out = append(out[:maxDeltaLines], fmt.Sprintf("[%d more changed lines; call browser_snapshot for the whole page]", rest))
	}
	return strings.Join(out, "\n")
}
