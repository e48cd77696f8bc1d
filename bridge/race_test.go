//go:build race

package bridge

// raceEnabled: the race detector makes every copy of memory slow.
const raceEnabled = true
