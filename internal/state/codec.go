package state

import (
	"bytes"
	"encoding/json"
	"github.com/gatehouse-dev/gatehouse/internal/strictjson"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/truncate"
)

// The value encodings. Each starts with a tag and a version so a value of
// another kind (or another Gatehouse version) under a key is refused, and
// each carries a length or a self-delimiting JSON body so a truncated value
// is refused too:
//
//	extract-cache entry  "gh1 " <fetched_at, unix ms> " " <JSON entryJSON>
//	stored page          "ghp1 " <byte length of text> " " <store name> "\n" <text>
//	memo result          "ghm1 " <byte length of payload> "\n" <payload: JSON>
//	memo lock            "ghl1 " <32 lowercase hex>
const (
	entryTag = "gh1 "
	pageTag  = "ghp1 "
	memoTag  = "ghm1 "
	lockTag  = "ghl1 "
	// maxValueBytes bounds every value decoded (a capped page of
	// truncate.StoreCap chars of up to 4 bytes, plus framing).
	maxValueBytes = 4*truncate.StoreCap + 1<<20
)

type entryJSON struct {
	URL      string          `json:"url"`
	FinalURL string          `json:"final_url"`
	Title    string          `json:"title"`
	Content  string          `json:"content"`
	Extra    json.RawMessage `json:"extra,omitempty"`
}

// EncodeEntry is the stored form of a cache entry.
func EncodeEntry(e cache.Entry) ([]byte, error) {
	body, err := json.Marshal(entryJSON{URL: e.URL, FinalURL: e.FinalURL, Title: e.Title, Content: e.Content, Extra: e.Extra})
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(body)+24)
	out = append(out, entryTag...)
	out = strconv.AppendInt(out, e.FetchedAt.UnixMilli(), 10)
	out = append(out, ' ')
	return append(out, body...), nil
}

// DecodeEntry decodes a stored cache entry read under key. Errors are
// state_corrupt *reason.Error values: wrong tag, a fetched_at that is not
// a positive decimal of at most 15 digits, a body that is not exactly one
// JSON object of the known fields (truncated, extra fields, wrong types),
// an empty content, invalid UTF-8, or Extra that is not a JSON object.
func DecodeEntry(key string, b []byte) (cache.Entry, error) {
	if len(b) > maxValueBytes {
		return cache.Entry{}, Corrupt(key, "too long")
	}
	rest, ok := bytes.CutPrefix(b, []byte(entryTag))
	if !ok {
		return cache.Entry{}, Corrupt(key, "not an extract-cache entry")
	}
	num, body, ok := bytes.Cut(rest, []byte(" "))
	ms, ok2 := parseDecimal(num, 15)
	if !ok || !ok2 || ms <= 0 {
		return cache.Entry{}, Corrupt(key, "no fetch time")
	}
	var j entryJSON
	if err := strictjson.Decode(body, &j); err != nil {
		return cache.Entry{}, Corrupt(key, "the entry body is not the expected JSON object")
	}
	if j.Content == "" || !utf8.ValidString(j.Content) || !utf8.ValidString(j.Title) || !utf8.ValidString(j.URL) || !utf8.ValidString(j.FinalURL) {
		return cache.Entry{}, Corrupt(key, "empty content or invalid UTF-8")
	}
	if len(j.Extra) > 0 && (j.Extra[0] != '{' || !json.Valid(j.Extra)) {
		return cache.Entry{}, Corrupt(key, "the entry's extra is not a JSON object")
	}
	return cache.Entry{URL: j.URL, FinalURL: j.FinalURL, Title: j.Title, Content: j.Content,
		FetchedAt: time.UnixMilli(ms), Extra: []byte(j.Extra)}, nil
}

// EncodePage is the stored form of a page named name.
func EncodePage(name, text string) []byte {
	var b strings.Builder
	b.Grow(len(text) + len(name) + 24)
	b.WriteString(pageTag)
	b.WriteString(strconv.Itoa(len(text)))
	b.WriteByte(' ')
	b.WriteString(name)
	b.WriteByte('\n')
	b.WriteString(text)
	return []byte(b.String())
}

// DecodePage decodes a stored page read under key for the store name want.
// The name inside the value must equal want and be a store name
// (truncate.IsStoreName): a value naming another file, a path, or a name
// outside the store is refused, so what Redis holds can never make web_read
// answer for a name it was not asked. Errors are state_corrupt: wrong tag,
// a bad or mismatched length (a truncated value), the wrong name.
func DecodePage(key, want string, b []byte) (string, error) {
	if len(b) > maxValueBytes {
		return "", Corrupt(key, "too long")
	}
	rest, ok := bytes.CutPrefix(b, []byte(pageTag))
	if !ok {
		return "", Corrupt(key, "not a stored page")
	}
	num, rest, ok := bytes.Cut(rest, []byte(" "))
	n, ok2 := parseDecimal(num, 9)
	if !ok || !ok2 {
		return "", Corrupt(key, "no length")
	}
	name, text, ok := bytes.Cut(rest, []byte("\n"))
	if !ok {
		return "", Corrupt(key, "no name line")
	}
	if string(name) != want || !truncate.IsStoreName(string(name)) {
		return "", Corrupt(key, "the value names another file than its key")
	}
	if int64(len(text)) != n {
		return "", Corrupt(key, "truncated or padded (length mismatch)")
	}
	return string(text), nil
}

// EncodeMemo is the stored form of a memo payload (JSON).
func EncodeMemo(payload []byte) []byte {
	out := make([]byte, 0, len(payload)+16)
	out = append(out, memoTag...)
	out = strconv.AppendInt(out, int64(len(payload)), 10)
	out = append(out, '\n')
	return append(out, payload...)
}

// DecodeMemo decodes a stored memo result read under key and returns its
// payload, which is valid JSON. Errors are state_corrupt: wrong tag, a bad
// or mismatched length, a payload that is not JSON.
func DecodeMemo(key string, b []byte) ([]byte, error) {
	if len(b) > maxValueBytes {
		return nil, Corrupt(key, "too long")
	}
	rest, ok := bytes.CutPrefix(b, []byte(memoTag))
	if !ok {
		return nil, Corrupt(key, "not a memo result")
	}
	num, payload, ok := bytes.Cut(rest, []byte("\n"))
	n, ok2 := parseDecimal(num, 9)
	if !ok || !ok2 || int64(len(payload)) != n {
		return nil, Corrupt(key, "truncated or padded (length mismatch)")
	}
	if !json.Valid(payload) {
		return nil, Corrupt(key, "the payload is not JSON")
	}
	return payload, nil
}

// lockValue is the stored form of a memo lock held with token (32 hex).
func lockValue(token string) string { return lockTag + token }

// DecodeLock checks a memo lock value read under key: "ghl1 " and 32
// lowercase hex digits. Errors are state_corrupt.
func DecodeLock(key string, b []byte) (string, error) {
	rest, ok := bytes.CutPrefix(b, []byte(lockTag))
	if !ok || len(rest) != 32 {
		return "", Corrupt(key, "not a memo lock")
	}
	for _, c := range rest {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", Corrupt(key, "not a memo lock")
		}
	}
	return string(rest), nil
}

// parseDecimal parses 1..maxDigits ASCII digits in canonical form (no
// sign, no spaces, no leading zero but in "0"), so each number has one
// encoding.
func parseDecimal(b []byte, maxDigits int) (int64, bool) {
	if len(b) == 0 || len(b) > maxDigits || (len(b) > 1 && b[0] == '0') {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}
