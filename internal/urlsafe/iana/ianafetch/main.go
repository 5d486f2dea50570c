// Command ianafetch refreshes the copies of IANA's IPv4 and IPv6
// Special-Purpose Address Registries kept in internal/urlsafe/iana: it
// downloads both CSVs and both registries' XML (for their Last Updated date)
// through egress, like every connection Gatehouse opens, refuses a download
// that does not parse as a registry, then rewrites the CSVs and
// provenance.txt. It needs the network: a maintainer's step, never run by
// tests or builds. Then regenerate and test:
//
//	go run ./internal/urlsafe/iana/ianafetch -dir internal/urlsafe/iana
//	go generate ./internal/urlsafe
//	go test ./internal/urlsafe/...
//
// Review the diff of the CSVs before committing: a new entry marked not
// globally reachable is refused from then on; a new globally reachable entry
// inside a block Gatehouse refuses makes urlsafe's registry test fail until
// README.md's table says what Gatehouse does with it.
package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gatehouse-dev/gatehouse/internal/egress"
	"github.com/gatehouse-dev/gatehouse/internal/urlsafe/iana"
)

func main() {
	dir := flag.String("dir", "internal/urlsafe/iana", "directory holding the registry CSVs and provenance.txt")
	flag.Parse()
	if err := fetchAll(*dir, time.Now().UTC()); err != nil {
		fmt.Fprintln(os.Stderr, "ianafetch:", err)
		os.Exit(1)
	}
}

// fetchAll downloads both registries into dir and rewrites provenance.txt.
// Nothing is written unless both CSVs parse and both XML files give a date.
func fetchAll(dir string, now time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	type reg struct {
		url, file string
		family    int
		csv       []byte
		updated   string
	}
	regs := []*reg{{url: iana.IPv4URL, file: iana.IPv4File, family: 4}, {url: iana.IPv6URL, file: iana.IPv6File, family: 6}}
	for _, r := range regs {
		var err error
		if r.csv, err = get(ctx, r.url); err != nil {
			return err
		}
		if _, err := iana.Parse(bytes.NewReader(r.csv), r.family); err != nil {
			return fmt.Errorf("%s: %w", r.url, err)
		}
		xmlURL := strings.TrimSuffix(r.url, "-1.csv") + ".xml"
		x, err := get(ctx, xmlURL)
		if err != nil {
			return err
		}
		var doc struct {
			Updated string `xml:"updated"`
		}
		if err := xml.Unmarshal(x, &doc); err != nil || doc.Updated == "" {
			return fmt.Errorf("%s: no <updated> date (%v)", xmlURL, err)
		}
		r.updated = strings.TrimSpace(doc.Updated)
	}
	for _, r := range regs {
		if err := os.WriteFile(filepath.Join(dir, r.file), r.csv, 0o644); err != nil {
			return err
		}
	}
	prov := fmt.Sprintf("# Where the two CSV copies beside this file come from. Read by ianagen, which\n"+
		"# stamps these dates into ../special_gen.go; rewritten by ianafetch.\n# See README.md.\n"+
		"ipv4-last-updated: %s\nipv6-last-updated: %s\nretrieved: %s\nhow: downloaded by ianafetch from %s and %s\n",
		regs[0].updated, regs[1].updated, now.Format(time.DateOnly), iana.IPv4URL, iana.IPv6URL)
	return os.WriteFile(filepath.Join(dir, "provenance.txt"), []byte(prov), 0o644)
}

// client fetches through egress like every connection Gatehouse opens (the
// SSRF gate applies to IANA too).
var client = egress.New(egress.Options{}).Client(egress.ClientOptions{Timeout: time.Minute})

func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err == nil && len(b) == 0 {
		err = errors.New("empty body")
	}
	return b, err
}
