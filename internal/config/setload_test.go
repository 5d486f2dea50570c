package config

import (
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// setCandidates are values tried for every key by TestSetAcceptsOnlyWhatLoadKeeps:
// every YAML type, out-of-range numbers, enum words in other cases, and
// YAML syntax that is not a scalar.
var setCandidates = []string{
	"true", "yes", "0", "-1", "30", "2.5", "99999999999", "1e400", "abc", "", "[a, b]", "{a: 1}",
	"'30'", "null", ".inf", ".nan", "auto", "AUTO", "never", "AUTO_DISMISS", "free", "[10.0.0.0/8]", "a: b", "!!str 5",
}

// TestSetAcceptsOnlyWhatLoadKeeps: config set validates against the same
// schema as the loader (issue 6 item 6), for every key in the key table and
// a wide set of values: whatever Set accepts loads without a warning and
// reads back through Get as the value Load keeps; whatever Set refuses
// leaves the file untouched and says what the key expects.
func TestSetAcceptsOnlyWhatLoadKeeps(t *testing.T) {
	var accepted atomic.Int64
	t.Run("keys", func(t *testing.T) {
		for _, key := range Keys() {
			t.Run(key, func(t *testing.T) {
				t.Parallel() // fsync-bound: overlap the writes
				for _, v := range setCandidates {
					checkSetLoad(t, key, v, &accepted)
				}
			})
		}
	})
	if n := accepted.Load(); n < int64(len(Keys())) {
		t.Errorf("only %d of %d×%d sets accepted: the candidates miss valid values", n, len(Keys()), len(setCandidates))
	}
}

func checkSetLoad(t *testing.T, key, v string, accepted *atomic.Int64) {
	home := t.TempDir()
	err := Set(home, key, v)
	if err != nil {
		if _, serr := os.Stat(Path(home)); serr == nil {
			t.Errorf("Set(%q, %q) failed (%v) but wrote config.yaml", key, v, err)
		}
		if !strings.Contains(err.Error(), key) {
			t.Errorf("Set(%q, %q) error does not name the key: %v", key, v, err)
		}
		return
	}
	accepted.Add(1)
	_, warns, lerr := Load(home)
	if lerr != nil || len(warns) > 0 {
		b, _ := os.ReadFile(Path(home))
		t.Errorf("Set(%q, %q) accepted, but Load: err=%v warnings=%v\n%s", key, v, lerr, warns, b)
		return
	}
	got, gerr := Get(home, key)
	if gerr != nil {
		t.Errorf("Set(%q, %q) accepted, but Get: %v", key, v, gerr)
		return
	}
	// What Get shows sets again (a fixed point), unless it is a block of
	// several lines.
	if !strings.Contains(got, "\n") {
		if err := Set(t.TempDir(), key, got); err != nil {
			t.Errorf("Get(%q) = %q after Set(%q) does not set again: %v", key, got, v, err)
		}
	}
}

// TestSetEnumValues: enum keys (browser.dialog_policy, web.extract_render,
// browser.engine) refuse unknown words with the allowed ones in the message,
// once, and write the canonical lower-case word.
func TestSetEnumValues(t *testing.T) {
	for _, tt := range []struct{ key, bad, good, want string }{
		{"browser.dialog_policy", "ignore", "AUTO_DISMISS", "auto_dismiss"},
		{"web.extract_render", "sometimes", " Never ", "never"},
	} {
		home := t.TempDir()
		err := Set(home, tt.key, tt.bad)
		if err == nil || !strings.Contains(err.Error(), "want one of") || strings.Count(err.Error(), "one of") != 1 {
			t.Errorf("Set(%q, %q) = %v, want one 'want one of …' refusal", tt.key, tt.bad, err)
		}
		if err := Set(home, tt.key, tt.good); err != nil {
			t.Fatalf("Set(%q, %q): %v", tt.key, tt.good, err)
		}
		b, _ := os.ReadFile(Path(home))
		leaf := tt.key[strings.LastIndexByte(tt.key, '.')+1:]
		if !strings.Contains(string(b), leaf+": "+tt.want+"\n") {
			t.Errorf("Set(%q, %q) wrote\n%s\nwant %s: %s", tt.key, tt.good, b, leaf, tt.want)
		}
	}
}

// FuzzSetValue: for any key of the key table and any value text, a value
// Set accepts is one Load keeps without a warning (the one-schema rule of
// TestSetAcceptsOnlyWhatLoadKeeps, beyond its fixed candidates).
func FuzzSetValue(f *testing.F) {
	for i, v := range setCandidates {
		f.Add(uint16(i*7), v)
	}
	keys := Keys()
	f.Fuzz(func(t *testing.T, k uint16, v string) {
		key := keys[int(k)%len(keys)]
		home := t.TempDir()
		if err := Set(home, key, v); err != nil {
			if _, serr := os.Stat(Path(home)); serr == nil {
				t.Fatalf("Set(%q, %q) failed (%v) but wrote config.yaml", key, v, err)
			}
			return
		}
		if _, warns, err := Load(home); err != nil || len(warns) > 0 {
			b, _ := os.ReadFile(Path(home))
			t.Fatalf("Set(%q, %q) accepted, but Load: err=%v warnings=%v\n%s", key, v, err, warns, b)
		}
	})
}
