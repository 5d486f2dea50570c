package truncate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

func TestWindow(t *testing.T) {
	text := "l1\nl2\nl3\nl4\nl5\n"
	for _, tc := range []struct {
		name                  string
		offset, limit         int
		content               string
		lines, next, totalLen int
	}{
		{name: "from start", offset: 1, limit: 2, content: "l1\nl2", lines: 2, next: 3},
		{name: "offset 0 reads as 1", offset: 0, limit: 1, content: "l1", lines: 1, next: 2},
		{name: "to the end", offset: 4, limit: 10, content: "l4\nl5", lines: 2, next: 0},
		{name: "last line exactly", offset: 5, limit: 1, content: "l5", lines: 1, next: 0},
		{name: "past the end", offset: 6, limit: 5, content: "", lines: 0, next: 0},
		{name: "limit 0 is the default", offset: 1, limit: 0, content: strings.TrimSuffix(text, "\n"), lines: 5, next: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := window("x.md", text, tc.offset, tc.limit)
			if r.Content != tc.content || r.Lines != tc.lines || r.NextOffset != tc.next || r.TotalLines != 5 {
				t.Fatalf("got %+v", r)
			}
		})
	}
	// No final newline: the last line still counts.
	if r := window("x.md", "a\nb", 2, 5); r.Content != "b" || r.TotalLines != 2 {
		t.Fatalf("%+v", r)
	}
	// Output cap: lines stop before MaxReadChars.
	long := strings.Repeat(strings.Repeat("x", ReadLineWidth-1)+"\n", 11) + "z\n"
	if r := window("x.md", long, 1, 20); r.Lines != 10 || r.NextOffset != 11 || r.Cut {
		t.Fatalf("cap: lines=%d next=%d cut=%v", r.Lines, r.NextOffset, r.Cut)
	}
	// A line longer than ReadLineWidth is read as lines of ReadLineWidth
	// chars: paging reaches every char of a one-line page (breaker6 D10).
	huge := strings.Repeat("é", MaxReadChars+5) + "\nnext\n"
	r := window("x.md", huge, 1, 10)
	if r.Lines != 10 || r.Cut || CountChars(r.Content) != MaxReadChars || r.NextOffset != 11 || r.TotalLines != 12 {
		t.Fatalf("overlong line: lines=%d cut=%v chars=%d next=%d total=%d", r.Lines, r.Cut, CountChars(r.Content), r.NextOffset, r.TotalLines)
	}
	var got strings.Builder
	for off := 1; off != 0; {
		r := window("x.md", huge, off, 3)
		got.WriteString(r.Content)
		off = r.NextOffset
	}
	if strings.ReplaceAll(got.String(), "\n", "") != strings.ReplaceAll(huge, "\n", "") {
		t.Fatalf("paging a long line lost chars: %d of %d", CountChars(got.String()), CountChars(huge))
	}
	if r := window("x.md", text, 1, MaxReadLines+100); r.Lines != 5 {
		t.Fatal("limit above the max")
	}
}

func TestReadFollowsAgentPath(t *testing.T) {
	dir := t.TempDir()
	s := Store{Dir: dir, PathMap: map[string]string{dir: "/sandbox/cache"}}
	host, err := s.Save("https://docs.test/p", "one\ntwo\n")
	if err != nil {
		t.Fatal(err)
	}
	agent := s.AgentPath(host)
	if !strings.HasPrefix(agent, "/sandbox/cache/") {
		t.Fatalf("agent path %q", agent)
	}
	for _, p := range []string{agent, host, filepath.Base(host)} {
		r, err := s.Read(p, 2, 1)
		if err != nil || r.Content != "two" {
			t.Fatalf("Read(%q) = %+v, %v", p, r, err)
		}
	}
	if _, err := s.Read("/sandbox/cache/../../etc/passwd", 1, 1); reason.Of(err) != reason.ReadOutsideStore {
		t.Fatalf("agent-path escape: %v", err)
	}
	if _, err := s.Read("/sandbox/other/"+filepath.Base(host), 1, 1); reason.Of(err) != reason.ReadOutsideStore {
		t.Fatalf("unmapped agent path: %v", err)
	}
}

func TestReadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := mkfifo(filepath.Join(dir, "pipe-0123456789.md")); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	_, err := Store{Dir: dir}.Read("pipe-0123456789.md", 1, 1)
	if reason.Of(err) != reason.ReadNotRegular {
		t.Fatalf("FIFO: %v", err)
	}
	os.Remove(filepath.Join(dir, "pipe-0123456789.md"))
}

