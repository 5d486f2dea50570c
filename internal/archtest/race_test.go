//go:build race

package archtest

// raceEnabled: the test binary runs under the race detector.
const raceEnabled = true
