package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/browser/backend"
	"github.com/gatehouse-dev/gatehouse/internal/tools"
	"github.com/gatehouse-dev/gatehouse/internal/webtest"
)

// runAsCLIIfAsked lets a test re-run this test binary as the gatehouse CLI
// (GATEHOUSE_CLI_ARGS holds the JSON argument list), so signal handling and
// process cleanup are tested on a real process. TestMain calls it first.
func runAsCLIIfAsked() {
	if raw := os.Getenv("GATEHOUSE_CLI_ARGS"); raw != "" {
		var args []string
		if err := json.Unmarshal([]byte(raw), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(run(args, os.Stdout, os.Stderr))
	}
}

func TestReplCall(t *testing.T) {
	for _, tc := range []struct {
		line string
		tool string
		args map[string]any
		err  bool
	}{
		{"navigate https://example.com/", tools.BrowserNavigate, map[string]any{"url": "https://example.com/"}, false},
		{"  click e3 ", tools.BrowserClick, map[string]any{"ref": "e3"}, false},
		{"type e4 hello world", tools.BrowserType, map[string]any{"ref": "e4", "text": "hello world"}, false},
		{"snapshot full", tools.BrowserSnapshot, map[string]any{"full": true}, false},
		{"snapshot", tools.BrowserSnapshot, map[string]any{"full": false}, false},
		{"console document.title + '!'", tools.BrowserConsole, map[string]any{"expression": "document.title + '!'"}, false},
		{"console clear", tools.BrowserConsole, map[string]any{"clear": true}, false},
		{"console", tools.BrowserConsole, map[string]any{}, false},
		{"back", tools.BrowserBack, map[string]any{}, false},
		{"press Enter", tools.BrowserPress, map[string]any{"key": "Enter"}, false},
		{"scroll down", tools.BrowserScroll, map[string]any{"direction": "down"}, false},
		{"vision --annotate where is the cart?", tools.BrowserVision, map[string]any{"question": "where is the cart?", "annotate": true}, false},
		{"screenshot what is shown?", tools.BrowserVision, map[string]any{"question": "what is shown?", "annotate": false}, false},
		// browser_vision's question is required, over MCP (the tool's
		// schema) and in the REPL alike (issue 16 item 13).
		{"vision", "", nil, true},
		{"vision --annotate", "", nil, true},
		{"images", tools.BrowserGetImages, map[string]any{}, false},
		{"close", tools.BrowserClose, map[string]any{}, false},
		{"dialog accept Ada Lovelace", tools.BrowserDialog, map[string]any{"action": "accept", "prompt_text": "Ada Lovelace"}, false},
		{"dialog dismiss", tools.BrowserDialog, map[string]any{"action": "dismiss"}, false},
		{"dialog", "", nil, true},
		{"", "", nil, false},
		{"click", "", nil, true},
		{"dance now", "", nil, true},
	} {
		tool, args, err := replCall(tc.line)
		if (err != nil) != tc.err || tool != tc.tool || (!tc.err && tc.args != nil && !reflect.DeepEqual(args, tc.args)) {
			t.Errorf("replCall(%q) = %q %v %v, want %q %v err=%v", tc.line, tool, args, err, tc.tool, tc.args, tc.err)
		}
	}
}

func needChromium(t *testing.T) {
	t.Helper()
	if _, err := backend.FindChromium(""); err != nil {
		if os.Getenv("CI") == "" {
			t.Skipf("Chromium missing (CI unset): %v", err)
		}
		t.Fatal(err)
	}
}

func waitNoMarked(t *testing.T, owner int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := backend.MarkedProcesses(owner)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: Chromium processes with the profile marker remain: %v", what, left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBrowsePrintsSnapshotAndLeavesNoChromium(t *testing.T) {
	needChromium(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<title>Hi</title><h1>Hello</h1><a href="/x">More</a>`)
	}))
	defer srv.Close()
	code, out, errs := cli(t, t.TempDir(), "browse", srv.URL+"/")
	if code != 0 || !strings.Contains(out, `- heading "Hello" [level=1]`) || !strings.Contains(out, `- link "More" [ref=e1]`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	waitNoMarked(t, os.Getpid(), "after a normal exit")
	if code, _, _ := cli(t, t.TempDir(), "browse", "http://169.254.169.254/latest/meta-data/"); code != 1 {
		t.Errorf("metadata URL: exit %d, want 1", code)
	}
}

// A REPL process killed by SIGTERM or SIGINT exits 128+signal and leaves no
// Chromium behind.
func TestBrowseREPLSignalsLeaveNoChromium(t *testing.T) {
	needChromium(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<title>Hi</title><button>Press</button>`)
	}))
	defer srv.Close()
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			args, _ := json.Marshal([]string{"browse", "--repl"})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "GATEHOUSE_CLI_ARGS="+string(args), "GATEHOUSE_HOME="+t.TempDir())
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(stdin, "navigate %s/\n", srv.URL)
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil || !strings.Contains(line, `"success":true`) || !strings.Contains(line, `button \"Press\" [ref=e1]`) {
				cmd.Process.Kill()
				t.Fatalf("first REPL line %q (%v)", line, err)
			}
			if len(backend.MarkedProcesses(cmd.Process.Pid)) == 0 {
				t.Fatal("no Chromium with the profile marker while the REPL runs (the scan would prove nothing)")
			}
			cmd.Process.Signal(sig)
			err = cmd.Wait()
			if sig == syscall.SIGKILL {
				// No cleanup can run in a killed process: Pdeathsig takes the
				// browser down, and the orphan reaper (run by the next Launch)
				// kills whatever children still carry the dead owner's marker.
				backend.ReapOrphans()
			} else if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 128+int(sig) {
				t.Errorf("exit after %v: %v, want status %d", sig, err, 128+int(sig))
			}
			waitNoMarked(t, cmd.Process.Pid, "after "+sig.String())
		})
	}
}

