package vectors

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// pending lists vector areas whose feature is not built yet, with the reason.
// Each is reported as an explicit skip (never silently dropped); when the
// feature lands, its package's table test claims the area and the entry goes.
var pending = map[string]string{}

// TestEveryAreaIsClaimed asserts that every area in testdata/hermes-vectors.json
// is loaded by some package's table test (vectors.Area(t, "<area>", n)), or is
// listed in pending and skipped by name.
func TestEveryAreaIsClaimed(t *testing.T) {
	areas := map[string]int{}
	for _, v := range All(t) {
		areas[v.Area]++
	}
	claimed := map[string]bool{}
	re := regexp.MustCompile(`vectors\.Area\(t, "([a-z0-9_.]+)"`)
	root := filepath.Join(filepath.Dir(Path()), "..")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			claimed[m[1]] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(areas))
	for a := range areas {
		names = append(names, a)
	}
	sort.Strings(names)
	total, run := 0, 0
	for _, a := range names {
		total += areas[a]
		t.Run(a, func(t *testing.T) {
			if claimed[a] {
				run += areas[a]
				return
			}
			for prefix, why := range pending {
				if strings.HasPrefix(a, prefix) {
					t.Skipf("%d vectors pending: %s", areas[a], why)
				}
			}
			t.Errorf("area %s (%d vectors) is claimed by no table test and not pending", a, areas[a])
		})
	}
	t.Logf("%d of %d vectors run in table tests; the rest are listed as pending above", run, total)
	if total != 453 {
		t.Errorf("vector file has %d vectors, want 453", total)
	}
}
