package direct_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A body cut short by the server (Content-Length promised, connection closed)
// is kept with a note and marked not cacheable, never a silent success.
func TestShortTransferNotedAndNotCached(t *testing.T) {
	srv, d := server(t, func(w http.ResponseWriter, r *http.Request) {
		hj := w.(http.Hijacker)
		c, buf, _ := hj.Hijack()
		body := strings.Repeat("<p>Paragraph of text that is part of a long article body here.</p>\n", 40)
		fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n<html><head><title>Short</title></head><body><article>%s", 1000000, body)
		buf.Flush()
		c.Close()
	})
	p := d.Fetch(context.Background(), srv.URL+"/")
	if p.Err != nil || len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "transfer incomplete") || !p.NoCache {
		t.Errorf("err=%v notes=%v nocache=%v", p.Err, p.Notes, p.NoCache)
	}
}
