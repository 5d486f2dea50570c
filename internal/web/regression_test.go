package web_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web"
)

// A page that failed on its own (404) before web.extract_timeout fired keeps its reason.
func TestFinishedErrorKeepsReasonAfterTimeout(t *testing.T) {
	h := newHarness(t)
	nf := h.serve("nf.test", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", 404) })
	slow := h.serve("slow.test", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	h.cfg.Web.ExtractTimeout = 700 * time.Millisecond
	h.open()
	resp := h.extract(nf.URL("/"), slow.URL("/"))
	t.Logf("row0 reason=%s err=%s", resp.Results[0].Reason, *resp.Results[0].Error)
	if resp.Results[0].Reason != reason.HTTPStatus {
		t.Errorf("404 row reported as %s, want http_status", resp.Results[0].Reason)
	}
}

// The same when the call is interrupted.
func TestFinishedErrorKeepsReasonAfterInterrupt(t *testing.T) {
	h := newHarness(t)
	nf := h.serve("nf.test", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "nope", 404) })
	slowReached := make(chan struct{}, 1)
	slow := h.serve("slow.test", func(w http.ResponseWriter, r *http.Request) {
		select {
		case slowReached <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	h.cfg.Web.ExtractTimeout = 0
	h.open()
	ctx, cancel := context.WithCancel(context.Background())
	rowDone := make(chan struct{}, 1)
	progress := func(done, total int) {
		if done >= 1 {
			select {
			case rowDone <- struct{}{}:
			default:
			}
		}
	}
	go func() { // cancel once the 404 row is finished and the slow one in flight
		deadline := time.Now().Add(10 * time.Second)
		for _, c := range []chan struct{}{slowReached, rowDone} {
			select {
			case <-c:
			case <-time.After(time.Until(deadline)):
			}
		}
		cancel()
	}()
	resp := h.svc.Extract(ctx, web.ExtractRequest{URLs: []any{nf.URL("/"), slow.URL("/")}, Progress: progress})
	t.Logf("row0 reason=%s", resp.Results[0].Reason)
	if resp.Results[0].Reason != reason.HTTPStatus {
		t.Errorf("404 row reported as %s, want http_status", resp.Results[0].Reason)
	}
}

// A cache hit re-checks the final URL (after redirects) against the blocklist.
func TestCacheHitRechecksFinalURLPolicy(t *testing.T) {
	h := newHarness(t)
	dst := h.serve("dest.test", pageHandler(html("Dest", article(5, "harbour"))))
	src := h.serve("src.test", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, dst.URL("/page"), http.StatusFound)
	})
	h.open()
	r1 := h.extract(src.URL("/go")).Results[0]
	if !r1.OK() {
		t.Fatalf("first: %+v", r1)
	}
	t.Logf("first: final=%s cached=%v", r1.Meta.FinalURL, r1.Meta.Cached)
	h.cfg.Security.WebsiteBlocklist.Enabled = true
	h.cfg.Security.WebsiteBlocklist.Domains = []string{"dest.test"}
	h.open()
	r2 := h.extract(src.URL("/go")).Results[0]
	if r2.Reason != reason.PolicyBlocked || r2.BlockedByPolicy == nil || r2.BlockedByPolicy.Rule != "dest.test" {
		t.Errorf("blocked final host served from cache: %+v", r2)
	}
	// and fresh fetch (no cache) for comparison
	h.cfg.Web.CacheEnabled = false
	h.open()
	r3 := h.extract(src.URL("/go")).Results[0]
	if r3.Reason != reason.PolicyBlocked {
		t.Errorf("without cache: %+v", r3)
	}
}

// A public URL that redirects to a host reachable only through
// allow_private_urls is never cached, so turning the toggle off is effective.
func TestRedirectToPrivateAllowedHostNeverCached(t *testing.T) {
	h := newHarness(t)
	// intranet: a second loopback server NOT in the allowance (only reachable via allow_private_urls)
	h2 := newHarness(t)
	intra := h2.serve("intranet.corp", pageHandler(html("Intranet payroll", article(5, "payroll"))))
	h.res.set("intranet.corp", "127.0.0.1")
	pub := h.serve("public.test", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, intra.URL("/payroll"), http.StatusFound)
	})
	h.cfg.Security.AllowPrivateURLs = true
	h.open()
	r1 := h.extract(pub.URL("/x")).Results[0]
	if !r1.OK() {
		t.Fatalf("first: %+v", r1)
	}
	h.cfg.Security.AllowPrivateURLs = false
	h.open()
	r2 := h.extract(pub.URL("/x")).Results[0]
	if r2.OK() || r2.Reason != reason.SSRFPrivate {
		t.Errorf("private-host content served with allow_private_urls=false: %+v", r2)
	}
	if intra.hits.Load() != 1 {
		t.Errorf("intranet hits = %d, want 1 (the second call is refused at the redirect)", intra.hits.Load())
	}
}
