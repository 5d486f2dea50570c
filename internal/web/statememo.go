package web

import (
	"encoding/json"
	"errors"
	"github.com/gatehouse-dev/gatehouse/internal/strictjson"
	"time"
	"unicode/utf8"

	"github.com/gatehouse-dev/gatehouse/internal/cache"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

// newMemo is the search memo of env: in-process (the embedded default), or
// shared by replicas through env.State (GATEHOUSE_REDIS_URL), whose values
// cross Redis as searchCodec's JSON.
func newMemo(ttl time.Duration, env Env) *cache.Memo {
	if env.State == nil {
		return cache.NewMemo(ttl, env.Now)
	}
	return cache.NewSharedMemo(ttl, env.Now, env.State, searchCodec)
}

// searchCodec encodes a memoised *provider.SearchOutcome. Decode treats
// its input as untrusted (it comes from Redis): exactly one JSON object of
// SearchOutcome's fields, rows with valid UTF-8 and positions ≥ 0, at most
// 100 rows; anything else is a state_corrupt *reason.Error.
var searchCodec = cache.MemoCodec{
	Encode: func(v any) ([]byte, error) {
		o, ok := v.(*provider.SearchOutcome)
		if !ok || o == nil {
			return nil, errors.New("web: memo value is not a search outcome")
		}
		return json.Marshal(o)
	},
	Decode: decodeSearchOutcome,
}

func decodeSearchOutcome(b []byte) (any, error) {
	bad := func(what string) error {
		return reason.New(reason.StateCorrupt, "",
			"The shared state holds a search memo result Gatehouse did not write ("+what+"); it was not used. Delete the gatehouse:memo:* key in Redis or wait for its TTL.")
	}
	var o provider.SearchOutcome
	if err := strictjson.Decode(b, &o); err != nil {
		return nil, bad("not the expected JSON object")
	}
	if len(o.Rows) > 100 {
		return nil, bad("too many rows")
	}
	for _, r := range o.Rows {
		if r.Position < 0 || !utf8.ValidString(r.Title) || !utf8.ValidString(r.URL) || !utf8.ValidString(r.Description) {
			return nil, bad("a malformed row")
		}
	}
	if o.Rescued() {
		return nil, bad("a rescued outcome, which is never memoised")
	}
	return &o, nil
}
