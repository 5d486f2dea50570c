//go:build !unix

package cache

const (
	oNoFollow = 0
	oNonBlock = 0
)

// lockPath is a no-op where flock(2) is unavailable: index updates are then
// serialised within the process only (indexMu); the atomic rename still
// keeps the index whole.
func lockPath(path string) (func(), error) { return func() {}, nil }
