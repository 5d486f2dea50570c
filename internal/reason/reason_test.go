package reason

import (
	"errors"
	"fmt"
	"regexp"
	"testing"
)

func TestEveryCodeDocumentedAndSnakeCase(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	all := All()
	if len(all) < 20 {
		t.Fatalf("expected the full code table, got %d codes", len(all))
	}
	for _, c := range all {
		if !snake.MatchString(string(c)) {
			t.Errorf("code %q is not snake_case", c)
		}
		if c.Doc() == "" {
			t.Errorf("code %q has no doc", c)
		}
	}
	if Code("nope").Known() {
		t.Error("unknown code reported as known")
	}
}

func TestOfUnwraps(t *testing.T) {
	e := New(SSRFPrivate, GateSSRF, "blocked")
	wrapped := fmt.Errorf("fetch: %w", e)
	if got := Of(wrapped); got != SSRFPrivate {
		t.Fatalf("Of = %q", got)
	}
	if Of(errors.New("plain")) != "" {
		t.Fatal("plain error has a code")
	}
	if As(wrapped).Gate != GateSSRF {
		t.Fatal("gate lost")
	}
}
