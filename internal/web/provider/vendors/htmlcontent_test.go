package vendors

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gatehouse-dev/gatehouse/internal/content"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider"
)

func TestLooksLikeHTMLDocument(t *testing.T) {
	for in, want := range map[string]bool{
		"<!DOCTYPE html><p>x": true, "\ufeff  <html lang=en>": true, "<HEAD>": true, "<html>": true,
		"# Title\n\n<html>": false, "<htmlish>": false, "<p>fragment</p>": false, "": false, "text": false,
	} {
		if got := looksLikeHTMLDocument(in); got != want {
			t.Errorf("looksLikeHTMLDocument(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestKeenableHTMLConverted: another vendor whose text field holds a whole
// HTML document gets it converted exactly as a fetched page would be
// (content.Convert, hidden text dropped), and HTML with no text becomes
// empty_content rather than raw markup (breaker5 D18).
func TestKeenableHTMLConverted(t *testing.T) {
	doc := map[string]string{
		"/a": `<html><head><title>K</title></head><body><article><p>Keenable visible text of a reasonable length for the extractor to keep.</p><p style="display:none">K-INJECT</p></article></body></html>`,
		"/b": `<html><body><div></div></body></html>`,
	}
	f := newFake(t, "", func(w http.ResponseWriter, r *http.Request) {
		u := r.URL.Query().Get("url")
		writeJSON(w, map[string]any{"url": u, "content": doc[u[strings.LastIndex(u, "/"):]]})
	})
	k := NewKeenable(Options{Client: f.client(), Base: f.srv.URL}, true)
	// emit runs concurrently (provider.Extractor): one slot per URL.
	var pages [2]string
	var codes [2]reason.Code
	k.Extract(context.Background(), []string{"https://a.example/a", "https://a.example/b"}, func(i int, p provider.Page) {
		pages[i] = p.Content
		codes[i] = reason.Of(p.Err)
	})
	if strings.Contains(pages[0], "K-INJECT") || strings.Contains(pages[0], "<p") || !strings.Contains(pages[0], "Keenable visible text") {
		t.Errorf("page 0 = %q", pages[0])
	}
	if want, _ := content.Convert([]byte(doc["/a"]), "text/html", nil); pages[0] != want.Markdown {
		t.Errorf("page 0 = %q, the direct path gives %q", pages[0], want.Markdown)
	}
	if codes[1] != reason.EmptyContent || strings.Contains(pages[1], "<") {
		t.Errorf("page 1 = %q, %q", pages[1], codes[1])
	}
}
