package truncate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/vectors"
	"github.com/rivo/uniseg"
)

// buildVectorContent turns the textual description used by the
// extract.truncate_window vectors into the content it describes.
func buildVectorContent(t *testing.T, desc string) string {
	t.Helper()
	var lines []string
	switch {
	case strings.HasPrefix(desc, "2000 lines of 'line {i} ' + 50 x"):
		for i := 0; i < 2000; i++ {
			lines = append(lines, fmt.Sprintf("line %d ", i)+strings.Repeat("x", 50))
		}
		return strings.Join(lines, "\n")
	case strings.HasPrefix(desc, "single 10000-char line of 'a'"):
		return strings.Repeat("a", 10000)
	case strings.HasPrefix(desc, "'UNIQUE_MIDDLE_MARKER\\n' + 5000 lines 'row {i}'"):
		for i := 0; i < 5000; i++ {
			lines = append(lines, fmt.Sprintf("row %d", i))
		}
		return "UNIQUE_MIDDLE_MARKER\n" + strings.Join(lines, "\n")
	case strings.HasPrefix(desc, "3000 lines 'para {i} ' + 80 y"):
		for i := 0; i < 3000; i++ {
			lines = append(lines, fmt.Sprintf("para %d ", i)+strings.Repeat("y", 80))
		}
		return strings.Join(lines, "\n")
	case strings.HasPrefix(desc, "100 lines of 199 'z' + \\n"):
		return strings.Repeat(strings.Repeat("z", 199)+"\n", 100)
	case desc == `'# Title\n\nshort body\n'`:
		return "# Title\n\nshort body\n"
	case desc == "exactly 15000 chars":
		return strings.Repeat("a", 15000)
	}
	t.Fatalf("unknown content description %q", desc)
	return ""
}

