// Command startup measures the CLI start-up budget of issue 6 item 13 side
// by side: `gatehouse --version` and `gatehouse check URL` against a
// hello-world Go binary (fmt.Println) built with the same Go, in one run.
//
//	go run ./bench/startup [-r 300] [-w 20] [-cgo both|on|off] [-extra BIN]...
//
// It builds hello and cmd/gatehouse (with CGO_ENABLED=1 and/or 0) into a
// temporary directory, then runs -r interleaved rounds: each round starts
// every command once, in an order rotated per round, so that a burst of load
// from other processes hits all of them. For each command it prints the
// minimum and median wall time (fork+exec to wait4), the mean CPU time
// (user+system, from wait4's rusage) and the mean minor page faults, and
// each as a ratio to hello's. CPU time and page faults depend far less on
// the machine's load than wall time. -extra adds another gatehouse binary
// (e.g. one built from an older commit) run with the same arguments.
// GATEHOUSE_HOME is an empty temporary directory. Run at normal priority
// and report `uptime`'s load average with the figures.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

type command struct {
	name string
	argv []string
	wall []time.Duration
	cpu  []time.Duration
	flt  []int64
}

type extras []string

func (e *extras) String() string     { return strings.Join(*e, ",") }
func (e *extras) Set(v string) error { *e = append(*e, v); return nil }

func main() {
	rounds := flag.Int("r", 300, "measured rounds")
	warm := flag.Int("w", 20, "warm-up rounds (not counted)")
	cgo := flag.String("cgo", "both", "build gatehouse with cgo on, off or both")
	url := flag.String("url", "https://93.184.216.34/", "the URL of `gatehouse check URL` (an IP literal: no DNS)")
	var extra extras
	flag.Var(&extra, "extra", "another gatehouse binary to run the same commands with (repeatable)")
	flag.Parse()

	tmp, err := os.MkdirTemp("", "gatehouse-startup-")
	check(err)
	defer os.RemoveAll(tmp)
	helloDir := filepath.Join(tmp, "hello")
	check(os.MkdirAll(helloDir, 0o700))
	check(os.WriteFile(filepath.Join(helloDir, "go.mod"), []byte("module hello\n\ngo 1.22\n"), 0o600))
	check(os.WriteFile(filepath.Join(helloDir, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o600))
	hello := build(helloDir, ".", filepath.Join(tmp, "hello-bin"), "1")

	cmds := []*command{{name: "hello world", argv: []string{hello}}}
	add := func(label, bin string) {
		cmds = append(cmds,
			&command{name: "--version, " + label, argv: []string{bin, "--version"}},
			&command{name: "check URL, " + label, argv: []string{bin, "check", *url}})
	}
	for _, c := range []struct{ flag, env, label string }{{"on", "1", "cgo"}, {"off", "0", "CGO_ENABLED=0"}} {
		if *cgo == "both" || *cgo == c.flag {
			add(c.label, build(".", "./cmd/gatehouse", filepath.Join(tmp, "gatehouse-cgo"+c.env), c.env))
		}
	}
	for _, b := range extra {
		add(b, b)
	}

	home := filepath.Join(tmp, "home")
	check(os.MkdirAll(home, 0o700))
	env := append(os.Environ(), "GATEHOUSE_HOME="+home)
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	check(err)
	defer devnull.Close() // keeps it reachable: its finalizer would close the fd under the children
	errFile, err := os.Create(filepath.Join(tmp, "stderr"))
	check(err)
	fds := []uintptr{devnull.Fd(), devnull.Fd(), errFile.Fd()}
	for r := -*warm; r < *rounds; r++ {
		for k := range cmds {
			c := cmds[(k+r+*warm)%len(cmds)]
			check(errFile.Truncate(0))
			_, err := errFile.Seek(0, 0)
			check(err)
			start := time.Now()
			pid, err := syscall.ForkExec(c.argv[0], c.argv, &syscall.ProcAttr{Env: env, Files: fds})
			check(err)
			var ws syscall.WaitStatus
			var ru syscall.Rusage
			_, err = syscall.Wait4(pid, &ws, 0, &ru)
			check(err)
			d := time.Since(start)
			if ws.ExitStatus() != 0 {
				b, _ := os.ReadFile(errFile.Name())
				check(fmt.Errorf("%v: exit status %d; stderr:\n%s", c.argv, ws.ExitStatus(), b))
			}
			if r < 0 {
				continue
			}
			c.wall = append(c.wall, d)
			c.cpu = append(c.cpu, time.Duration(syscall.TimevalToNsec(ru.Utime)+syscall.TimevalToNsec(ru.Stime)))
			c.flt = append(c.flt, ru.Minflt)
		}
	}

	h := cmds[0]
	fmt.Printf("%d interleaved rounds (+%d warm-up)\n", *rounds, *warm)
	fmt.Printf("%-36s %9s %9s %9s %7s %7s %7s %7s\n", "command", "min", "median", "CPU", "x min", "x med", "x CPU", "faults")
	for _, c := range cmds {
		fmt.Printf("%-36s %9s %9s %9s %6.2fx %6.2fx %6.2fx %7.0f\n", c.name,
			ms(minOf(c.wall)), ms(median(c.wall)), ms(mean(c.cpu)),
			ratio(minOf(c.wall), minOf(h.wall)), ratio(median(c.wall), median(h.wall)), ratio(mean(c.cpu), mean(h.cpu)),
			meanInt(c.flt))
	}
}

// build runs go build in dir for pkg with CGO_ENABLED=cgo and returns out.
func build(dir, pkg, out, cgo string) string {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo, "GOWORK=off")
	if b, err := cmd.CombinedOutput(); err != nil {
		check(fmt.Errorf("go build %s: %v\n%s", pkg, err, b))
	}
	return out
}

func sorted(d []time.Duration) []time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s
}

func minOf(d []time.Duration) time.Duration  { return sorted(d)[0] }
func median(d []time.Duration) time.Duration { return sorted(d)[len(d)/2] }

func mean(d []time.Duration) time.Duration {
	var s time.Duration
	for _, v := range d {
		s += v
	}
	return s / time.Duration(len(d))
}

func meanInt(v []int64) float64 {
	var s int64
	for _, x := range v {
		s += x
	}
	return float64(s) / float64(len(v))
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
func ms(d time.Duration) string        { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "startup:", err)
		os.Exit(1)
	}
}
