package backend

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
	// Chromium writes DevToolsActivePort once its DevTools server listens,
	// after it has forked its children: wait for it, up to 30 s.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "DevToolsActivePort")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			return "", 0, errors.New("no DevToolsActivePort from Chromium within 30 s")
		}
	}
	return dir, cmd.Process.Pid, writeOwner(dir, cmd.Process.Pid)
}
