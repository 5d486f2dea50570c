package config

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// ClampCharLimit returns the effective extraction budget in chars for v, a
// config or per-call value (spec §A10.1): nil, a bool or anything non-numeric
// gives DefaultExtractCharLimit (15000); an integer, or a string holding one
// ("8000"), is clamped to [MinExtractCharLimit, MaxExtractCharLimit]
// ([2000, 500000]); a float is truncated toward zero first (7999.9 → 7999,
// as Python's int()); NaN and ±Inf give the default. A string holding a
// float ("7999.9") is non-numeric here, as it is for int(). Negative values
// clamp to the floor.
func ClampCharLimit(v any) int {
	n, ok := intValue(v, false)
	if !ok {
		return DefaultExtractCharLimit
	}
	return int(clampInt64(n, MinExtractCharLimit, MaxExtractCharLimit))
}

// TTLFromMinutes returns the cache lifetime for v, the web.cache_ttl_minutes
// value (spec §A9.1): nil or unparseable gives 20 min; a number (or numeric
// string) is truncated to whole minutes and clamped to [1, 1440] minutes, so 0
// and 0.5 give 1 min and 99999 gives 24 h.
func TTLFromMinutes(v any) time.Duration {
	return time.Duration(cacheTTLMinutes(v)) * time.Minute
}

// cacheTTLMinutes is TTLFromMinutes in whole minutes.
func cacheTTLMinutes(v any) int {
	n, ok := intValue(v, true)
	if !ok {
		return DefaultCacheTTLMinutes
	}
	return int(clampInt64(n, MinCacheTTLMinutes, MaxCacheTTLMinutes))
}

// ExtractTimeout returns the per-dispatch extraction cap for v, the
// web.extract_timeout value in seconds (spec §A3): nil or unparseable gives
// 120 s; 0 or a negative number gives 0, meaning no cap; a positive number
// (or numeric string) of seconds, fractions allowed, is returned as is
// (saturating at the largest Duration).
func ExtractTimeout(v any) time.Duration {
	f, ok := floatValue(v, true)
	if !ok {
		return DefaultExtractTimeout
	}
	if f <= 0 {
		return 0
	}
	return secondsToDuration(f)
}

// secondsToDuration converts positive seconds, saturating instead of
// overflowing.
func secondsToDuration(f float64) time.Duration {
	if f >= float64(math.MaxInt64)/float64(time.Second) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(f * float64(time.Second))
}

// durationSeconds renders d as seconds for YAML output: an integer when whole,
// else a float.
func durationSeconds(d time.Duration) any {
	if d%time.Second == 0 {
		return int64(d / time.Second)
	}
	return d.Seconds()
}

func clampInt64(n, lo, hi int64) int64 {
	if n < lo {
		return lo
	}
	if n > hi {
		return hi
	}
	return n
}

// intValue converts a decoded YAML (or JSON, or Go) value to an integer the
// way Python's int() does for config values: integers as is (saturating at
// ±MaxInt64), floats truncated toward zero (NaN/Inf rejected), numeric strings
// parsed; when floatStrings is set a string holding a float ("2.5") is also
// accepted (int(float(s))). Bools and everything else are rejected.
func intValue(v any, floatStrings bool) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return satU64(uint64(x)), true
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return satU64(x), true
	case float32:
		return truncFloat(float64(x))
	case float64:
		return truncFloat(x)
	case json.Number:
		return intFromString(string(x), true)
	case string:
		return intFromString(x, floatStrings)
	}
	return 0, false
}

func satU64(u uint64) int64 {
	if u > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(u)
}

func truncFloat(f float64) (int64, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	f = math.Trunc(f)
	if f >= math.MaxInt64 {
		return math.MaxInt64, true
	}
	if f <= math.MinInt64 {
		return math.MinInt64, true
	}
	return int64(f), true
}

// intFromString parses an integer string as Python's int() does (surrounding
// whitespace, sign and "_" digit separators allowed), saturating on overflow.
func intFromString(s string, floatStrings bool) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	clean := s
	if strings.Contains(s, "_") {
		if strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") || strings.Contains(s, "__") {
			return 0, false
		}
		clean = strings.ReplaceAll(s, "_", "")
	}
	n, err := strconv.ParseInt(clean, 10, 64)
	if err == nil {
		return n, true
	}
	if errors.Is(err, strconv.ErrRange) {
		if strings.HasPrefix(clean, "-") {
			return math.MinInt64, true
		}
		return math.MaxInt64, true
	}
	if floatStrings {
		if f, ok := floatFromString(s); ok {
			return truncFloat(f)
		}
	}
	return 0, false
}

// floatValue converts a decoded value to a float: numbers as is (NaN
// rejected), numeric strings parsed when strings is set. Bools are rejected.
func floatValue(v any, strs bool) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case string:
		if !strs {
			return 0, false
		}
		var ok bool
		if f, ok = floatFromString(x); !ok {
			return 0, false
		}
	case json.Number:
		var ok bool
		if f, ok = floatFromString(string(x)); !ok {
			return 0, false
		}
	default:
		n, ok := intValue(v, false)
		if !ok {
			return 0, false
		}
		f = float64(n)
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

func floatFromString(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "xXpP") { // no hex floats
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	if math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// boolValue is the strict truthy parser of spec §A6.5: a YAML bool; the
// integers 0 and 1; the strings true/yes/on/1 and false/no/off/0/""
// (case-insensitive, trimmed). Anything else is rejected, so the string
// "false" never counts as on.
func boolValue(v any) (bool, bool) {
	switch x := v.(type) {
	case bool:
		return x, true
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "1":
			return true, true
		case "false", "no", "off", "0", "":
			return false, true
		}
		return false, false
	}
	if n, ok := intValue(v, false); ok {
		if _, isFloat := v.(float64); isFloat {
			return false, false
		}
		switch n {
		case 0:
			return false, true
		case 1:
			return true, true
		}
	}
	return false, false
}
