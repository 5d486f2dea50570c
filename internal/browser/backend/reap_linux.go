//go:build linux

package backend

import (
	"os/exec"
	"syscall"
)

// setSubreaper makes this process the reaper of orphaned descendants
// (PR_SET_CHILD_SUBREAPER), so Chromium children that outlive the browser
// process are re-parented to us, killed by KillLeftovers and reaped, instead of
// lingering as zombies under init.
func setSubreaper() {
	const prSetChildSubreaper = 36
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0) //nolint:errcheck // best effort
}

func setPdeathsig(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
