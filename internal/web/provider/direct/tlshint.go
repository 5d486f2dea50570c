package direct

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"syscall"
)

// handshakeKey keys the *atomic.Bool that traceHandshake puts in a context.
type handshakeKey struct{}

// traceHandshake returns ctx with an httptrace.ClientTrace that records a
// failed TLS handshake on any hop of the request, so that requestError can
// tell "the server hung up during the TLS handshake" (typically https:// to
// a port that speaks plain HTTP) from a connection lost later.
func traceHandshake(ctx context.Context) context.Context {
	failed := new(atomic.Bool)
	ctx = context.WithValue(ctx, handshakeKey{}, failed)
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err != nil {
				failed.Store(true)
			}
		},
	})
}

// noTLSCause returns the message for an https:// request whose server does
// not speak TLS on the port, or "" when err is something else. Two shapes:
// the server answered the ClientHello in plain HTTP (net/http reports
// http.ErrSchemeMismatch), or it closed or reset the connection during the
// handshake (EOF or ECONNRESET while traceHandshake saw the handshake fail).
func noTLSCause(ctx context.Context, err error) string {
	const fix = " If the site serves plain HTTP on that port, use http:// instead of https://."
	var rh tls.RecordHeaderError
	if errors.Is(err, http.ErrSchemeMismatch) || (errors.As(err, &rh) && string(rh.RecordHeader[:]) == "HTTP/") {
		return "the server answered in plain HTTP: it does not speak TLS (https) on that port." + fix
	}
	failed, _ := ctx.Value(handshakeKey{}).(*atomic.Bool)
	if failed == nil || !failed.Load() {
		return ""
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		strings.Contains(err.Error(), "connection reset") {
		return "the server closed the connection during the TLS handshake: it probably does not speak TLS (https) on that port." + fix
	}
	if errors.As(err, &rh) {
		return "the server's first answer is not TLS: it does not speak TLS (https) on that port." + fix
	}
	return ""
}
