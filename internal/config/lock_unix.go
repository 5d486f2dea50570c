//go:build unix

package config

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockHome takes an exclusive flock(2) on <home>/.config.yaml.lock (created
// 0600 if missing, never through a symlink) and returns its release. The lock
// is per open file description, so it serialises Sets across processes and
// across goroutines of one process alike. config.yaml itself cannot carry
// the lock: every Set replaces it by rename.
func lockHome(home string) (func(), error) {
	path := lockPath(home)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("config: lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("config: lock %s: %w", path, err)
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