// `browse --help` lists every registered browser tool with its REPL command,
// and each listed command parses to that tool (newcomer review D3).
func TestBrowseHelpListsEveryBrowserTool(t *testing.T) {
	reg, _ := tools.Default(tools.Env{Web: webtest.New(t).Env()})
	defer reg.Close()
	code, out, errs := cli(t, t.TempDir(), "browse", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	n := 0
	for _, tl := range reg.All() {
		if !strings.HasPrefix(tl.Name(), "browser_") {
			continue
		}
		n++
		u, ok := replUsage[tl.Name()]
		if !ok {
			t.Errorf("%s has no REPL command", tl.Name())
			continue
		}
		if !strings.Contains(out, u) || !strings.Contains(out, "("+tl.Name()+")") {
			t.Errorf("help does not list %s (%s):\n%s", tl.Name(), u, out)
		}
		line := strings.NewReplacer("[", "", "]", "", "|", " ").Replace(u)
		line = strings.NewReplacer("URL", "https://example.com/", "REF", "e1", "KEY", "Enter", "TEXT", "x", "EXPR", "1", "QUESTION", "q").Replace(line)
		if tool, _, err := replCall(line); err != nil || tool != tl.Name() {
			t.Errorf("REPL command %q parses to %q (%v), want %s", u, tool, err, tl.Name())
		}
	}
	if n < 12 || !strings.Contains(out, "dialog accept|dismiss") {
		t.Errorf("%d browser tools; help:\n%s", n, out)
	}
}

// TestVisionQuestionRequiredEverywhere: browser_vision's question is
// required by the tool's input schema (what MCP clients see; spec
// browser_vision row) and by the REPL's vision command alike.
func TestVisionQuestionRequiredEverywhere(t *testing.T) {
	reg, _ := tools.Default(tools.Env{Web: webtest.New(t).Env()})
	defer reg.Close()
	tool, ok := reg.Lookup(tools.BrowserVision)
	if !ok || !slices.Contains(tool.InputSchema().Required, "question") {
		t.Fatalf("browser_vision's schema does not require question")
	}
	if _, _, err := replCall("vision"); err == nil || !strings.Contains(err.Error(), "QUESTION") {
		t.Errorf("REPL vision without a question: %v, want a usage error naming QUESTION", err)
	}
	if u := replUsage[tools.BrowserVision]; strings.Contains(u, "[QUESTION]") {
		t.Errorf("REPL usage %q shows the question as optional", u)
	}
}
