//go:build !race

package acpclient

const raceEnabled = false
