package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Everything the fleet runs (Redis, the replicas, HAProxy, the fake search
// backend, the page site and the clients) runs inside a network namespace of
// its own, made by unshare(1), with loopback as its only interface (the
// pattern of internal/browser's TestPrivateNetworkFromPublicPage). The page
// site listens on PublicIP, added to loopback there: an address the SSRF
// classifier calls public, because the extract cache keeps only pages whose
// addresses are all public. (A 198.18.0.0/15 address declared in
// security.fake_ip_ranges, as that test uses, is let through but never
// cached: internal/web's anyNonPublic; so it cannot show a cache hit.)
// The namespace has no route anywhere but loopback, so no packet to
// PublicIP, or to anything else, leaves it.
const (
	// NetnsEnv is set to "1" in the process re-executed inside the namespace.
	NetnsEnv = "GATEHOUSE_FLEET_NETNS"
	// BinEnv names the gatehouse binary built outside the namespace.
	BinEnv = "GATEHOUSE_FLEET_BIN"
	// PublicIP is the page site's address inside the namespace (the
	// public-looking literal bench/startup uses too).
	PublicIP = "93.184.216.34"
)

// NamespaceNote is the line the bench and the test print about where they run.
const NamespaceNote = "inside a private network namespace (unshare -n, loopback its only interface): pages on " + PublicIP +
	" (a public address added to loopback there, so pages are cached as public ones are), Redis, replicas, HAProxy and the search fake on 127.0.0.0/8; nothing leaves the namespace"

// errNoNamespace reports why this process cannot make a network namespace;
// callers skip (or fail under CI=true).
var errNoNamespace = errors.New("no network namespace")

// unshareArgs returns the unshare(1) argv prefix that makes a new network
// namespace here: "unshare -n" as root, "unshare -r -n" (a user namespace
// mapping us to root) otherwise, whichever works; or an error naming what is
// missing.
func unshareArgs() ([]string, error) {
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("%w: %s not found (util-linux, iproute2)", errNoNamespace, tool)
		}
	}
	var tries [][]string
	if os.Geteuid() == 0 {
		tries = append(tries, []string{"unshare", "-n"})
	}
	tries = append(tries, []string{"unshare", "-r", "-n"})
	var msgs []string
	for _, a := range tries {
		out, err := exec.Command(a[0], append(a[1:], "true")...).CombinedOutput()
		if err == nil {
			return a, nil
		}
		msgs = append(msgs, fmt.Sprintf("%s: %v: %s", strings.Join(a, " "), err, strings.TrimSpace(string(out))))
	}
	return nil, fmt.Errorf("%w: %s (run as root, or enable unprivileged user namespaces)", errNoNamespace, strings.Join(msgs, "; "))
}

// setupNamespace brings loopback up and adds PublicIP to it; it must run
// inside the namespace (NetnsEnv=1).
func setupNamespace() error {
	if os.Getenv(NetnsEnv) != "1" {
		return errors.New("setupNamespace outside the fleet's network namespace")
	}
	for _, args := range [][]string{{"link", "set", "lo", "up"}, {"addr", "add", PublicIP + "/32", "dev", "lo"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}

// buildGatehouse builds cmd/gatehouse into dir (outside the namespace, so the
// Go toolchain can reach its module cache and proxy as usual) and returns the
// binary's path.
func buildGatehouse(dir string) (string, error) {
	bin := dir + "/gatehouse"
	cmd := exec.Command("go", "build", "-o", bin, "github.com/gatehouse-dev/gatehouse/cmd/gatehouse")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/gatehouse: %v\n%s", err, out)
	}
	return bin, nil
}
