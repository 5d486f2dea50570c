//go:build !unix

package config

import "sync"

var setMu sync.Mutex

// lockHome serialises Sets within this process only where flock(2) is
// unavailable; the atomic rename still keeps the file whole.
func lockHome(string) (func(), error) {
	setMu.Lock()
	return setMu.Unlock, nil
}
