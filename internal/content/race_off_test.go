//go:build !race

package content

// raceEnabled loosens the timing bounds of the large-page tests: the race
// detector slows conversion about tenfold.
const raceEnabled = false
