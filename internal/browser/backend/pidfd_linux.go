//go:build linux

package backend

import (
	"syscall"

	"golang.org/x/sys/unix"
)

func pidfdOpen(pid int) (int, error) { return unix.PidfdOpen(pid, 0) }

func pidfdKill(fd int) error { return unix.PidfdSendSignal(fd, syscall.SIGKILL, nil, 0) }
