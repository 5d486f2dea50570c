package direct_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/reason"
	"github.com/gatehouse-dev/gatehouse/internal/web/provider/direct"
)

// https:// to a port that speaks plain HTTP: the message says the server does
// not speak TLS there and names the fix (http://), for a server that answers
// the ClientHello in HTTP and for one that just hangs up (issue 6 item 14).
func TestHTTPSToPlainHTTPServerNamed(t *testing.T) {
	srv, d := server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte("plain"))
	})
	p := d.Fetch(context.Background(), strings.Replace(srv.URL, "http://", "https://", 1))
	checkNoTLSMessage(t, "HTTP answer", p.Err)

	// A plain-TCP service that reads the ClientHello and closes.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// Read the whole ClientHello, then hang up (FIN, not RST).
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	ap := netip.MustParseAddrPort(ln.Addr().String())
	d2 := direct.New(direct.Options{Guard: egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap}}), Timeout: 5 * time.Second})
	p = d2.Fetch(context.Background(), "https://"+ln.Addr().String()+"/")
	checkNoTLSMessage(t, "hang-up", p.Err)

	// A service with its own banner (SSH-like): the first record is not TLS.
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln2.Close() })
	go func() {
		for {
			c, err := ln2.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n"))
			c.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
			io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	ap2 := netip.MustParseAddrPort(ln2.Addr().String())
	d3 := direct.New(direct.Options{Guard: egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{ap2}}), Timeout: 5 * time.Second})
	p = d3.Fetch(context.Background(), "https://"+ln2.Addr().String()+"/")
	checkNoTLSMessage(t, "banner", p.Err)
}

func checkNoTLSMessage(t *testing.T, what string, err error) {
	t.Helper()
	if reason.Of(err) != reason.FetchFailed {
		t.Fatalf("%s: got %v, want fetch_failed", what, err)
	}
	msg := err.Error()
	t.Logf("%s: %s", what, msg)
	if !strings.Contains(msg, "TLS") || !strings.Contains(msg, "http://") || strings.Contains(msg, "without a complete answer") {
		t.Errorf("%s: message should say the server does not speak TLS on that port and suggest http://; got %q", what, msg)
	}
}
