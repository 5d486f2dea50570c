package main

import (
	"fmt"
	"io"

	"github.com/gatehouse-dev/gatehouse/internal/principal"
)

// PrincipalsStatus is doctor's view of a --tokens file (`gatehouse doctor
// --tokens FILE`): whether `gatehouse mcp --tokens FILE` would start with
// it, and the principal names it holds. Never a token or a hash.
type PrincipalsStatus struct {
	File  string   `json:"file"`
	OK    bool     `json:"ok"`
	Names []string `json:"names"`
	// Error is why the file would refuse to start the server (mode, the
	// line that does not parse, a name or hash used twice).
	Error string `json:"error,omitempty"`
}

func principalsStatus(path string) *PrincipalsStatus {
	st := &PrincipalsStatus{File: path, Names: []string{}}
	toks, err := principal.ReadTokensFile(path)
	if err != nil {
		st.Error = err.Error()
		return st
	}
	st.OK, st.Names = true, toks.Names()
	return st
}

func printPrincipals(w io.Writer, st *PrincipalsStatus) {
	if st == nil {
		return
	}
	if !st.OK {
		fmt.Fprintf(w, "principals: %s: BROKEN (gatehouse mcp --tokens refuses to start)\n  %s\n\n", st.File, st.Error)
		return
	}
	fmt.Fprintf(w, "principals: %s: ok, %d (%v)\n\n", st.File, len(st.Names), st.Names)
}
