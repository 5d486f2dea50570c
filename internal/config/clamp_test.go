package config

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

func TestClampCharLimitVectors(t *testing.T) {
	for _, v := range vectors.Area(t, "extract.char_limit_clamp", 11) {
		var in struct {
			CharLimit any `json:"char_limit"`
		}
		var want struct {
			Effective int `json:"effective"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(fmt.Sprintf("%s/%v", v.Note, in.CharLimit), func(t *testing.T) {
			if got := ClampCharLimit(in.CharLimit); got != want.Effective {
				t.Errorf("ClampCharLimit(%#v) = %d, want %d", in.CharLimit, got, want.Effective)
			}
		})
	}
}

// Go-typed inputs and edges the vectors do not cover.
func TestClampCharLimitGoTypes(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want int
	}{
		{name: "int", in: 40000, want: 40000},
		{name: "int64 floor", in: int64(1), want: 2000},
		{name: "uint64 huge", in: uint64(math.MaxUint64), want: 500000},
		{name: "float32", in: float32(2500.7), want: 2500},
		{name: "bool is not numeric", in: true, want: 15000},
		{name: "NaN", in: math.NaN(), want: 15000},
		{name: "+Inf", in: math.Inf(1), want: 15000},
		{name: "string with spaces", in: " 9000 ", want: 9000},
		{name: "underscore digits as int()", in: "10_000", want: 10000},
		{name: "float string is not int()", in: "7999.9", want: 15000},
		{name: "huge numeric string saturates", in: "99999999999999999999999", want: 500000},
		{name: "huge negative string saturates", in: "-99999999999999999999999", want: 2000},
		{name: "empty string", in: "", want: 15000},
		{name: "list", in: []any{1}, want: 15000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClampCharLimit(tt.in); got != tt.want {
				t.Errorf("ClampCharLimit(%#v) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestTTLFromMinutesVectors(t *testing.T) {
	for _, v := range vectors.Area(t, "cache.ttl_seconds", 6) {
		var in struct {
			Minutes any `json:"cache_ttl_minutes"`
		}
		var want struct {
			TTLSeconds float64 `json:"ttl_seconds"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(fmt.Sprintf("%s/%v", v.Note, in.Minutes), func(t *testing.T) {
			got := TTLFromMinutes(in.Minutes)
			if got != time.Duration(want.TTLSeconds*float64(time.Second)) {
				t.Errorf("TTLFromMinutes(%#v) = %v, want %vs", in.Minutes, got, want.TTLSeconds)
			}
		})
	}
}

func TestExtractTimeoutVectors(t *testing.T) {
	for _, v := range vectors.Area(t, "extract.timeout", 3) {
		var in struct {
			Timeout any `json:"web.extract_timeout"`
		}
		var want struct {
			TimeoutS float64 `json:"timeout_s"`
			Capped   *bool   `json:"capped"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		t.Run(fmt.Sprintf("%s/%v", v.Note, in.Timeout), func(t *testing.T) {
			got := ExtractTimeout(in.Timeout)
			if got != time.Duration(want.TimeoutS*float64(time.Second)) {
				t.Errorf("ExtractTimeout(%#v) = %v, want %vs", in.Timeout, got, want.TimeoutS)
			}
			if want.Capped != nil && *want.Capped != (got > 0) {
				t.Errorf("ExtractTimeout(%#v) capped = %t, want %t", in.Timeout, got > 0, *want.Capped)
			}
		})
	}
}

func TestExtractTimeoutEdges(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want time.Duration
	}{
		{name: "negative disables (issue text)", in: -5, want: 0},
		{name: "fractional seconds", in: 0.5, want: 500 * time.Millisecond},
		{name: "numeric string", in: "30", want: 30 * time.Second},
		{name: "bool is unparseable", in: false, want: DefaultExtractTimeout},
		{name: "huge saturates", in: 1e300, want: time.Duration(math.MaxInt64)},
		{name: "+Inf saturates", in: math.Inf(1), want: time.Duration(math.MaxInt64)},
		{name: "-Inf disables", in: math.Inf(-1), want: 0},
		{name: "NaN", in: math.NaN(), want: DefaultExtractTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ExtractTimeout(tt.in); got != tt.want {
				t.Errorf("ExtractTimeout(%#v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestTTLFromMinutesEdges(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want time.Duration
	}{
		{name: "float truncated to whole minutes", in: 2.9, want: 2 * time.Minute},
		{name: "numeric string", in: "45", want: 45 * time.Minute},
		{name: "float string", in: "2.5", want: 2 * time.Minute},
		{name: "negative floors", in: -3, want: time.Minute},
		{name: "bool is garbage", in: true, want: 20 * time.Minute},
		{name: "at ceiling", in: 1440, want: 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TTLFromMinutes(tt.in); got != tt.want {
				t.Errorf("TTLFromMinutes(%#v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestBoolValue(t *testing.T) {
	tests := []struct {
		in     any
		want   bool
		wantOK bool
	}{
		{in: true, want: true, wantOK: true},
		{in: "false", want: false, wantOK: true}, // strict parser: the string "false" stays off (spec §A6.5)
		{in: "Yes", want: true, wantOK: true},
		{in: "off", want: false, wantOK: true},
		{in: uint64(1), want: true, wantOK: true},
		{in: int64(0), want: false, wantOK: true},
		{in: int64(2), wantOK: false},
		{in: 1.0, wantOK: false},
		{in: "maybe", wantOK: false},
		{in: []any{}, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%#v", tt.in), func(t *testing.T) {
			got, ok := boolValue(tt.in)
			if ok != tt.wantOK || (ok && got != tt.want) {
				t.Errorf("boolValue(%#v) = %t, %t; want %t, %t", tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func ExampleClampCharLimit() {
	fmt.Println(ClampCharLimit(nil), ClampCharLimit(100), ClampCharLimit("8000"), ClampCharLimit(7999.9), ClampCharLimit(2000000))
	// Output: 15000 2000 8000 7999 500000
}

func ExampleExtractTimeout() {
	fmt.Println(ExtractTimeout(nil), ExtractTimeout(0), ExtractTimeout("abc"), ExtractTimeout(-1))
	// Output: 2m0s 0s 2m0s 0s
}
