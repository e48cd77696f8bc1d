//go:build linux

package acpclient

import (
	"context"
	"io"
	"testing"
)

// BenchmarkStartRelease measures what a terminal command costs from Start
// to its release (output read to the end, Close), for /bin/true: under its
// reaper (this test binary run again as the helper) and without one (the
// sentinel and the descendant record instead). Compare the two lines of one
// run: the ratio is the reaper's cost per command.
func BenchmarkStartRelease(b *testing.B) {
	for _, mode := range []struct {
		name     string
		noReaper bool
	}{{"reaper", false}, {"plain", true}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr := Command("/bin/true")
				tr.noReaper = mode.noReaper
				c, err := tr.Start(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.Copy(io.Discard, c); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
}

// BenchmarkConnectClose measures what an agent costs from Connect to the
// end of Close, for /bin/cat (which exits at its stdin's end): under its
// reaper and without one (the sentinel and the descendant record instead).
func BenchmarkConnectClose(b *testing.B) {
	for _, mode := range []struct {
		name     string
		noReaper bool
	}{{"reaper", false}, {"plain", true}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr := Command("/bin/cat")
				tr.noReaper = mode.noReaper
				rwc, err := tr.Connect(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				rwc.Close()
			}
		})
	}
}
