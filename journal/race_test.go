//go:build race

package journal

// raceEnabled: under the race detector sync.Pool drops some of what it
// is given, on purpose.
const raceEnabled = true
