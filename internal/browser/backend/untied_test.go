package backend

import (
	"os"
	"os/exec"
	"strconv"
	"time"
)

// LaunchUntiedForTest starts Chromium the way Launch does (Flags, the owner
// flag, a marked user-data-dir with an owner record) but with no death tie: no
// Pdeathsig, no CDP pipe. Only the orphan reaper's tests use it, to leave a
// real orphan behind a SIGKILLed owner.
func LaunchUntiedForTest(execPath, proxy, root string) (dir string, pid int, err error) {
	dir, err = os.MkdirTemp(root, ProfileMarker+strconv.Itoa(os.Getpid())+"-")
	if err != nil {
		return "", 0, err
	}
	args := []string{"--" + OwnerFlag + "=" + ownerFlagValue(), "--remote-debugging-port=0"}
	for k, v := range Flags(Options{DefaultProxy: proxy}, dir, os.Geteuid() != 0) {
		switch v := v.(type) {
		case bool:
			if v {
				args = append(args, "--"+k)
			}
		case string:
			args = append(args, "--"+k+"="+v)
		}
	}
	cmd := exec.Command(execPath, append(args, "about:blank")...)
	if err := cmd.Start(); err != nil {
		return "", 0, err
	}
	time.Sleep(500 * time.Millisecond) // let it fork its children
	return dir, cmd.Process.Pid, writeOwner(dir, cmd.Process.Pid)
}