func TestVectorsTruncateWindow(t *testing.T) {
	for i, v := range vectors.Area(t, "extract.truncate_window", 27) {
		var in struct {
			Content      string `json:"content"`
			ContentChars int    `json:"content_chars"`
			CharLimit    int    `json:"char_limit"`
		}
		var want struct {
			Truncated  bool `json:"truncated"`
			HeadBudget int  `json:"head_budget"`
			TailBudget int  `json:"tail_budget"`
			HeadChars  int  `json:"head_chars"`
			TailChars  int  `json:"tail_chars"`
			ReadOffset int  `json:"read_offset"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(fmt.Sprintf("%02d %s limit=%d: %s", i, in.Content, in.CharLimit, v.Note), func(t *testing.T) {
			content := buildVectorContent(t, in.Content)
			if n := utf8.RuneCountInString(content); n != in.ContentChars {
				t.Fatalf("built %d chars, vector says %d", n, in.ContentChars)
			}
			w := Cut(content, in.CharLimit)
			if w.Truncated != want.Truncated {
				t.Fatalf("truncated = %v, want %v", w.Truncated, want.Truncated)
			}
			if !want.Truncated {
				if w.Head != content || w.Tail != "" || w.ReadOffset != 0 {
					t.Fatal("untruncated window must hold the content whole")
				}
				return
			}
			got := [5]int{w.HeadBudget, w.TailBudget, w.HeadChars(), w.TailChars(), w.ReadOffset}
			exp := [5]int{want.HeadBudget, want.TailBudget, want.HeadChars, want.TailChars, want.ReadOffset}
			if got != exp {
				t.Fatalf("[head_budget tail_budget head_chars tail_chars read_offset] = %v, want %v", got, exp)
			}
		})
	}
}

func TestVectorsBase64Images(t *testing.T) {
	for _, v := range vectors.Area(t, "extract.base64_images", 7) {
		t.Run(v.Note, func(t *testing.T) {
			var in struct{ Text string }
			var want struct{ Output string }
			vectors.Decode(t, v.Input, &in)
			vectors.Decode(t, v.Expected, &want)
			if got := ReplaceBase64Images(in.Text); got != want.Output {
				t.Fatalf("ReplaceBase64Images(%q) = %q, want %q", in.Text, got, want.Output)
			}
		})
	}
}

func TestBase64ImagesExtras(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"![x](data:image/png;base64,AA\n  AA== )", "[IMAGE: x]"},                // whitespace inside payload
		{"![\u00a0alt\u3000](data:image/png;base64,AA)", "[IMAGE: alt]"},         // Python strip() whitespace
		{"![a](DATA:IMAGE/png;base64,AA)", "![a](DATA:IMAGE/png;base64,AA)"},     // case-sensitive
		{"text data:image/png;base64, more", "text data:image/png;base64, more"}, // empty payload untouched
		{"é ![ü](data:image/webp;base64,Zm9v) 中", "é [IMAGE: ü] 中"},
		{"![a](https://x.test/a.png) ![b](data:image/png;base64,QQ==)", "![a](https://x.test/a.png) [IMAGE: b]"},
	} {
		if got := ReplaceBase64Images(c.in); got != c.want {
			t.Errorf("ReplaceBase64Images(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestClampLimit(t *testing.T) {
	for _, c := range [][2]int{{0, DefaultLimit}, {-5, MinLimit}, {1, MinLimit}, {1999, MinLimit}, {2000, 2000},
		{60000, 60000}, {500000, 500000}, {500001, MaxLimit}} {
		if got := ClampLimit(c[0]); got != c[1] {
			t.Errorf("ClampLimit(%d) = %d, want %d", c[0], got, c[1])
		}
	}
}

func TestCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 9595: "9,595", 120889: "120,889",
		2000000: "2,000,000", -1234567: "-1,234,567", -123: "-123"} {
		if got := commas(n); got != want {
			t.Errorf("commas(%d) = %q, want %q", n, got, want)
		}
	}
}

// pageLines builds n numbered lines, the way a long markdown page looks.
func pageLines(n int) (string, []string) {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %04d: %s", i+1, strings.Repeat("word ", 12))
	}
	return strings.Join(lines, "\n"), lines
}

func TestFooterAndReadOffset(t *testing.T) {
	content, lines := pageLines(400)
	dir := t.TempDir()
	s := &Store{Dir: dir}
	const u = "https://docs.example.com/guide"
	r := Apply(u, content, 2000, s)
	if !r.Truncated || r.StoreErr != nil {
		t.Fatalf("truncated=%v storeErr=%v", r.Truncated, r.StoreErr)
	}
	w := Cut(content, 2000)
	wantPath := filepath.Join(dir, FileName(u))
	if r.StoredPath != wantPath {
		t.Fatalf("StoredPath = %q, want %q", r.StoredPath, wantPath)
	}
	wantOut := w.Head + "\n\n[... middle omitted — see footer ...]\n\n" + w.Tail + "\n" + strings.Join([]string{
		"",
		"──────── [TRUNCATED] ────────",
		fmt.Sprintf("Showing %s chars (head) + %s chars (tail) of %s total clean characters.",
			commas(w.HeadChars()), commas(w.TailChars()), commas(w.TotalChars)),
		"Full text saved to: " + wantPath,
		fmt.Sprintf(`To read the omitted middle: read_file path="%s" offset=%d limit=200 (the file is the complete page; raise/lower offset to page through it).`, wantPath, w.ReadOffset),
		"─────────────────────────────",
	}, "\n")
	if r.Content != wantOut {
		t.Fatalf("output mismatch:\n got: %q\nwant: %q", r.Content[len(r.Content)-600:], wantOut[len(wantOut)-600:])
	}
	if r.ShownChars != w.HeadChars()+w.TailChars() || r.OriginalChars != utf8.RuneCountInString(content) {
		t.Fatalf("ShownChars=%d OriginalChars=%d", r.ShownChars, r.OriginalChars)
	}

	// Take the footer literally: read_file path=P offset=N limit=200 (1-based lines).
	stored, err := os.ReadFile(wantPath)
	if err != nil {
		t.Fatal(err)
	}
	if string(stored) != content {
		t.Fatal("stored file is not the complete page")
	}
	fileLines := strings.Split(string(stored), "\n")
	headLines := strings.Split(w.Head, "\n")
	firstOmitted := lines[len(headLines)]
	if got := fileLines[w.ReadOffset-1]; got != firstOmitted {
		t.Fatalf("line %d of stored file = %q, want first omitted line %q", w.ReadOffset, got, firstOmitted)
	}
	if headLines[len(headLines)-1] != lines[len(headLines)-1] {
		t.Fatal("head does not end on a whole line")
	}
	page := fileLines[w.ReadOffset-1 : w.ReadOffset-1+200]
	if page[0] != firstOmitted || strings.Contains(w.Head, page[0]) {
		t.Fatal("read at the footer offset does not start in the omitted middle")
	}
}

func TestNotStoredFooter(t *testing.T) {
	content, _ := pageLines(300)
	r := Apply("https://example.com/", content, 2000, nil)
	if !r.Truncated || r.StoredPath != "" || !strings.Contains(r.Content, notStoredLine) ||
		strings.Contains(r.Content, "Full text saved to:") {
		t.Fatalf("nil store: %q", r.Content[len(r.Content)-300:])
	}
	// A store whose Dir is a regular file cannot save.
	f := filepath.Join(t.TempDir(), "file")
	os.WriteFile(f, nil, 0o644)
	r = Apply("https://example.com/", content, 2000, &Store{Dir: f})
	if r.StoreErr == nil || r.StoredPath != "" || !strings.Contains(r.Content, notStoredLine) {
		t.Fatalf("failed store: err=%v path=%q", r.StoreErr, r.StoredPath)
	}
	if !strings.HasSuffix(r.Content, "\n"+closeRule) {
		t.Fatal("missing closing rule")
	}
}

func TestUntruncatedUnchanged(t *testing.T) {
	dir := t.TempDir()
	in := "# Title\n\nshort body ![p](data:image/png;base64,AAAA)\n"
	r := Apply("https://example.com/", in, 0, &Store{Dir: dir})
	if r.Truncated || r.Content != "# Title\n\nshort body [IMAGE: p]\n" || r.StoredPath != "" {
		t.Fatalf("%+v", r)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatal("untruncated page must not be stored")
	}
}

func TestStoreSymlinkNotFollowed(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "victim.txt")
	if err := os.WriteFile(outside, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	const u = "https://example.com/a"
	planted := filepath.Join(dir, FileName(u))
	if err := os.Symlink(outside, planted); err != nil {
		t.Fatal(err)
	}
	content, _ := pageLines(300)
	r := Apply(u, content, 2000, &Store{Dir: dir})
	if r.StoreErr != nil || r.StoredPath != planted {
		t.Fatalf("store failed: %v", r.StoreErr)
	}
	if b, _ := os.ReadFile(outside); string(b) != "precious" {
		t.Fatal("symlink target was written through")
	}
	fi, err := os.Lstat(planted)
	if err != nil || fi.Mode()&os.ModeSymlink != 0 || !fi.Mode().IsRegular() {
		t.Fatalf("store path is not a regular file: %v %v", fi.Mode(), err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("store file mode %v, want 0600 (stored pages can be private)", fi.Mode())
	}
	if b, _ := os.ReadFile(planted); string(b) != content {
		t.Fatal("stored text wrong")
	}
}

func TestStoreRefusesDirectory(t *testing.T) {
	dir := t.TempDir()
	const u = "https://example.com/d"
	if err := os.Mkdir(filepath.Join(dir, FileName(u)), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := (Store{Dir: dir}).Save(u, "x"); err == nil {
		t.Fatal("overwrote a directory")
	}
}

func TestCacheHitRerunsStore(t *testing.T) {
	// The pipeline calls Apply on cache hits too; each call rewrites the
	// stored file, so a tampered or deleted store file is fresh again.
	dir := t.TempDir()
	s := &Store{Dir: dir}
	content, _ := pageLines(300)
	const u = "https://example.com/hit"
	r1 := Apply(u, content, 2000, s)
	os.WriteFile(r1.StoredPath, []byte("stale"), 0o644)
	r2 := Apply(u, content, 2000, s)
	if b, _ := os.ReadFile(r2.StoredPath); string(b) != content {
		t.Fatal("second Apply did not refresh the stored file")
	}
	os.Remove(r2.StoredPath)
	Apply(u, content, 2000, s)
	if _, err := os.Stat(r2.StoredPath); err != nil {
		t.Fatal("third Apply did not recreate the stored file")
	}
}

func TestIdenticalStoreRefreshedInPlace(t *testing.T) {
	dir := t.TempDir()
	s := Store{Dir: dir}
	const u = "https://example.com/same"
	p, err := s.Save(u, "full text")
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old)
	fi1, _ := os.Stat(p)
	if _, err := s.Save(u, "full text"); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(p)
	if !os.SameFile(fi1, fi2) || !fi2.ModTime().After(old.Add(time.Minute)) {
		t.Fatalf("identical save: same file %v, mtime %v", os.SameFile(fi1, fi2), fi2.ModTime())
	}
	// A symlink to a file with identical content is still replaced, never trusted.
	outside := filepath.Join(t.TempDir(), "same.txt")
	os.WriteFile(outside, []byte("full text"), 0o644)
	os.Remove(p)
	os.Symlink(outside, p)
	if _, err := s.Save(u, "full text"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Lstat(p); !fi.Mode().IsRegular() {
		t.Fatal("symlink with identical content kept")
	}
	// A hard link to an outside file is replaced too (its twin is left alone).
	os.Remove(p)
	os.Link(outside, p)
	ofi, _ := os.Stat(outside)
	if _, err := s.Save(u, "full text"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); os.SameFile(fi, ofi) {
		t.Fatal("hard link kept")
	}
}

func TestEmojiAndCJKAtCut(t *testing.T) {
	// Head budget 1500 ends exactly after the 4-byte emoji (rune 1500), the
	// tail (last 500 runes) starts exactly on the CJK char: a byte-based cut
	// would split both.
	content := strings.Repeat("a", 1499) + "😀" + strings.Repeat("b", 5000) + "中" + strings.Repeat("c", 499)
	w := Cut(content, 2000)
	if !w.Truncated || !utf8.ValidString(w.Head) || !utf8.ValidString(w.Tail) {
		t.Fatal("invalid UTF-8 window")
	}
	if !strings.HasSuffix(w.Head, "😀") || w.HeadChars() != 1500 {
		t.Fatalf("head ends %q, %d chars", w.Head[len(w.Head)-8:], w.HeadChars())
	}
	if !strings.HasPrefix(w.Tail, "中") || w.TailChars() != 500 {
		t.Fatalf("tail starts %q, %d chars", w.Tail[:6], w.TailChars())
	}
	// One rune further: the emoji is the first omitted char, never half-shown.
	content2 := strings.Repeat("a", 1500) + "😀" + strings.Repeat("b", 5000) + "中中" + strings.Repeat("c", 498)
	w2 := Cut(content2, 2000)
	if strings.ContainsRune(w2.Head, '😀') || !utf8.ValidString(w2.Head) || w2.HeadChars() != 1500 {
		t.Fatal("emoji split or leaked into head")
	}
	if !strings.HasPrefix(w2.Tail, "中中c") || w2.TailChars() != 500 {
		t.Fatalf("tail %q", w2.Tail[:8])
	}
	// Near a newline snap, multi-byte chars on both sides.
	content3 := strings.Repeat("é", 1000) + "\n" + strings.Repeat("😀", 600) + strings.Repeat("中", 3000) + "\n" + strings.Repeat("ü", 450)
	w3 := Cut(content3, 2000)
	if w3.Head != strings.Repeat("é", 1000) || w3.Tail != strings.Repeat("ü", 450) || w3.ReadOffset != 2 {
		t.Fatalf("snap with multibyte: head %d chars, tail %d chars, offset %d", w3.HeadChars(), w3.TailChars(), w3.ReadOffset)
	}
	r := Apply("https://example.com/", content, 2000, nil)
	if !strings.Contains(r.Content, "Showing 1,500 chars (head) + 500 chars (tail) of 7,000 total clean characters.") {
		t.Fatal("footer counts are not in chars")
	}
}

func TestInvalidUTF8Repaired(t *testing.T) {
	content := strings.Repeat("a", 1499) + "\xf0\x9f" + strings.Repeat("b", 3000)
	w := Cut(content, 2000)
	if !utf8.ValidString(w.Head) || !utf8.ValidString(w.Tail) || !strings.HasSuffix(w.Head, "\uFFFD") {
		t.Fatalf("head tail %q", w.Head[len(w.Head)-5:])
	}
}

func TestStoreCapMarker(t *testing.T) {
	dir := t.TempDir()
	// 2-byte chars: a byte-based cap would keep only half as many chars.
	full := strings.Repeat("é", StoreCap+5)
	p, err := Store{Dir: dir}.Save("https://big.example/", full)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	marker := "\n\n[... stored copy truncated at 2,000,000 chars of 2,000,005; re-extract a more specific URL for the rest ...]"
	if !strings.HasSuffix(string(b), marker) {
		t.Fatalf("marker missing: %q", b[len(b)-120:])
	}
	if n := utf8.RuneCountInString(strings.TrimSuffix(string(b), marker)); n != StoreCap {
		t.Fatalf("stored %d chars before the marker, want %d", n, StoreCap)
	}
	// Exactly at the cap: no marker.
	p2, _ := Store{Dir: dir}.Save("https://big2.example/", full[:2*StoreCap])
	if b2, _ := os.ReadFile(p2); strings.Contains(string(b2), "stored copy truncated") {
		t.Fatal("marker on a page at the cap")
	}
}

func TestAgentPath(t *testing.T) {
	s := Store{PathMap: map[string]string{
		"/home/u/.gatehouse":            "/mnt/gh",
		"/home/u/.gatehouse/cache/web/": "/cache/",
		"/srv":                          "/",
		"/":                             "/host",
	}}
	for _, c := range []struct{ in, want string }{
		{"/home/u/.gatehouse/cache/web/a.md", "/cache/a.md"}, // longest prefix wins
		{"/home/u/.gatehouse/other/b.md", "/mnt/gh/other/b.md"},
		{"/home/u/.gatehouse2/x.md", "/host/home/u/.gatehouse2/x.md"}, // component boundary
		{"/srv/x.md", "/x.md"},
		{"/srv", "/"},
		{"/etc/x", "/host/etc/x"},
	} {
		if got := s.AgentPath(c.in); got != c.want {
			t.Errorf("AgentPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := (Store{}).AgentPath("/a/b"); got != "/a/b" {
		t.Errorf("nil map changed the path: %q", got)
	}
	// Apply shows the mapped path in both footer lines.
	dir := t.TempDir()
	content, _ := pageLines(300)
	r := Apply("https://example.com/m", content, 2000, &Store{Dir: dir, PathMap: map[string]string{dir: "/workspace/.cache/web"}})
	want := "/workspace/.cache/web/" + FileName("https://example.com/m")
	if r.StoredPath != want || !strings.Contains(r.Content, "Full text saved to: "+want+"\n") ||
		!strings.Contains(r.Content, `read_file path="`+want+`"`) {
		t.Fatalf("mapped path not shown: %q", r.StoredPath)
	}
}

func TestHostSlug(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://example.com/a", "example.com"},
		{"https://EXAMPLE.com/a", "example.com"},
		{"https://[::1]:3000/", "__1"},
		{"https://hermes-agent.nousresearch.com/docs", "hermes-agent.nousresearch.com"},
		{"not a url at all", "page"},
		{"https:///path", "page"},
		{"https://" + strings.Repeat("a", 70) + ".com/", strings.Repeat("a", 60)},
		{"https://" + strings.Repeat("a", 59) + "-x.com/", strings.Repeat("a", 59)}, // cut at 60 then trailing "-" stripped
		{"http://bücher.example/", "b-cher.example"},
	} {
		if got := HostSlug(c.in); got != c.want {
			t.Errorf("HostSlug(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	// Seed article: sha256("https://hermes-agent.nousresearch.com/docs")[:10] = 2a8e5b2eee.
	if got := FileName("https://hermes-agent.nousresearch.com/docs"); got != "hermes-agent.nousresearch.com-2a8e5b2eee.md" {
		t.Errorf("FileName = %q", got)
	}
}

func ExampleCut() {
	// The only newline (index 10) is not past half the head budget (750), so
	// the head is cut mid-line at 1500 chars; ReadOffset = 1 newline + 2.
	content := strings.Repeat("x", 10) + "\n" + strings.Repeat("y", 3000)
	w := Cut(content, 2000)
	fmt.Println(w.Truncated, w.HeadBudget, w.TailBudget, w.HeadChars(), w.TailChars(), w.ReadOffset)
	// Output: true 1500 500 1500 500 3
}

// sliceOracle is the described system's arithmetic written naively over
// []rune, as the differential reference for FuzzCut.
func sliceOracle(s string, limit int) (head, tail string, truncated bool) {
	rs := []rune(s)
	if len(rs) <= limit {
		return s, "", false
	}
	hb := int(float64(limit) * 0.75)
	tb := limit - hb
	// Grapheme-cluster boundaries (rune indices) of the whole string: the cuts
	// move back (head) or forward (tail) to one.
	boundary := map[int]bool{0: true}
	g := uniseg.NewGraphemes(s)
	idx := 0
	for g.Next() {
		idx += len(g.Runes())
		boundary[idx] = true
	}
	hEnd, tStart := hb, len(rs)-tb
	for !boundary[hEnd] {
		hEnd--
	}
	for !boundary[tStart] {
		tStart++
	}
	h, tl := rs[:hEnd], rs[tStart:]
	if nl := lastIndexRune(h, '\n'); nl >= 0 && float64(nl) > float64(hb)*0.5 {
		h = h[:nl]
	}
	if nl := indexRune(tl, '\n'); nl >= 0 && float64(nl) < float64(tb)*0.5 {
		tl = tl[nl+1:]
	}
	return string(h), string(tl), true
}

func lastIndexRune(rs []rune, r rune) int {
	for i := len(rs) - 1; i >= 0; i-- {
		if rs[i] == r {
			return i
		}
	}
	return -1
}

func indexRune(rs []rune, r rune) int {
	for i, x := range rs {
		if x == r {
			return i
		}
	}
	return -1
}

func FuzzCut(f *testing.F) {
	f.Add("hello\nworld\n", 3)
	f.Add(strings.Repeat("😀\n中", 900), 2000)
	f.Add(strings.Repeat("ab\n", 1000), 2001)
	f.Add("\xff\xfe\n\xf0\x9f\x98", 2)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		if limit < 0 {
			limit = -limit
		}
		if limit < 0 { // math.MinInt
			limit = 0
		}
		fixed := validUTF8(s)
		n := utf8.RuneCountInString(fixed)
		for _, lim := range []int{1 + limit%(n+2), ClampLimit(limit)} {
			w := Cut(s, lim)
			if !utf8.ValidString(w.Head) || !utf8.ValidString(w.Tail) {
				t.Fatalf("invalid UTF-8 out for limit %d", lim)
			}
			if !strings.HasPrefix(fixed, w.Head) || !strings.HasSuffix(fixed, w.Tail) {
				t.Fatalf("head/tail not prefix/suffix (limit %d)", lim)
			}
			if w.TotalChars != n {
				t.Fatalf("TotalChars %d, want %d", w.TotalChars, n)
			}
			if w.Truncated {
				if w.HeadChars() > w.HeadBudget || w.TailChars() > w.TailBudget || w.HeadBudget+w.TailBudget != lim {
					t.Fatalf("budgets exceeded: %d/%d %d/%d", w.HeadChars(), w.HeadBudget, w.TailChars(), w.TailBudget)
				}
				if w.ReadOffset != strings.Count(w.Head, "\n")+2 {
					t.Fatal("read offset")
				}
			} else if w.Head != fixed || w.Tail != "" {
				t.Fatal("untruncated window changed the content")
			}
			h, tl, tr := sliceOracle(fixed, lim)
			if h != w.Head || tl != w.Tail || tr != w.Truncated {
				t.Fatalf("differs from the []rune oracle at limit %d", lim)
			}
		}
	})
}

func FuzzReplaceBase64Images(f *testing.F) {
	f.Add("before ![a cat]( data:image/png;base64,AAAA) after")
	f.Add("<img src=\"data:image/png;base64,iVBORw0KGgo=\">")
	f.Add("(data:image/;base64,)")
	f.Add("![é](data:image/中;base64,\u2028AA)")
	f.Fuzz(func(t *testing.T, s string) {
		out := ReplaceBase64Images(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid in, invalid out: %q -> %q", s, out)
		}
		if !strings.Contains(s, "data:image/") && out != s {
			t.Fatal("text without data images changed")
		}
		if ReplaceBase64Images(out) != out && strings.Count(out, "data:image/") == strings.Count(s, "data:image/") {
			t.Fatal("not idempotent although nothing was replaced")
		}
	})
}

func BenchmarkCut100KB(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 100_000; i++ {
		fmt.Fprintf(&sb, "Paragraph %d: the quick brown fox jumps over the lazy dog, again and again.\n", i)
	}
	page := sb.String()[:100_000]
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Cut(page, DefaultLimit)
	}
}

func BenchmarkApply100KBNoStore(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 100_000; i++ {
		fmt.Fprintf(&sb, "Paragraph %d: the quick brown fox jumps over the lazy dog, again and again.\n", i)
	}
	page := sb.String()[:100_000]
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		Apply("https://example.com/", page, 0, nil)
	}
}

func FuzzCountChars(f *testing.F) {
	f.Add("héllo 😀 中文")
	f.Add("\xff\xfeabc\xe2\x82")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := CountChars(s), utf8.RuneCountInString(s); got != want {
			t.Fatalf("CountChars(%q) = %d, want %d", s, got, want)
		}
	})
}

// A page longer than the store cap: the footer must not claim the file is the
// complete page (the tail shown is past the stored copy's end).
func TestFooterWhenStoreIsCapped(t *testing.T) {
	dir := t.TempDir()
	content := strings.Repeat("abcdefghij\n", StoreCap/11+1000)
	r := Apply("https://example.com/huge", content, DefaultLimit, &Store{Dir: dir})
	if !r.Truncated || r.StoredPath == "" {
		t.Fatalf("%+v", r)
	}
	if strings.Contains(r.Content, "the file is the complete page") || !strings.Contains(r.Content, "the file holds the first 2,000,000 of") {
		t.Fatalf("footer:\n%s", r.Content[len(r.Content)-600:])
	}
}

// Cuts land on grapheme-cluster boundaries: a ZWJ family emoji, a flag (two
// regional indicators) or a letter with a combining mark is never split.
func TestCutKeepsGraphemeClusters(t *testing.T) {
	for name, cluster := range map[string]string{
		"zwj family": "👨‍👩‍👧‍👦",
		"flag":       "🇩🇪",
		"combining":  "e\u0301",
		"skin tone":  "👍🏽",
	} {
		t.Run(name, func(t *testing.T) {
			for shift := 0; shift < 12; shift++ {
				content := strings.Repeat("x", 1500-shift) + strings.Repeat(cluster, 400) + strings.Repeat("y", 3000)
				w := Cut(content, 2000)
				if !w.Truncated {
					t.Fatal("not truncated")
				}
				headRest := strings.TrimRight(strings.TrimLeft(w.Head, "x"), "")
				if strings.Count(headRest, cluster)*len(cluster) != len(headRest) {
					t.Fatalf("shift %d: head ends mid-cluster: %q", shift, headRest[max(0, len(headRest)-40):])
				}
				if utf8.RuneCountInString(w.Head) > w.HeadBudget || utf8.RuneCountInString(w.Tail) > w.TailBudget {
					t.Fatalf("over budget")
				}
			}
			content := strings.Repeat("y", 3000) + strings.Repeat(cluster, 400) + strings.Repeat("z", 480)
			for shift := 0; shift < 12; shift++ {
				w := Cut(content[:len(content)-shift], 2000)
				tailRest := strings.TrimRight(w.Tail, "z")
				if strings.Count(tailRest, cluster)*len(cluster) != len(tailRest) {
					t.Fatalf("shift %d: tail starts mid-cluster: %q", shift, tailRest[:min(40, len(tailRest))])
				}
			}
		})
	}
}
