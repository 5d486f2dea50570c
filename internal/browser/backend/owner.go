package backend

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The orphan reaper's identity rules (spec §B7, issue 9): a Chromium process
// is ours only when BOTH hold —
//
//  1. its argv carries --user-data-dir=D where D is a directory this package
//     made (os.TempDir()/ProfileMarker<owner pid>-…), and the browser process
//     also carries the owner flag --gatehouse-owner=<pid>:<start>;
//  2. D holds an owner record (OwnerFile) naming D, the owner process (pid and
//     start time) and the Chromium process (pid and start time).
//
// Never by process name, never a user's own Chrome (its user-data-dir is not
// ours). Identity is re-checked through a pidfd right before the kill, so a
// reused pid is never signalled.

// OwnerFile is the owner record's name inside a user-data-dir.
const OwnerFile = "gatehouse-owner.json"

// OwnerFlag is the argv marker Chromium's browser process carries:
// --gatehouse-owner=<owner pid>:<owner start time>.
const OwnerFlag = "gatehouse-owner"

// OwnerRecord is the content of OwnerFile (0600). Start times are
// /proc/<pid>/stat field 22 (clock ticks since boot): a pid with another
// start time is another process.
type OwnerRecord struct {
	Dir           string    `json:"user_data_dir"`
	OwnerPID      int       `json:"owner_pid"`
	OwnerStart    uint64    `json:"owner_start"`
	ChromiumPID   int       `json:"chromium_pid"`
	ChromiumStart uint64    `json:"chromium_start"`
	Created       time.Time `json:"created"`
}

// procStart returns the start time of pid (clock ticks since boot).
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[i+1:]))
	// After "pid (comm)": state is field 3, starttime field 22 → index 19.
	if len(f) < 20 {
		return 0, errors.New("short stat")
	}
	if f[0] == "Z" || f[0] == "X" {
		return 0, errors.New("zombie")
	}
	return strconv.ParseUint(f[19], 10, 64)
}

// selfStart returns this process's start time (0 if unreadable), read from
// /proc on first use rather than in package init (start-up cost).
var selfStart = sync.OnceValue(func() uint64 {
	st, _ := procStart(os.Getpid())
	return st
})

// ownerFlagValue is this process's OwnerFlag value.
func ownerFlagValue() string { return fmt.Sprintf("%d:%d", os.Getpid(), selfStart()) }

// writeOwner writes dir's owner record for Chromium process pid (0600).
func writeOwner(dir string, pid int) error {
	st, _ := procStart(pid)
	rec := OwnerRecord{Dir: dir, OwnerPID: os.Getpid(), OwnerStart: selfStart(), ChromiumPID: pid, ChromiumStart: st, Created: time.Now().UTC()}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+OwnerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, OwnerFile))
}

// ReadOwner reads dir's owner record.
func ReadOwner(dir string) (OwnerRecord, error) {
	var r OwnerRecord
	b, err := os.ReadFile(filepath.Join(dir, OwnerFile))
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return r, err
	}
	if filepath.Clean(r.Dir) != filepath.Clean(dir) {
		return r, fmt.Errorf("owner record names %q, not %q", r.Dir, dir)
	}
	return r, nil
}

// alive reports whether pid runs and started at start (start 0: any).
func alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := procStart(pid)
	return err == nil && (start == 0 || st == start)
}

// ReapOptions configures ReapOrphanDirs.
type ReapOptions struct {
	// Root is where profile dirs live (default os.TempDir()).
	Root string
	// Grace is how long a dir whose owner still lives (another process) must
	// be idle (newest mtime of the dir and its entries) before it is reaped;
	// 0 means never (spec §B7: max(3600 s, 20 × inactivity)).
	Grace time.Duration
	// Logger receives one record per reaped dir; nil discards.
	Logger *slog.Logger
}

// ReapResult says what a sweep did.
type ReapResult struct {
	Killed  []int    // pids signalled (SIGKILL), identity verified
	Removed []string // profile dirs removed
	Left    []string // dirs left for a later sweep (identity unverifiable, in grace)
}

