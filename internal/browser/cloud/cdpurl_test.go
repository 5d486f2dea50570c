package cloud

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/vectors"
)

func TestVectorCDPOverrideResolution(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.cdp_override_resolution", 7) {
		var in struct {
			CDPURL string `json:"cdp_url"`
		}
		var want struct {
			Passthrough  *bool   `json:"passthrough"`
			DiscoveryURL *string `json:"discovery_url"`
			Resolved     *string `json:"resolved"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		disc, pass := DiscoveryURL(in.CDPURL)
		if want.Passthrough != nil && pass != *want.Passthrough {
			t.Errorf("%q: passthrough %v, want %v", in.CDPURL, pass, *want.Passthrough)
		}
		wd := ""
		if want.DiscoveryURL != nil {
			wd = *want.DiscoveryURL
		}
		if disc != wd {
			t.Errorf("%q: discovery %q, want %q", in.CDPURL, disc, wd)
		}
		if want.Resolved != nil {
			got, err := ResolveCDPURL(context.Background(), in.CDPURL, testClient())
			if err != nil || got != *want.Resolved {
				t.Errorf("%q: resolved %q (%v), want %q", in.CDPURL, got, err, *want.Resolved)
			}
		}
	}
}

func TestResolveCDPURLDiscoversAndFallsBack(t *testing.T) {
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		if r.URL.Path != "/json/version" {
			http.NotFound(w, r)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"Browser": "Chrome/1", "webSocketDebuggerUrl": "ws://" + r.Host + "/devtools/browser/abc"})
	}))
	defer srv.Close()
	host := srv.Listener.Addr().String()
	for _, raw := range []string{srv.URL, "ws://" + host, srv.URL + "/json/version"} {
		got, err := ResolveCDPURL(context.Background(), raw, testClient())
		if err != nil || got != "ws://"+host+"/devtools/browser/abc" || path != "/json/version" {
			t.Errorf("%s → %q (%v)", raw, got, err)
		}
	}
	// Passthrough and failure keep the raw value.
	if got, _ := ResolveCDPURL(context.Background(), "ws://"+host+"/devtools/browser/x", testClient()); got != "ws://"+host+"/devtools/browser/x" {
		t.Error(got)
	}
	srv.Close()
	if got, err := ResolveCDPURL(context.Background(), "http://"+host, testClient()); err == nil || got != "http://"+host {
		t.Errorf("failed discovery: %q %v", got, err)
	}
}

func TestVectorSessionExpiry(t *testing.T) {
	for _, v := range vectors.Area(t, "browser.session_expiry", 6) {
		var in struct {
			ExpiresAt any `json:"expires_at"`
		}
		var want struct {
			Epoch *float64 `json:"epoch_seconds"`
		}
		vectors.Decode(t, v.Input, &in)
		vectors.Decode(t, v.Expected, &want)
		got, ok := ParseExpiry(in.ExpiresAt)
		if ok != (want.Epoch != nil) || (ok && got != *want.Epoch) {
			t.Errorf("%v: %v %v, want %v", in.ExpiresAt, got, ok, want.Epoch)
		}
		if ok && (!Expired(got, ok, time.Unix(int64(got), 0)) || Expired(got, ok, time.Unix(int64(got)-1, 0))) {
			t.Errorf("%v: expired is now >= expiry", in.ExpiresAt)
		}
	}
}
