// Package redistest starts a real redis-server for tests (Debian package
// redis-server; .ci/run installs it): on a free loopback port, in a temp
// directory, with persistence off (--save "" --appendonly no), killed at
// the test's cleanup. The system Redis service is never used.
package redistest

import (
	"github.com/gatehouse-dev/gatehouse/internal/state"

	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
)

// Server is one redis-server process owned by a test.
type Server struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	cmd  *exec.Cmd
	done chan struct{}
}

// Start starts redis-server for t. When the binary is missing the test is
// skipped with a message, or fails under CI=true (a CI run must not skip
// the shared-state tests silently).
func Start(t testing.TB) *Server {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server not found (CI=true): install the Debian package redis-server")
		}
		t.Skip("redis-server not found: install the Debian package redis-server to run the shared-state tests")
	}
	s := &Server{t: t, bin: bin, dir: t.TempDir()}
	s.port = freePort(t)
	s.start()
	t.Cleanup(s.Stop)
	return s
}

// Addr is host:port of the server.
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL is redis://127.0.0.1:PORT/0.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

func (s *Server) start() {
	s.t.Helper()
	cmd := exec.Command(s.bin, "--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--protected-mode", "yes", "--loglevel", "warning")
	cmd.Dir = s.dir
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func(done chan struct{}) { cmd.Wait(); close(done) }(s.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if s.Do("PING") == "+PONG" {
			return
		}
		select {
		case <-s.done:
			s.t.Fatalf("redis-server on port %d exited at start", s.port)
		default:
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("redis-server on port %d did not answer PING within 10 s", s.port)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop kills the server and waits for it to exit (idempotent).
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the server again on the same port (after Stop); the data
// is gone (persistence is off).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start()
}

// Do sends one command (its arguments as RESP bulk strings) and returns
// the first reply line ("+OK", ":1", "$-1", "-ERR …"), or "" when the
// server cannot be reached. For tests that plant values under Gatehouse's
// keys without going through Gatehouse.
func (s *Server) Do(args ...string) string {
	// Through egress, as every connection Gatehouse code makes (the
	// server's exact loopback port allowed).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	g := egress.New(egress.Options{AllowAddrPorts: []netip.AddrPort{netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(s.port))}})
	c, err := g.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return ""
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return ""
	}
	return strings.TrimRight(line, "\r\n")
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Open returns a state.Redis on srv, as `gatehouse` builds one per replica
// with GATEHOUSE_REDIS_URL set; it is closed at the test's cleanup.
func Open(t testing.TB, srv *Server) *state.Redis {
	t.Helper()
	tg, err := state.ParseURL(srv.URL(), "", state.EnvRedisURL)
	if err != nil {
		t.Fatal(err)
	}
	r := state.Open(state.Options{Target: tg})
	t.Cleanup(func() { r.Close() })
	return r
}
