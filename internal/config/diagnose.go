package config

import (
	"errors"
	"io/fs"
	"os"

	"github.com/gatehouse-dev/gatehouse/internal/reason"
)

// Diagnostics is the state of a Gatehouse home's configuration, for
// `gatehouse doctor` and for any caller that must explain why the web tools
// refuse to run.
type Diagnostics struct {
	Home string // the home directory examined
	Path string // <Home>/config.yaml
	// Exists reports whether Path exists (a missing file is fine: defaults).
	Exists bool
	// Refusal is non-nil when the tools fail closed on this file: the
	// config_invalid error of [Invalid], naming file, line:column and fix.
	Refusal *reason.Error
	// Warnings are Load's warnings (ignored or adjusted keys); never fatal.
	Warnings []Warning
	// SharedFiles lists security.website_blocklist.shared_files (absolute
	// paths) and whether each exists. A missing one is only a warning: its
	// rules are skipped, the tools keep running (spec §A8). Empty when the
	// file does not load.
	SharedFiles []SharedFile
}

// SharedFile is one configured shared blocklist file.
type SharedFile struct {
	Path   string
	Exists bool
}

// OK reports whether the configuration loads (the tools will run).
func (d Diagnostics) OK() bool { return d.Refusal == nil }

// MissingSharedFiles returns the configured shared blocklist files that do
// not exist.
func (d Diagnostics) MissingSharedFiles() []string {
	var out []string
	for _, f := range d.SharedFiles {
		if !f.Exists {
			out = append(out, f.Path)
		}
	}
	return out
}

// Diagnose loads <home>/config.yaml as the tools do and reports what they
// would see. It never fails: every problem is in the result.
func Diagnose(home string) Diagnostics {
	d := Diagnostics{Home: home, Path: Path(home)}
	if _, err := os.Lstat(d.Path); err == nil {
		d.Exists = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		d.Exists = true // present but not even stat-able
	}
	cfg, warns, err := Load(home)
	d.Warnings = warns
	if err != nil {
		d.Refusal = Invalid(d.Path, err)
		return d
	}
	for _, f := range cfg.Security.WebsiteBlocklist.SharedFiles {
		_, serr := os.Stat(f)
		d.SharedFiles = append(d.SharedFiles, SharedFile{Path: f, Exists: serr == nil})
	}
	return d
}
