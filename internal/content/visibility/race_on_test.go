//go:build race

package visibility

const raceEnabled = true