// FuzzStoreName: whatever path a model sends, an accepted one names a direct
// child of the store directory with a store file name.
func FuzzStoreName(f *testing.F) {
	for _, s := range []string{"a-0123456789.md", "../x.md", "/etc/passwd", "a/b.md", `..\x.md`, "x.cache.md", ".hidden.md", "/tmp/store/a.md", "/tmp/store/../store/a.md", "a.md\x00"} {
		f.Add(s)
	}
	s := Store{Dir: "/tmp/store", PathMap: map[string]string{"/tmp/store": "/agent/view"}}
	f.Fuzz(func(t *testing.T, p string) {
		name, err := s.storeName(p)
		if err != nil {
			if reason.Of(err) != reason.ReadOutsideStore {
				t.Fatalf("%q: reason %v", p, reason.Of(err))
			}
			return
		}
		if !IsStoreName(name) || filepath.Base(name) != name {
			t.Fatalf("%q accepted as %q", p, name)
		}
		if filepath.Dir(filepath.Join("/tmp/store", name)) != "/tmp/store" {
			t.Fatalf("%q escapes as %q", p, name)
		}
		if strings.Contains(p, "..") {
			for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
				if part == ".." {
					t.Fatalf("%q with a .. component accepted", p)
				}
			}
		}
	})
}

// TestIsStoreNameScheme: only names the stores write are readable; any other
// file in the directory (copied in by hand, a cache entry) is not.
func TestIsStoreNameScheme(t *testing.T) {
	for _, u := range []string{"https://hermes-agent.nousresearch.com/docs", "http://[::1]:8080/x", "http://a.test/", "not a url", "https://" + strings.Repeat("long", 30) + ".test/"} {
		if n := FileName(u); !IsStoreName(n) {
			t.Errorf("FileName(%q) = %q not a store name", u, n)
		}
	}
	for _, n := range []string{"browser-snapshot-0123456789.txt", "a-0123456789.md", "docs.test_8080-abcdef0123.md"} {
		if !IsStoreName(n) {
			t.Errorf("%q refused", n)
		}
	}
	for _, n := range []string{"notes.txt", "notes.md", "hostname", "a-0123456789.txt", "a-012345678.md", "a-0123456789A.md", "a-ABCDEF0123.md",
		"browser-snapshot-0123456789", "x-0123456789abcdef.cache.md", ".a-0123456789.md", "a/b-0123456789.md", "-0123456789.md"} {
		if IsStoreName(n) {
			t.Errorf("%q accepted", n)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("secret"), 0o644)
	_, err := Store{Dir: dir}.Read("notes.txt", 1, 1)
	if reason.Of(err) != reason.ReadOutsideStore || !strings.Contains(err.Error(), StoreNameHint) {
		t.Fatalf("copied file: %v", err)
	}
}

// TestFooterOffsetOnOneLinePage: a one-line page (a JSON API response)
// cut to a head and tail gets a footer offset that Read can serve, and
// reading on from it reaches the omitted middle and the end (breaker6 D10).
func TestFooterOffsetOnOneLinePage(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 480_000; i++ {
		fmt.Fprintf(&b, `{"id":%d,"name":"item %d"},`, i, i)
	}
	page := b.String()
	w := Cut(page, 15_000)
	if !w.Truncated {
		t.Fatal("not truncated")
	}
	r := window("x.md", page, w.ReadOffset, 200)
	if r.Lines == 0 {
		t.Fatalf("footer offset %d is past the end (%d lines)", w.ReadOffset, r.TotalLines)
	}
	var got strings.Builder
	start := (w.ReadOffset - 1) * ReadLineWidth
	for off := w.ReadOffset; off != 0; {
		r := window("x.md", page, off, 200)
		got.WriteString(r.Content)
		off = r.NextOffset
	}
	if start > CountChars(w.Head) || got.String() != page[start:] {
		t.Fatalf("reading on from offset %d (char %d, head %d chars) gave %d chars, want %d", w.ReadOffset, start, CountChars(w.Head), got.Len(), len(page)-start)
	}
	// Short lines keep the spec §A10.3 offset: newlines in the head + 2.
	lines := strings.Repeat("a line of text\n", 3000)
	if w := Cut(lines, 2000); w.ReadOffset != strings.Count(w.Head, "\n")+2 {
		t.Fatalf("short lines: offset %d, head newlines %d", w.ReadOffset, strings.Count(w.Head, "\n"))
	}
}
