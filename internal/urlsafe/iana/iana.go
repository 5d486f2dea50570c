// Package iana reads the copies of IANA's IPv4 and IPv6 Special-Purpose Address
// Registries (RFC 6890, updated by RFC 8190) kept in this directory, in the CSV
// form IANA publishes. It is used by the generator (ianagen) that writes
// urlsafe's special-purpose table and by tests; code that runs in production
// never imports it, so nothing is read or parsed at run time. README.md says
// where the copies come from and how to refresh them.
package iana

import (
	"bytes"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strings"
)

// The registries' own download addresses (the CSV IANA links from each
// registry page) and the names of the copies in this directory.
const (
	IPv4URL  = "https://www.iana.org/assignments/iana-ipv4-special-registry/iana-ipv4-special-registry-1.csv"
	IPv6URL  = "https://www.iana.org/assignments/iana-ipv6-special-registry/iana-ipv6-special-registry-1.csv"
	IPv4File = "iana-ipv4-special-registry-1.csv"
	IPv6File = "iana-ipv6-special-registry-1.csv"
)

//go:embed iana-ipv4-special-registry-1.csv iana-ipv6-special-registry-1.csv
var files embed.FS

// Header is the registry's column row (RFC 6890 §2.2.2 names the fields).
var Header = []string{"Address Block", "Name", "RFC", "Allocation Date", "Termination Date",
	"Source", "Destination", "Forwardable", "Globally Reachable", "Reserved-by-Protocol"}

// Entry is one address block of a registry row. A row whose Address Block
// cell holds several blocks ("192.0.0.170/32, 192.0.0.171/32") gives one
// Entry per block, each with the row's other cells.
type Entry struct {
	Prefix netip.Prefix // the block; IPv4 blocks are 4-byte prefixes
	Block  string       // the block as IANA writes it ("::ffff:0:0/96"), footnote removed
	Name   string       // as written, with IANA's quotes ("\"This network\"")
	RFC    string       // references, runs of white space (line breaks) made one space
	// Allocated and Terminated are the Allocation and Termination Date cells
	// ("YYYY-MM"); Terminated is "N/A" for a block in use.
	Allocated, Terminated string
	// Source, Destination, Forwardable, GloballyReachable and ReservedByProtocol
	// are the Boolean cells with their footnote marks (" [1]") removed:
	// "True", "False", "N/A", or "" (a terminated row leaves them empty).
	Source, Destination, Forwardable, GloballyReachable, ReservedByProtocol string
	Line                                                                    int // CSV record number, 1 = first row after the header
}

// IsTerminated reports whether the registry gives the block a termination
// date (its allocation has ended: 192.88.99.0/24, 2001:10::/28).
func (e Entry) IsTerminated() bool { return e.Terminated != "N/A" }

// footnote is a reference to a note below IANA's table, appended to a cell:
// "192.0.0.0/24 [2]", "False [1]".
var footnote = regexp.MustCompile(`\s*\[\d+\]`)

// Parse reads one registry in IANA's CSV form: the header row (exactly
// Header, a UTF-8 byte order mark tolerated), then one row per allocation.
// Footnote marks are removed from the Address Block and Boolean cells, a cell
// naming several blocks separated by commas gives one Entry per block, quoted
// cells may hold commas and line breaks. family is 4 or 6: every block must be
// of that family and written with its host bits zero. Boolean cells must be
// True, False or N/A, or all empty in a terminated row; anything else (a
// changed format) is an error naming the record, as is an empty registry.
func Parse(r io.Reader, family int) ([]Entry, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(Header)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("header: %w", err)
	}
	head[0] = strings.TrimPrefix(head[0], "\ufeff")
	for i, h := range Header {
		if head[i] != h {
			return nil, fmt.Errorf("header column %d is %q, want %q", i+1, head[i], h)
		}
	}
	var out []Entry
	for n := 1; ; n++ {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("record %d: %w", n, err)
		}
		e, blocks, err := parseRecord(rec, family)
		if err != nil {
			return nil, fmt.Errorf("record %d (%s): %w", n, strings.TrimSpace(rec[0]), err)
		}
		e.Line = n
		for _, b := range blocks {
			e.Block, e.Prefix = b, netip.MustParsePrefix(b)
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no entries")
	}
	return out, nil
}

// parseRecord returns the row's cells as an Entry and the blocks its Address
// Block cell names, as written.
func parseRecord(rec []string, family int) (Entry, []string, error) {
	clean := func(s string) string { return strings.TrimSpace(footnote.ReplaceAllString(s, "")) }
	e := Entry{
		Name:               strings.TrimSpace(rec[1]),
		RFC:                strings.Join(strings.Fields(rec[2]), " "),
		Allocated:          strings.TrimSpace(rec[3]),
		Terminated:         strings.TrimSpace(rec[4]),
		Source:             clean(rec[5]),
		Destination:        clean(rec[6]),
		Forwardable:        clean(rec[7]),
		GloballyReachable:  clean(rec[8]),
		ReservedByProtocol: clean(rec[9]),
	}
	if e.Terminated == "" {
		return e, nil, fmt.Errorf("empty Termination Date (want N/A or a date)")
	}
	for _, v := range []string{e.Source, e.Destination, e.Forwardable, e.GloballyReachable, e.ReservedByProtocol} {
		switch {
		case v == "True", v == "False", v == "N/A":
		case v == "" && e.IsTerminated():
		default:
			return e, nil, fmt.Errorf("cell %q of a Boolean column is not True, False or N/A", v)
		}
	}
	var blocks []string
	for s := range strings.SplitSeq(clean(rec[0]), ",") {
		s = strings.TrimSpace(s)
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return e, nil, err
		}
		if p != p.Masked() {
			return e, nil, fmt.Errorf("%s has host bits set", p)
		}
		if (family == 4) != p.Addr().Is4() {
			return e, nil, fmt.Errorf("%s is not an IPv%d block", p, family)
		}
		blocks = append(blocks, s)
	}
	return e, blocks, nil
}

// Registries parses the two copies kept in this directory (embedded at build
// time): the IPv4 registry's entries, then the IPv6 registry's.
func Registries() (v4, v6 []Entry, err error) {
	if v4, err = parseFile(IPv4File, 4); err != nil {
		return nil, nil, err
	}
	if v6, err = parseFile(IPv6File, 6); err != nil {
		return nil, nil, err
	}
	return v4, v6, nil
}

func parseFile(name string, family int) ([]Entry, error) {
	b, err := files.ReadFile(name)
	if err != nil {
		return nil, err
	}
	es, err := Parse(bytes.NewReader(b), family)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return es, nil
}