// ReapOrphanDirs is the orphan reaper (spec §B7): for each profile dir of
// this package under Root that this process does not own —
//
//   - owner record present, owner dead (pid gone or started at another time),
//     or owner alive but the dir idle longer than Grace: every process
//     identified as ours (see the package rules above) is killed after a
//     pidfd identity re-check, then the dir is removed;
//   - no owner record (a launch that died before writing it): the dir is
//     removed when the owner pid in its name is dead and no process uses it;
//     processes using it cannot be identified by both marks and are left.
func ReapOrphanDirs(o ReapOptions) ReapResult {
	var res ReapResult
	root := o.Root
	if root == "" {
		root = os.TempDir()
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return res
	}
	self := os.Getpid()
	var users map[string][]procID // built lazily: one /proc scan per sweep
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), ProfileMarker) {
			continue
		}
		dir := filepath.Join(root, e.Name())
		ownerStr, _, _ := strings.Cut(strings.TrimPrefix(e.Name(), ProfileMarker), "-")
		namePID, _ := strconv.Atoi(ownerStr)
		rec, rerr := ReadOwner(dir)
		if namePID == self || (rerr == nil && rec.OwnerPID == self && rec.OwnerStart == selfStart()) {
			continue // tracked here
		}
		if users == nil {
			users = dirUsers()
		}
		procs := users[dir]
		if rerr != nil {
			if alive(namePID, 0) || len(procs) > 0 {
				res.Left = append(res.Left, dir)
				continue
			}
			if os.RemoveAll(dir) == nil {
				res.Removed = append(res.Removed, dir)
				lg.Info("orphan browser profile removed", "dir", dir, "why", "no owner record, owner gone")
			}
			continue
		}
		if alive(rec.OwnerPID, rec.OwnerStart) {
			if o.Grace <= 0 || !idleLonger(dir, o.Grace) {
				res.Left = append(res.Left, dir)
				continue
			}
		}
		want := OwnerFlag + "=" + strconv.Itoa(rec.OwnerPID) + ":" + strconv.FormatUint(rec.OwnerStart, 10)
		for _, p := range procs {
			// The browser process must carry the owner flag too; its children
			// carry the user-data-dir (Chromium passes it to every child).
			if p.pid == rec.ChromiumPID && p.start == rec.ChromiumStart && !p.hasArg("--"+want) {
				continue
			}
			if killVerified(p, dir) {
				res.Killed = append(res.Killed, p.pid)
			}
		}
		// Children may fork while the parent dies: look again briefly.
		deadline := time.Now().Add(2 * time.Second)
		for quiet := 0; quiet < 3 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			n := 0
			for _, p := range dirUsers()[dir] {
				if killVerified(p, dir) {
					res.Killed = append(res.Killed, p.pid)
					n++
				}
			}
			if n == 0 {
				quiet++
			} else {
				quiet = 0
			}
			reapZombies()
		}
		if removeAllRetry(dir) == nil {
			res.Removed = append(res.Removed, dir)
			lg.Info("orphan browser reaped", "dir", dir, "owner_pid", rec.OwnerPID, "killed", len(res.Killed))
		}
	}
	return res
}

// idleLonger reports whether dir and its top-level entries were all modified
// more than d ago (unknown → false: skip).
func idleLonger(dir string, d time.Duration) bool {
	st, err := os.Stat(dir)
	if err != nil {
		return false
	}
	newest := st.ModTime()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return time.Since(newest) > d
}

// procID is one process seen in a /proc scan.
type procID struct {
	pid   int
	start uint64
	args  [][]byte
}

func (p procID) hasArg(a string) bool {
	for _, x := range p.args {
		if string(x) == a {
			return true
		}
	}
	return false
}

// dirUsers maps each of this package's profile dirs to the live processes
// whose argv carries --user-data-dir=<dir>.
func dirUsers() map[string][]procID {
	prefix := []byte("--user-data-dir=")
	out := map[string][]procID{}
	forEachProc(func(pid int, args [][]byte) {
		for _, a := range args {
			rest, ok := bytes.CutPrefix(a, prefix)
			if !ok || !strings.HasPrefix(filepath.Base(string(rest)), ProfileMarker) {
				continue
			}
			st, err := procStart(pid)
			if err != nil {
				return
			}
			d := filepath.Clean(string(rest))
			out[d] = append(out[d], procID{pid: pid, start: st, args: args})
			return
		}
	})
	return out
}

// killVerified SIGKILLs p only if, holding a pidfd for it (so the pid cannot
// be reused under us), the process still has p's start time and still
// carries --user-data-dir=dir.
func killVerified(p procID, dir string) bool {
	fd, err := pidfdOpen(p.pid)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	if st, err := procStart(p.pid); err != nil || st != p.start {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
	if err != nil || !(procID{args: procArgs(b)}).hasArg("--user-data-dir="+dir) {
		return false
	}
	return pidfdKill(fd) == nil
}
