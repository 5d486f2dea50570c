package lazyregexp

import (
	"reflect"
	"regexp"
	"sync"
	"testing"
)

func TestSameResultsAsRegexp(t *testing.T) {
	const expr = `(?i)(\w+)@(\w+)\.com`
	const text = "Mail Ann@Example.com, bob@test.com or x@y.org"
	lazy := New(expr)
	if lazy.rx != nil {
		t.Fatal("compiled before first use")
	}
	std := regexp.MustCompile(expr)
	checks := []struct {
		name      string
		got, want any
	}{
		{"MatchString", lazy.MatchString(text), std.MatchString(text)},
		{"Match", lazy.Match([]byte(text)), std.Match([]byte(text))},
		{"FindString", lazy.FindString(text), std.FindString(text)},
		{"FindStringIndex", lazy.FindStringIndex(text), std.FindStringIndex(text)},
		{"FindStringSubmatch", lazy.FindStringSubmatch(text), std.FindStringSubmatch(text)},
		{"FindStringSubmatchIndex", lazy.FindStringSubmatchIndex(text), std.FindStringSubmatchIndex(text)},
		{"FindSubmatch", lazy.FindSubmatch([]byte(text)), std.FindSubmatch([]byte(text))},
		{"FindAllString", lazy.FindAllString(text, -1), std.FindAllString(text, -1)},
		{"FindAllStringIndex", lazy.FindAllStringIndex(text, -1), std.FindAllStringIndex(text, -1)},
		{"FindAllStringSubmatch", lazy.FindAllStringSubmatch(text, -1), std.FindAllStringSubmatch(text, -1)},
		{"FindAllStringSubmatchIndex", lazy.FindAllStringSubmatchIndex(text, -1), std.FindAllStringSubmatchIndex(text, -1)},
		{"FindAllSubmatch", lazy.FindAllSubmatch([]byte(text), -1), std.FindAllSubmatch([]byte(text), -1)},
		{"FindAllSubmatchIndex", lazy.FindAllSubmatchIndex([]byte(text), -1), std.FindAllSubmatchIndex([]byte(text), -1)},
		{"ReplaceAllString", lazy.ReplaceAllString(text, "<$2>"), std.ReplaceAllString(text, "<$2>")},
		{"ReplaceAllLiteralString", lazy.ReplaceAllLiteralString(text, "$2"), std.ReplaceAllLiteralString(text, "$2")},
		{"ReplaceAllStringFunc", lazy.ReplaceAllStringFunc(text, func(s string) string { return "[" + s + "]" }),
			std.ReplaceAllStringFunc(text, func(s string) string { return "[" + s + "]" })},
		{"Split", lazy.Split(text, -1), std.Split(text, -1)},
		{"SubexpNames", lazy.SubexpNames(), std.SubexpNames()},
		{"String", lazy.String(), std.String()},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s = %#v, want %#v", c.name, c.got, c.want)
		}
	}
}

func TestCompilesOnceConcurrently(t *testing.T) {
	lazy := New(`a+b`)
	var wg sync.WaitGroup
	seen := make([]*regexp.Regexp, 8)
	for i := range seen {
		wg.Add(1)
		go func() { defer wg.Done(); seen[i] = lazy.Regexp() }()
	}
	wg.Wait()
	for _, rx := range seen {
		if rx != seen[0] || rx == nil {
			t.Fatal("goroutines saw different or nil compiled expressions")
		}
	}
}

func TestNewIsLazyAndPanicsOnFirstUse(t *testing.T) {
	r := New(`(`)
	if r.rx != nil {
		t.Fatal("New compiled at once")
	}
	defer func() {
		if recover() == nil {
			t.Error("an invalid expression did not panic on first use")
		}
	}()
	r.MatchString("x")
}
