package iana

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// A registry as IANA writes it: a byte order mark and CRLF line ends,
// footnote marks on blocks and Boolean cells, two blocks in one quoted cell,
// commas and a line break inside quoted cells, doubled quotes, and a
// terminated row with empty flags.
const fixture = "\ufeffAddress Block,Name,RFC,Allocation Date,Termination Date,Source,Destination,Forwardable,Globally Reachable,Reserved-by-Protocol\r\n" +
	`0.0.0.0/8,"""This network""","[RFC791], Section 3.2",1981-09,N/A,True,False,False,False,True` + "\r\n" +
	`127.0.0.0/8,Loopback,"[RFC1122], Section 3.2.1.3",1981-09,N/A,False [1],False [1],False [1],False [1],True` + "\r\n" +
	`192.0.0.0/24 [2],IETF Protocol Assignments,"[RFC6890], Section 2.1",2010-01,N/A,False,False,False,False,False` + "\r\n" +
	`"192.0.0.170/32, 192.0.0.171/32",NAT64/DNS64 Discovery,"[RFC8880][RFC7050], Section 2.2",2013-02,N/A,False,False,False,False,True` + "\r\n" +
	`192.88.99.0/24,Deprecated (6to4 Relay Anycast),[RFC7526],2001-06,2015-03,,,,,` + "\r\n" +
	"255.255.255.255/32,Limited Broadcast,\"[RFC8190]\r\n        [RFC919], Section 7\",1984-10,N/A,False,True,False,False,True\r\n"

func TestParseIANAForms(t *testing.T) {
	es, err := Parse(strings.NewReader(fixture), 4)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, fmt.Sprintf("%d %s|%s|%s|%s|reach=%s|term=%v", e.Line, e.Block, e.Prefix, e.Name, e.RFC, e.GloballyReachable, e.IsTerminated()))
	}
	want := []string{
		`1 0.0.0.0/8|0.0.0.0/8|"This network"|[RFC791], Section 3.2|reach=False|term=false`,
		`2 127.0.0.0/8|127.0.0.0/8|Loopback|[RFC1122], Section 3.2.1.3|reach=False|term=false`,
		`3 192.0.0.0/24|192.0.0.0/24|IETF Protocol Assignments|[RFC6890], Section 2.1|reach=False|term=false`,
		`4 192.0.0.170/32|192.0.0.170/32|NAT64/DNS64 Discovery|[RFC8880][RFC7050], Section 2.2|reach=False|term=false`,
		`4 192.0.0.171/32|192.0.0.171/32|NAT64/DNS64 Discovery|[RFC8880][RFC7050], Section 2.2|reach=False|term=false`,
		`5 192.88.99.0/24|192.88.99.0/24|Deprecated (6to4 Relay Anycast)|[RFC7526]|reach=|term=true`,
		`6 255.255.255.255/32|255.255.255.255/32|Limited Broadcast|[RFC8190] [RFC919], Section 7|reach=False|term=false`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("parsed\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if es[1].Source != "False" || es[0].ReservedByProtocol != "True" {
		t.Errorf("footnotes or Boolean cells: %+v %+v", es[0], es[1])
	}
}

// A changed or broken registry is an error, never a short table.
func TestParseRejectsBrokenRegistry(t *testing.T) {
	head := strings.Join(Header, ",") + "\n"
	for name, in := range map[string]string{
		"empty":             "",
		"header only":       head,
		"renamed column":    strings.Replace(head, "Globally Reachable", "Global", 1) + "10.0.0.0/8,a,b,c,N/A,True,True,True,False,False\n",
		"missing column":    head + "10.0.0.0/8,a,b,c,N/A,True,True,True,False\n",
		"unknown flag":      head + "10.0.0.0/8,a,b,c,N/A,True,True,True,Maybe,False\n",
		"empty flag in use": head + "10.0.0.0/8,a,b,c,N/A,True,True,True,,False\n",
		"no termination":    head + "10.0.0.0/8,a,b,c,,True,True,True,False,False\n",
		"host bits":         head + "10.0.0.1/8,a,b,c,N/A,True,True,True,False,False\n",
		"bad block":         head + "10.0.0.0/33,a,b,c,N/A,True,True,True,False,False\n",
		"wrong family":      head + "fc00::/7,a,b,c,N/A,True,True,True,False,False\n",
	} {
		if es, err := Parse(strings.NewReader(in), 4); err == nil {
			t.Errorf("%s: accepted, %d entries", name, len(es))
		}
	}
}

// The copies kept here parse, and hold what the registries held when they
// were taken (README.md): 26 IPv4 blocks in 25 rows, 25 IPv6 blocks,
// among them RFC 9637's 3fff::/20 and RFC 9602's 5f00::/16.
func TestRegistryCopies(t *testing.T) {
	v4, v6, err := Registries()
	if err != nil {
		t.Fatal(err)
	}
	if len(v4) != 26 || len(v6) != 25 {
		t.Errorf("%d IPv4 and %d IPv6 blocks, want 26 and 25", len(v4), len(v6))
	}
	found := map[string]string{}
	for _, e := range slices.Concat(v4, v6) {
		found[e.Block] = e.GloballyReachable
	}
	for block, reach := range map[string]string{"3fff::/20": "False", "5f00::/16": "False", "100:0:0:1::/64": "False",
		"192.0.0.9/32": "True", "2002::/16": "N/A", "fc00::/7": "False", "::ffff:0:0/96": "False"} {
		if found[block] != reach {
			t.Errorf("%s: Globally Reachable %q, want %q", block, found[block], reach)
		}
	}
}
