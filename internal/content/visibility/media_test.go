package visibility

import "testing"

// TestMediaApplies: media query lists are judged at the four reference
// viewports (media.go): always when every one matches, never when none
// does, sometimes otherwise or when a feature cannot be evaluated.
func TestMediaApplies(t *testing.T) {
	for _, c := range []struct {
		q    string
		want mediaKind
	}{
		{"", mediaAlways},
		{"screen", mediaAlways},
		{"all", mediaAlways},
		{"only screen", mediaAlways},
		{"print", mediaNever},
		{"speech", mediaNever},
		{"not print", mediaAlways},
		{"print, screen", mediaAlways},
		{"(min-width: 0)", mediaAlways},
		{"screen and (min-width: 1px)", mediaAlways},
		{"(width >= 10px)", mediaAlways},
		{"(10px <= width <= 5000px)", mediaAlways},
		{"(orientation: portrait), (orientation: landscape)", mediaAlways},
		{"(hover: hover), (hover: none)", mediaAlways},
		{"(min-width: 9000px)", mediaNever},
		{"print and (min-width: 0)", mediaNever},
		{"not screen", mediaNever},
		{"(max-width: 600px)", mediaSometimes},
		{"screen and (min-width: 768px)", mediaSometimes},
		{"(min-width: 48em)", mediaSometimes},
		{"(400px < width < 900px)", mediaSometimes},
		{"(hover: hover)", mediaSometimes},
		{"(prefers-color-scheme: dark)", mediaSometimes},
		{"(min-resolution: 2dppx)", mediaSometimes},
		{"not all and (monochrome)", mediaAlways},
		{"(not (hover: none))", mediaSometimes},
		{"((min-width: 0) and (max-width: 99999px))", mediaAlways},
		{"screen and (", mediaSometimes},
		{"(min-width: 0) or (made-up: 1)", mediaAlways},
	} {
		if got := mediaApplies(c.q); got != c.want {
			t.Errorf("mediaApplies(%q) = %d, want %d", c.q, got, c.want)
		}
	}
}

// FuzzCSSValues: the CSS value and media query readers never panic and
// judge the same input the same way.
func FuzzCSSValues(f *testing.F) {
	for _, s := range []string{"translatex(-9999px)", "matrix(1,0,0,1,-9999,0)", "opacity(0%)", "rgb(0 0 0 / 0)",
		"#0000", "0.5px", "screen and (min-width: 1px)", "(10px <= width <= 5000px)", "((((", "not (not (hover))", "0 0 0 -9999px"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := []bool{transformHides(s), filterHides(s), zoomHides(s), tinyFont(s), transparentColor(s),
			farNegativeMargin(map[string]string{"margin": s}), collapsed(map[string]string{"overflow": "hidden", "height": s})}
		k := mediaApplies(s)
		if k < mediaAlways || k > mediaNever {
			t.Fatalf("mediaApplies(%q) = %d", s, k)
		}
		b := []bool{transformHides(s), filterHides(s), zoomHides(s), tinyFont(s), transparentColor(s),
			farNegativeMargin(map[string]string{"margin": s}), collapsed(map[string]string{"overflow": "hidden", "height": s})}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("reader %d not deterministic on %q", i, s)
			}
		}
		if mediaApplies(s) != k {
			t.Fatalf("mediaApplies not deterministic on %q", s)
		}
	})
}
