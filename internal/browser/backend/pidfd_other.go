//go:build !linux

package backend

import "errors"

// Without pidfds no identity-checked kill is possible: the reaper kills nothing.
func pidfdOpen(int) (int, error) { return -1, errors.New("pidfd: not supported") }

func pidfdKill(int) error { return errors.New("pidfd: not supported") }
