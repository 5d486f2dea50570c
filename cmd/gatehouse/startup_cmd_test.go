package main

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"
)

// A quick command's signal handler is installed only once it has run for the
// delay (issue 6 item 13): one done before never installs it, one still
// running after gets SIGTERM as a cancelled context and exit code 143.
func TestSignalContextAfter(t *testing.T) {
	var installs atomic.Int32
	t.Cleanup(func() { testHookSignalInstalled = func() {} })
	testHookSignalInstalled = func() { installs.Add(1) }

	_, stop, _ := signalContextAfter(50 * time.Millisecond)
	stop()
	time.Sleep(150 * time.Millisecond)
	if n := installs.Load(); n != 0 {
		t.Fatalf("stopped before the delay: handler installed %d times, want 0", n)
	}

	ctx, stop, code := signalContextAfter(20 * time.Millisecond)
	defer stop()
	deadline := time.Now().Add(5 * time.Second)
	for installs.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("handler not installed after the delay")
		}
		time.Sleep(5 * time.Millisecond)
	}
	sendSIGTERM(t, ctx, code)
}

// `gatehouse check` installs its signal handler only after quickSignalDelay:
// a check that is done before (here: the delay set to an hour) never installs
// one, whatever the machine's load.
func TestCheckInstallsNoSignalHandler(t *testing.T) {
	var installs atomic.Int32
	delay := quickSignalDelay
	t.Cleanup(func() { testHookSignalInstalled, quickSignalDelay = func() {}, delay })
	testHookSignalInstalled = func() { installs.Add(1) }
	quickSignalDelay = time.Hour
	for _, args := range [][]string{{"check", "https://93.184.216.34/"}, {"check", "--eval", "1+1"}} {
		code, out, errs := cli(t, t.TempDir(), args...)
		if code != 0 || out == "" {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errs)
		}
	}
	if n := installs.Load(); n != 0 {
		t.Errorf("check installed a signal handler %d times before quickSignalDelay", n)
	}
}

// The root built for a command line holds only the subcommands it can reach
// (reachable); what every command prints is the same as with the whole tree:
// each subcommand's help, --version, usage errors.
func TestReachableRootPrintsTheSame(t *testing.T) {
	home := t.TempDir()
	t.Setenv("GATEHOUSE_HOME", home)
	exec := func(full bool, args ...string) (int, string) {
		var out, errb bytes.Buffer
		root := newRoot(&out, &errb, args)
		if full {
			root = newRoot(&out, &errb, nil)
			root.SetArgs(args)
		}
		err := root.Execute()
		code := 0
		if err != nil {
			code = 1
			errb.WriteString(err.Error())
		}
		return code, out.String() + "\x00" + errb.String()
	}
	cases := [][]string{{"--version"}, {"-v"}}
	a := &app{}
	for _, s := range a.subcommands() {
		cases = append(cases, []string{s.name, "--help"}, []string{s.name, "--nosuchflag"})
		cmd := s.build()
		if cmd.Name() != s.name || len(cmd.Aliases) > 0 {
			t.Errorf("subcommand %q builds %q (aliases %v): reachable matches args[0] on the name alone", s.name, cmd.Name(), cmd.Aliases)
		}
	}
	cases = append(cases, []string{"config", "get", "--help"})
	for _, args := range cases {
		c1, lazy := exec(false, args...)
		c2, full := exec(true, args...)
		if c1 != c2 || lazy != full {
			t.Errorf("%v: reachable root (exit %d):\n%s\nwhole tree (exit %d):\n%s", args, c1, lazy, c2, full)
		}
	}
	// What only the whole tree can answer.
	for _, args := range [][]string{{"--help"}, {"help"}, {"chek"}, {"completion", "bash"}} {
		if subs, all := a.reachable(args); !all || len(subs) != len(a.subcommands()) {
			t.Errorf("%v: reachable gives %d subcommands, want all", args, len(subs))
		}
	}
}
