package web_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// TestRedirectChainThroughBlockedHost (issue 6 item 1): through the direct
// backend, a chain allowed → blocked → allowed and a chain ending on the
// blocked host are refused at the hop. The blocklisted server (and any
// server after it) receives zero requests; the row keeps the caller's URL,
// names the hop and carries blocked_by_policy.
func TestRedirectChainThroughBlockedHost(t *testing.T) {
	for _, endsBlocked := range []bool{false, true} {
		name := "allowed-blocked-allowed"
		if endsBlocked {
			name = "ends-on-blocked"
		}
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			last := h.serve("last.test", pageHandler(html("Last", article(5, "harbour"))))
			blocked := h.serve("tracker.blocked.test", func(w http.ResponseWriter, r *http.Request) {
				if endsBlocked {
					pageHandler(html("Blocked", article(5, "harbour")))(w, r)
					return
				}
				http.Redirect(w, r, last.URL("/final"), http.StatusFound)
			})
			first := h.serve("first.test", func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, blocked.URL("/hop?x=1"), http.StatusMovedPermanently)
			})
			h.cfg.Security.WebsiteBlocklist.Enabled = true
			h.cfg.Security.WebsiteBlocklist.Domains = []string{"blocked.test"}
			h.open()
			caller := first.URL("/start")
			r := h.extract(caller).Results[0]
			if r.OK() || r.Reason != reason.PolicyBlocked {
				t.Fatalf("row = %+v, want policy_blocked", r)
			}
			if r.URL != caller {
				t.Errorf("row URL %q, want the caller's %q", r.URL, caller)
			}
			if r.BlockedByPolicy == nil || r.BlockedByPolicy.Host != "tracker.blocked.test" || r.BlockedByPolicy.Rule != "blocked.test" {
				t.Errorf("blocked_by_policy = %+v", r.BlockedByPolicy)
			}
			for _, s := range []string{"redirect hop 1", blocked.URL("/hop?x=1"), "Blocked by website policy"} {
				if !strings.Contains(*r.Error, s) {
					t.Errorf("error %q lacks %q", *r.Error, s)
				}
			}
			if n := blocked.hits.Load(); n != 0 {
				t.Fatalf("blocklisted server received %d requests, want 0", n)
			}
			if n := last.hits.Load(); n != 0 {
				t.Fatalf("server after the blocked hop received %d requests, want 0", n)
			}
			if n := first.hits.Load(); n != 1 {
				t.Fatalf("first server received %d requests, want 1", n)
			}
		})
	}
}

// TestRedirectHopWithSecretKeepsMessage: a hop whose Location carries a key
// (in a credential-named parameter) is refused as secret_in_url; the row's
// message keeps its words and loses the key (Redact used to turn the whole
// message into "Blocked://[REDACTED]").
func TestRedirectHopWithSecretKeepsMessage(t *testing.T) {
	const key = "sk-abcdefghijklmnopqrstuvwxyz123456"
	h := newHarness(t)
	next := h.serve("next.test", pageHandler(html("Next", article(5, "harbour"))))
	first := h.serve("first.test", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, next.URL("/cb?api_key="+key), http.StatusFound)
	})
	h.open()
	r := h.extract(first.URL("/start")).Results[0]
	if r.OK() {
		t.Fatalf("row = %+v, want a refusal", r)
	}
	msg := *r.Error
	if strings.Contains(msg, key) || strings.Contains(msg, "abcdefghijklmnop") {
		t.Fatalf("error carries the key: %q", msg)
	}
	for _, s := range []string{"Blocked: ", "redirect hop 1", "api_key=[REDACTED]", "was refused"} {
		if !strings.Contains(msg, s) {
			t.Errorf("error %q lacks %q", msg, s)
		}
	}
	if strings.Contains(msg, "[REDACTED][REDACTED]") {
		t.Errorf("error %q has a double marker", msg)
	}
	if n := next.hits.Load(); n != 0 {
		t.Fatalf("the hop's target received %d requests, want 0", n)
	}
}
