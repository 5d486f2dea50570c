// Package truncate implements the truncate-and-store pipeline of web_extract
// (spec §A10): base64 image placeholders, the head/tail window with line
// snapping, the footer that tells the agent where the full text is, and the
// symlink-safe full-text store.
//
// All lengths in this package are in chars, meaning Unicode code points
// (runes; Python len semantics), never bytes. Cuts never split a UTF-8
// sequence. Input that is not valid UTF-8 is first repaired with
// strings.ToValidUTF8 (each invalid run becomes U+FFFD).
package truncate

import (
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Budget bounds, in chars (spec §A10.1).
const (
	DefaultLimit = 15000   // web.extract_char_limit default; also used for an unset (0) limit
	MinLimit     = 2000    // smaller budgets are raised: below this the footer would dominate
	MaxLimit     = 500000  // larger budgets are lowered: a config typo must not flood the context
	StoreCap     = 2000000 // the full-text store and the extract cache keep at most this many chars
)

// ClampLimit returns the per-page budget for a requested limit: 0 (unset)
// gives DefaultLimit; any other value is clamped to [MinLimit, MaxLimit]
// (so a negative value gives MinLimit, as the described system does).
// Non-numeric config values are the config package's business: they map to
// DefaultLimit before reaching here.
func ClampLimit(limit int) int {
	switch {
	case limit == 0:
		return DefaultLimit
	case limit < MinLimit:
		return MinLimit
	case limit > MaxLimit:
		return MaxLimit
	}
	return limit
}

// Window is the result of Cut: the head and tail shown to the agent.
// Char counts are runes.
type Window struct {
	Head, Tail string // Head is a prefix of the (repaired) content, Tail a suffix; Tail is "" when not truncated
	HeadBudget int    // int(limit × 0.75)
	TailBudget int    // limit − HeadBudget
	Truncated  bool   // content was longer than the limit
	TotalChars int    // rune count of the (repaired) content
	ReadOffset int    // 1-based line of the stored file where the omitted part starts: newlines in Head + 2; 0 when not truncated
}

// HeadChars returns the rune count of w.Head.
func (w Window) HeadChars() int { return CountChars(w.Head) }

// TailChars returns the rune count of w.Tail.
func (w Window) TailChars() int { return CountChars(w.Tail) }

// Cut computes the head/tail window of content for a budget of limit chars
// (spec §A10.3), exactly as the described system does, but in runes:
//
//   - content of at most limit chars is returned whole (Head = content);
//   - head budget = int(limit × 0.75), tail budget = limit − head budget;
//   - head = first head-budget chars, tail = last tail-budget chars;
//   - the head is snapped back to its last "\n" (the newline is dropped) if
//     that newline's index is greater than head budget × 0.5;
//   - the tail is snapped forward past its first "\n" if that index is less
//     than tail budget × 0.5;
//   - ReadOffset = newlines in the shown head + 2 (in Read's lines; see
//     readOffset for a head ending inside a line longer than ReadLineWidth), the 1-based line of the
//     full text where the first omitted line starts (when the head was not
//     snapped, the partially shown line is skipped: a known nit of the
//     described system, kept for compatibility).
//
// Cut does not clamp limit (see ClampLimit); a limit below 1 yields an empty
// window. Cut never splits a UTF-8 sequence.
func Cut(content string, limit int) Window {
	return cut(validUTF8(content), limit)
}

// cut is Cut on content already known to be valid UTF-8.
func cut(content string, limit int) Window {
	total := countValid(content)
	if limit < 0 {
		limit = 0
	}
	headBudget := limit * 3 / 4 // == int(limit*0.75) for 0 <= limit < 2^51
	tailBudget := limit - headBudget
	w := Window{HeadBudget: headBudget, TailBudget: tailBudget, TotalChars: total}
	if total <= limit {
		w.Head = content
		return w
	}
	w.Truncated = true

	hb := graphemeBoundaryAtOrBefore(content, byteOffsetFromStart(content, headBudget))
	tb := graphemeBoundaryAtOrAfter(content, byteOffsetFromEnd(content, tailBudget))
	head := content[:hb]
	tail := content[tb:]

	if nl := strings.LastIndexByte(head, '\n'); nl >= 0 {
		if idx := countValid(head[:nl]); 2*idx > headBudget {
			head = head[:nl]
		}
	}
	if nl := strings.IndexByte(tail, '\n'); nl >= 0 {
		if idx := countValid(tail[:nl]); 2*idx < tailBudget {
			tail = tail[nl+1:]
		}
	}
	w.Head, w.Tail = head, tail
	w.ReadOffset = readOffset(head, content)
	return w
}

// readOffset is the footer's offset for a shown head (a prefix of
// content), in the lines Read counts (readLines): the spec §A10.3
// "newlines in the shown head + 2" when the line the head ends in is at
// most ReadLineWidth chars. When the head ends inside a longer line, the
// offset is the Read line holding the head's end (or the next one when the
// head ends on a Read line boundary), so the rest of that long line (the
// omitted middle of a one-line page) is read from there, neither skipped
// nor past the end (breaker6 D10).
func readOffset(head, content string) int {
	n := len(readLines(head)) // Read lines the head touches
	last := head[strings.LastIndexByte(head, '\n')+1:]
	if last == "" {
		return n + 2 // the head ends on a newline: the spec's count + 2
	}
	rest := content[len(head):]
	if k := strings.IndexByte(rest, '\n'); k >= 0 {
		rest = rest[:k]
	}
	shown := countValid(last)
	if rest == "" || shown+countValid(rest) <= ReadLineWidth || shown%ReadLineWidth == 0 {
		return n + 1
	}
	return n
}

// byteOffsetFromStart returns the byte index at which rune number n of s
// starts (len(s) if s has fewer runes).
func byteOffsetFromStart(s string, n int) int {
	i := 0
	for ; n > 0 && i < len(s); n-- {
		if s[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return i
}

// byteOffsetFromEnd returns the byte index at which the last n runes of s
// start (0 if s has fewer runes).
func byteOffsetFromEnd(s string, n int) int {
	i := len(s)
	for ; n > 0 && i > 0; n-- {
		if s[i-1] < utf8.RuneSelf {
			i--
			continue
		}
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return i
}

func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// Result is the outcome of Apply for one page.
type Result struct {
	Content       string // text for the agent: the whole page, or head + marker + tail + footer
	Truncated     bool   // the page was longer than the budget
	OriginalChars int    // chars of the clean page (after image placeholders)
	ShownChars    int    // chars of page text shown (head + tail when truncated; the footer is not counted)
	StoredPath    string // agent-visible path of the full-text file; "" when not truncated or not stored
	StoreErr      error  // why storing failed (nil when stored, not needed, or no Store given); for logs only
}

// Footer and marker texts (spec §A10.3; tests of the described system key on
// "[TRUNCATED]", "Full text saved to:" and "read_file").
const (
	omittedMarker = "[... middle omitted — see footer ...]"
	notStoredLine = "Full text could not be stored; re-run web_extract on a more specific URL or use browser_navigate for the complete page."
)

var (
	openRule  = strings.Repeat("─", 8) + " [TRUNCATED] " + strings.Repeat("─", 8)
	closeRule = strings.Repeat("─", 29)
)

// Apply runs the per-page pipeline of spec §A10.2 steps 3–4 on clean page
// text: base64 images become placeholders (ReplaceBase64Images), then the
// text is cut to ClampLimit(limit) chars with Cut. When the page is longer
// than the budget, the full placeholder-substituted text is saved with
// s.Save and the output is
//
//	head, "\n\n", omitted marker, "\n\n", tail, "\n", footer lines joined by "\n"
//
// where the footer lines are: "", the "──────── [TRUNCATED] ────────" rule,
// "Showing H chars (head) + T chars (tail) of N total clean characters."
// (thousands separators), "Full text saved to: P", a read_file line with
// path="P" offset=ReadOffset limit=200, and a rule of 29 "─". P is the
// agent-visible path (Store.AgentPath). With s nil or a failed save, the two
// path lines are replaced by one line suggesting a narrower URL or
// browser_navigate.
//
// Apply is meant to run on every successful row, cache hits included, so the
// stored file is rewritten (fresh) on every truncated read.
func Apply(rawURL, content string, limit int, s *Store) Result {
	content = ReplaceBase64Images(validUTF8(content))
	w := cut(content, ClampLimit(limit))
	r := Result{OriginalChars: w.TotalChars}
	if !w.Truncated {
		r.Content = content
		r.ShownChars = w.TotalChars
		return r
	}
	r.Truncated = true
	hc, tc := w.HeadChars(), w.TailChars()
	r.ShownChars = hc + tc
	if s != nil {
		hostPath, err := s.Save(rawURL, content)
		if err != nil {
			r.StoreErr = err
		} else {
			r.StoredPath = s.AgentPath(hostPath)
		}
	}

	var b strings.Builder
	b.Grow(len(w.Head) + len(w.Tail) + 600)
	b.WriteString(w.Head)
	b.WriteString("\n\n" + omittedMarker + "\n\n")
	b.WriteString(w.Tail)
	b.WriteString("\n\n" + openRule + "\n")
	b.WriteString("Showing " + commas(hc) + " chars (head) + " + commas(tc) + " chars (tail) of " +
		commas(w.TotalChars) + " total clean characters.\n")
	if r.StoredPath != "" {
		what := "the file is the complete page"
		if w.TotalChars > StoreCap {
			// The stored copy is capped: say so, and do not promise the tail is in it.
			what = "the file holds the first " + commas(StoreCap) + " of " + commas(w.TotalChars) +
				" chars; the tail shown above is beyond its end"
		}
		tool, shown := "read_file", r.StoredPath
		if s.ReadTool == ReadToolWeb {
			tool, shown = ReadToolWeb, filepath.Base(r.StoredPath)
			what = "lines, 1-based; " + what
			if s.ResourcePrefix != "" {
				b.WriteString("Full text saved to: " + shown + " (resource " + s.ResourcePrefix + shown + ")\n")
			} else {
				b.WriteString("Full text saved to: " + shown + "\n")
			}
		} else {
			b.WriteString("Full text saved to: " + shown + "\n")
		}
		if s.ReadTool == ReadToolCLI {
			b.WriteString(`To read the omitted middle: ` + ReadToolCLI + ` ` + shellQuote(shown) + ` --offset ` +
				strconv.Itoa(w.ReadOffset) + " --limit 200 (lines, 1-based; " + what + "; raise/lower --offset to page through it).\n")
		} else {
			b.WriteString(`To read the omitted middle: ` + tool + ` path="` + shown + `" offset=` +
				strconv.Itoa(w.ReadOffset) + " limit=200 (" + what + "; raise/lower offset to page through it).\n")
		}
	} else {
		b.WriteString(notStoredLine + "\n")
	}
	b.WriteString(closeRule)
	r.Content = b.String()
	return r
}

// shellQuote returns s as one POSIX shell word: unchanged when it holds
// only characters no shell treats specially, else in single quotes.
func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,@%=", r)) {
			safe = false
			break
		}
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// commas formats n with "," thousands separators (Python "{:,}").
func commas(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	pre := len(s) % 3
	if pre > 0 {
		b.WriteString(s[:pre])
	}
	for i := pre; i < len(s); i += 3 {
		if b.Len() > 0 && !(neg && b.Len() == 1) {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// graphemeWindow is how far (bytes) around a cut graphemeBoundary* look for
// cluster boundaries; far longer than any real cluster (a family emoji with
// skin tones is ~40 bytes).
const graphemeWindow = 256

// maxGraphemeScan bounds how far back (bytes) a segmentation start is sought;
// only a run of that many non-ASCII bytes (pathological) exceeds it.
const maxGraphemeScan = 64 << 10

// graphemeBoundaries calls fn with every grapheme-cluster boundary (byte
// offsets into s) in the window around i, in increasing order.
func graphemeBoundaries(s string, i int, fn func(b int)) {
	// Start segmenting at a known boundary: between two ASCII characters
	// (other than CR LF) there always is one (UAX #29 GB999), whereas starting
	// inside a run of regional indicators would pair the flags wrongly.
	start := max(0, i-graphemeWindow)
	for start > 0 && i-start < maxGraphemeScan {
		a, b := s[start-1], s[start]
		if a < utf8.RuneSelf && b < utf8.RuneSelf && !(a == '\r' && b == '\n') {
			break
		}
		start--
	}
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	end := min(len(s), i+graphemeWindow)
	seg, state, pos := s[start:end], -1, start
	fn(pos)
	for len(seg) > 0 {
		var cluster string
		cluster, seg, _, state = uniseg.FirstGraphemeClusterInString(seg, state)
		pos += len(cluster)
		fn(pos)
	}
}

// graphemeBoundaryAtOrBefore moves a cut at byte i back to the start of the
// grapheme cluster it would split (a ZWJ emoji sequence, a flag, a letter with
// combining marks, CRLF), so the head never ends in half a character as a
// reader sees it. i itself is returned when it is already a boundary.
func graphemeBoundaryAtOrBefore(s string, i int) int {
	if i <= 0 || i >= len(s) {
		return i
	}
	best := i
	found := false
	graphemeBoundaries(s, i, func(b int) {
		if b <= i {
			best, found = b, true
		}
	})
	if !found {
		return i
	}
	return best
}

// graphemeBoundaryAtOrAfter moves a cut at byte i forward to the end of the
// grapheme cluster it would split, so the tail never starts mid-cluster.
func graphemeBoundaryAtOrAfter(s string, i int) int {
	if i <= 0 || i >= len(s) {
		return i
	}
	best := -1
	graphemeBoundaries(s, i, func(b int) {
		if b >= i && best < 0 {
			best = b
		}
	})
	if best < 0 {
		return i
	}
	return best
}

// SplitFooter splits content produced by Apply into the page text and the
// truncation footer Apply appended ("" when content has none). The footer is
// Gatehouse's own text, not page text: surfaces that mark page text as
// untrusted keep the footer outside that mark. Only a footer at the very end,
// opening with the "[TRUNCATED]" rule and closing with the 29-dash rule,
// counts. Call it only on content whose Result.Truncated was true: a short
// page could end with a forged footer, and splitting it would lift page text
// out of the untrusted mark. (In truncated content the real footer is last
// and holds no rule of its own, so LastIndex finds it even when the page
// quotes the rule.)
func SplitFooter(content string) (body, footer string) {
	if !strings.HasSuffix(content, closeRule) {
		return content, ""
	}
	i := strings.LastIndex(content, "\n\n"+openRule+"\n")
	if i < 0 {
		return content, ""
	}
	return content[:i], content[i:]
}
