//go:build race

package checkpoint

// raceEnabled: the race detector's shadow memory would be measured too.
const raceEnabled = true
