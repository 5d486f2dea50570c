//go:build unix

package truncate

import (
	"os"
	"syscall"
	"time"
)

const (
	oNoFollow = syscall.O_NOFOLLOW // open(2) fails on a symlink at the final path component
	oNonBlock = syscall.O_NONBLOCK // a planted FIFO must not block open(2)
)

// touch sets the access and modification times of the open file f to now.
func touch(f *os.File) error {
	tv := syscall.NsecToTimeval(time.Now().UnixNano())
	return syscall.Futimes(int(f.Fd()), []syscall.Timeval{tv, tv})
}

// singleLink reports whether fi is a file with exactly one hard link (so
// refreshing it cannot touch a file elsewhere that shares its inode).
func singleLink(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && st.Nlink == 1
}

// ownedBySelf reports whether fi belongs to the effective user.
func ownedBySelf(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
