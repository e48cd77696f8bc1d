package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkEventsFloodProcess is the acceptance measurement of the acprun
// row, whole processes as a user runs them: the acprun command with
// --events, its agent the flood agent (this test binary again) flooding
// eventsFloodChunks chunks, its lines read by a newline counter, timed from
// acprun's start to its exit with its journal, the agent's start and the
// handshake included; against the floor, the same agent process started
// with the same three requests on its stdin and its output read by the
// same newline counter (the pipe limit), alternately in the same run:
//
//	go test -run '^$' -bench EventsFloodProcess -benchtime 9x ./examples/acprun
//
// "x-pipe" is the floor's time over acprun's per round, min/median/max
// over the rounds, acprun run as a user runs it: its HOME apart from the
// workspace, so that it records a checkpoint before and after the turn
// when git is installed. "x-pipe-no-checkpoints" is the same with
// --checkpoints=false, the events path alone. "peak-MiB" is acprun's peak
// resident size (median, from /usr/bin/time when installed).
//
// Each round also runs both with no chunks at all, which splits a run in
// two: its start and end (process starts, handshake, journal, checkpoints,
// exit) and its flood. "x-pipe-start" is the floor's median time without
// chunks over acprun's; "x-pipe-flood" is what the chunks add to the
// floor's median over what they add to acprun's. The ratio of two sums
// lies between the ratios of their parts, so x-pipe lies between these
// two: a goal above both is out of reach until one of them passes it.
func BenchmarkEventsFloodProcess(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	home, workspace := filepath.Join(dir, "home"), filepath.Join(dir, "workspace")
	for _, d := range []string{home, workspace} {
		if err := os.Mkdir(d, 0o700); err != nil {
			b.Fatal(err)
		}
	}
	agentEnv := func(chunks int) string { return fmt.Sprintf("ACPHOST_FLOODAGENT=%d,0,false", chunks) }
	timeBin, _ := exec.LookPath("/usr/bin/time")
	rssFile := filepath.Join(dir, "rss")
	// run times cmd whole, its stdout read by a newline counter, and
	// returns its peak RSS in MiB when /usr/bin/time is there.
	run := func(cmd *exec.Cmd) (time.Duration, float64) {
		if timeBin != "" {
			// A child's own ru_maxrss starts from the peak of the process
			// it was forked from, this one; /usr/bin/time's child does not.
			cmd.Args = append([]string{timeBin, "-f", "%M", "-o", rssFile}, cmd.Args...)
			cmd.Path = timeBin
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		lines, err := countLines(out)
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%s: %v: %s", cmd.Args, err, stderr.Bytes())
		}
		wall := time.Since(start)
		if err != nil || lines < 3 {
			b.Fatalf("%s: %d lines, %v", cmd.Args, lines, err)
		}
		kib, _ := os.ReadFile(rssFile)
		n, _ := strconv.ParseFloat(strings.TrimSpace(string(kib)), 64)
		return wall, n / 1024
	}
	round := 0
	acprun := func(checkpoints bool, chunks int) (time.Duration, float64) {
		round++
		cmd := exec.Command(acprunBinary, "--events", "--checkpoints="+strconv.FormatBool(checkpoints), "--agent", exe, "--env", agentEnv(chunks),
			"--journal", filepath.Join(dir, fmt.Sprintf("j%d.db", round)), "--cwd", workspace, "flood")
		cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
		return run(cmd)
	}
	floor := func(chunks int) (time.Duration, float64) {
		cmd := exec.Command(exe)
		cmd.Env = []string{agentEnv(chunks)}
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}` + "\n" +
			`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"flood-1"}}` + "\n")
		return run(cmd)
	}
	acprun(true, eventsFloodChunks) // the first run of a binary is slower: warm up
	var ratios, plain, rss, acprunAll, acprunStart, floorAll, floorStart []float64
	for b.Loop() {
		// The runs of a round go in a rotating order, so that none is
		// always first after the machine's other work.
		var tA, tA0, tP, tF, tF0 time.Duration
		var m float64
		for k := range 5 {
			switch (len(ratios) + k) % 5 {
			case 0:
				tA, m = acprun(true, eventsFloodChunks)
			case 1:
				tP, _ = acprun(false, eventsFloodChunks)
			case 2:
				tF, _ = floor(eventsFloodChunks)
			case 3:
				tA0, _ = acprun(true, 0)
			case 4:
				tF0, _ = floor(0)
			}
		}
		ratios, plain, rss = append(ratios, tF.Seconds()/tA.Seconds()), append(plain, tF.Seconds()/tP.Seconds()), append(rss, m)
		acprunAll, acprunStart = append(acprunAll, tA.Seconds()), append(acprunStart, tA0.Seconds())
		floorAll, floorStart = append(floorAll, tF.Seconds()), append(floorStart, tF0.Seconds())
		b.Logf("round %d: acprun %.3fs %.1f MiB (no chunks %.3fs), without checkpoints %.3fs, pipe %.3fs (no chunks %.3fs), x-pipe %.3f (%.3f)",
			len(ratios), tA.Seconds(), m, tA0.Seconds(), tP.Seconds(), tF.Seconds(), tF0.Seconds(), ratios[len(ratios)-1], plain[len(plain)-1])
	}
	median := func(v []float64) float64 { slices.Sort(v); return v[len(v)/2] }
	b.ReportMetric(median(floorStart)/median(acprunStart), "x-pipe-start")
	b.ReportMetric((median(floorAll)-median(floorStart))/(median(acprunAll)-median(acprunStart)), "x-pipe-flood")
	slices.Sort(ratios)
	b.ReportMetric(median(plain), "x-pipe-no-checkpoints")
	b.ReportMetric(ratios[0], "x-pipe-min")
	b.ReportMetric(ratios[len(ratios)/2], "x-pipe")
	b.ReportMetric(ratios[len(ratios)-1], "x-pipe-max")
	b.ReportMetric(median(rss), "peak-MiB")
}

// countLines reads r to its end and counts its newlines.
func countLines(r io.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	lines := 0
	for {
		n, err := r.Read(buf)
		lines += bytes.Count(buf[:n], []byte{'\n'})
		if err == io.EOF {
			return lines, nil
		}
		if err != nil {
			return lines, err
		}
	}
}
