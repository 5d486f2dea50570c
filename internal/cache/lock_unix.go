//go:build unix

package cache

import (
	"errors"
	"os"
	"syscall"
)

// oNoFollow makes open(2) fail on a symlink at the final path component.
const (
	oNoFollow = syscall.O_NOFOLLOW
	oNonBlock = syscall.O_NONBLOCK // a planted FIFO must not block open(2)
)

// lockPath takes an exclusive flock(2) on path (created 0600 if missing;
// never through a symlink) and returns the function that releases it. The
// lock is per open file description, so it also excludes other *Cache
// values of this process; callers hold indexMu first.
func lockPath(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|oNoFollow|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
