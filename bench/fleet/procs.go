package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// proc is one child process the fleet started: its exit is observed once
// (wait4), so its CPU time is the kernel's rusage, exact even after SIGKILL.
type proc struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error // Wait's error, after done
	log  string
}

// startProc starts argv with env, stdout and stderr to logPath. The child
// gets SIGKILL if this process dies (Pdeathsig), so none outlives a bench
// that crashed.
func startProc(name, logPath string, env []string, argv ...string) (*proc, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, done: make(chan struct{}), log: logPath}
	go func() {
		p.err = cmd.Wait()
		lf.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends sig and waits up to grace for the exit, then SIGKILL.
func (p *proc) stop(sig syscall.Signal, grace time.Duration) {
	if p.exited() {
		return
	}
	p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(grace):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// cpu returns the process's CPU time (user+system): from wait4's rusage once
// it has exited, else from /proc/<pid>/stat (10 ms ticks).
func (p *proc) cpu() time.Duration {
	if p.exited() && p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	}
	return procStatCPU(p.cmd.Process.Pid)
}

// tail returns the last n lines of the process's log, for error messages.
func (p *proc) tail(n int) string {
	b, _ := os.ReadFile(p.log)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// procStatCPU reads utime+stime of pid from /proc (Linux clock ticks of
// 10 ms: USER_HZ is 100 on every Linux ABI Go supports); 0 when unreadable.
func procStatCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * 10 * time.Millisecond
}

// waitFor polls cond every 20 ms until it holds, p (when non-nil) exits, or
// the deadline passes.
func waitFor(what string, deadline time.Duration, p *proc, cond func() bool) error {
	end := time.Now().Add(deadline)
	for {
		if cond() {
			return nil
		}
		if p != nil && p.exited() {
			return fmt.Errorf("%s exited before %s: %v\n%s", p.name, what, p.err, p.tail(20))
		}
		if time.Now().After(end) {
			msg := fmt.Sprintf("%s: not within %v", what, deadline)
			if p != nil {
				msg += "\n" + p.tail(20)
			}
			return errors.New(msg)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func dialable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Redis is a redis-server the fleet started: loopback only, no persistence
// (no RDB snapshots, no AOF), its files in a temp dir. Stop and Start keep
// the port, so replicas reconnect to the same URL.
type Redis struct {
	Addr string // 127.0.0.1:port
	dir  string
	mu   sync.Mutex
	p    *proc
	cpu  time.Duration // CPU of incarnations already stopped
	runs int
}

// URL is the GATEHOUSE_REDIS_URL of this server.
func (r *Redis) URL() string { return "redis://" + r.Addr + "/0" }

func startRedis(dir string) (*Redis, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("redis-server not found (Debian package redis-server): %w", err)
	}
	port, err := freePort("127.0.0.1")
	if err != nil {
		return nil, err
	}
	r := &Redis{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir}
	return r, r.Start()
}

// Start starts (or restarts) the server and waits until it answers PING.
func (r *Redis) Start() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p != nil && !r.p.exited() {
		return nil
	}
	_, port, _ := net.SplitHostPort(r.Addr)
	r.runs++
	p, err := startProc("redis-server", filepath.Join(r.dir, fmt.Sprintf("redis-%d.log", r.runs)), []string{"PATH=" + os.Getenv("PATH")},
		"redis-server", "--bind", "127.0.0.1", "--port", port, "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--protected-mode", "no", "--daemonize", "no",
		"--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru")
	if err != nil {
		return err
	}
	r.p = p
	return waitFor("redis-server answering PING", 10*time.Second, p, func() bool {
		s, err := r.Do("PING")
		return err == nil && s == "PONG"
	})
}

// Stop stops the server (SHUTDOWN NOSAVE via SIGTERM; nothing is saved).
func (r *Redis) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.p == nil || r.p.exited() {
		return
	}
	r.p.stop(syscall.SIGTERM, 5*time.Second)
	r.cpu += r.p.cpu()
}

// CPU is the server's CPU time over every incarnation so far.
func (r *Redis) CPU() time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.cpu
	if r.p != nil && !r.p.exited() {
		c += r.p.cpu()
	}
	return c
}

// Do sends one command (RESP array of bulk strings) and returns the reply as
// text: a simple string, an integer, a bulk string, or the elements of an
// array joined by "\n". An error reply is an error.
func (r *Redis) Do(args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", r.Addr, time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(c, b.String()); err != nil {
		return "", err
	}
	return readRESP(bufio.NewReader(c))
}

func readRESP(br *bufio.Reader) (string, error) {
	line, err := br.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("redis: empty reply")
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", errors.New("redis: " + line[1:])
	case '$':
		n, _ := strconv.Atoi(line[1:])
		if n < 0 {
			return "", nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	case '*':
		n, _ := strconv.Atoi(line[1:])
		var parts []string
		for range max(n, 0) {
			s, err := readRESP(br)
			if err != nil {
				return "", err
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, "\n"), nil
	}
	return "", fmt.Errorf("redis: unexpected reply %q", line)
}

// freePort returns a TCP port free on ip at the time of the call.
func freePort(ip string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Replica is one `gatehouse mcp --http` process.
type Replica struct {
	Name string // "A", "B"
	Addr string // ip:port of its listener
	Home string // its GATEHOUSE_HOME
	p    *proc
	cpu0 time.Duration // CPU at MarkCPU
}

// URL is the replica's MCP endpoint.
func (r *Replica) URL() string { return "http://" + r.Addr + "/mcp" }

// Alive reports whether the process is still running.
func (r *Replica) Alive() bool { return !r.p.exited() }

// Kill sends SIGKILL and waits for the exit.
func (r *Replica) Kill() { r.p.stop(syscall.SIGKILL, 0) }

// Stop sends SIGTERM (graceful drain) and waits up to 30 s, then SIGKILL.
func (r *Replica) Stop() { r.p.stop(syscall.SIGTERM, 30*time.Second) }

// MarkCPU records the CPU time used so far (start-up), so CPUSinceMark
// counts only what follows.
func (r *Replica) MarkCPU() { r.cpu0 = r.p.cpu() }

// CPUSinceMark is the CPU time (user+system) since MarkCPU; exact (rusage)
// once the process has exited.
func (r *Replica) CPUSinceMark() time.Duration { return r.p.cpu() - r.cpu0 }

// Readyz returns the status of GET /readyz (0 when unreachable) and the
// body's first line.
func (r *Replica) Readyz(ctx context.Context) (int, string) {
	return getStatus(ctx, "http://"+r.Addr+"/readyz")
}

func getStatus(ctx context.Context, u string) (int, string) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	resp, err := plainClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	first, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return resp.StatusCode, first
}
