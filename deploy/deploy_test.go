// Package deploy holds the container files of docs/deploy.md (Dockerfile,
// compose.yaml, haproxy.cfg). Nothing here runs a container (there is no
// container engine in CI); this test checks what can be checked without one.
package deploy

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"
)

// TestHAProxyConfigValid runs `haproxy -c` on haproxy.cfg: a valid file,
// whose only warnings are the replica names that resolve inside compose
// only.
func TestHAProxyConfigValid(t *testing.T) {
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("haproxy is not installed (Debian package haproxy); CI must install it")
		}
		t.Skip("haproxy not installed")
	}
	out, err := exec.Command(bin, "-c", "-f", "haproxy.cfg").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Configuration file is valid") {
		t.Fatalf("haproxy -c: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "[WARNING]") && !strings.Contains(l, "could not resolve address 'replica-") {
			t.Errorf("haproxy -c warns: %s", l)
		}
		if strings.Contains(l, "[ALERT]") {
			t.Errorf("haproxy -c alerts: %s", l)
		}
	}
	cfg, _ := os.ReadFile("haproxy.cfg")
	for _, want := range []string{"option httpchk GET /readyz", "stick on req.hdr(mcp-session-id)", "stick on req.hdr(mcp-param-session)", "bind :8765"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("haproxy.cfg lacks %q", want)
		}
	}
}

// TestComposeFile: compose.yaml parses, has Redis and two replicas with
// their own GATEHOUSE_HOME volumes and one GATEHOUSE_REDIS_URL, and says it
// was never run.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "NOT RUN") {
		t.Error("compose.yaml must say it was not run here")
	}
	var c struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
			Command     []string          `yaml:"command"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	if _, ok := c.Services["redis"]; !ok {
		t.Error("no redis service")
	}
	homes := map[string]bool{}
	for _, name := range []string{"replica-a", "replica-b"} {
		s, ok := c.Services[name]
		if !ok {
			t.Fatalf("no %s service", name)
		}
		if s.Environment["GATEHOUSE_REDIS_URL"] != "redis://redis:6379/0" || s.Environment["GATEHOUSE_HOME"] == "" {
			t.Errorf("%s environment: %v", name, s.Environment)
		}
		if len(s.Volumes) != 1 || homes[s.Volumes[0]] {
			t.Errorf("%s needs a home volume of its own: %v", name, s.Volumes)
		}
		homes[s.Volumes[0]] = true
		if strings.Join(s.Command, " ") != "mcp --http 0.0.0.0:8765 --drain 20s --audit -" {
			t.Errorf("%s command: %v", name, s.Command)
		}
	}
}

// TestDockerfile: non-root, Debian with chromium-headless-shell, builds the
// binary, says it was never built here.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, re := range []string{`(?m)^FROM golang:\S+ AS build$`, `(?m)^FROM debian:\S+$`, `chromium-headless-shell`,
		`go build .* \./cmd/gatehouse`, `(?m)^USER 10001`, `NOT BUILT OR RUN`} {
		if !regexp.MustCompile(re).MatchString(s) {
			t.Errorf("Dockerfile: no match for %s", re)
		}
	}
	if regexp.MustCompile(`(?m)^USER (root|0)\b`).MatchString(s) {
		t.Error("Dockerfile runs as root")
	}
}
