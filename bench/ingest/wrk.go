package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

//go:embed wrk.lua
var wrkScript []byte

// load is one wrk invocation's settings; every target of a run gets the same ones.
type load struct {
	bin         string
	threads     int
	connections int
	script      string // path of wrk.lua written to a temporary file
}

// wrkArgs are the script's arguments after `--` (see wrk.lua).
type wrkArgs struct {
	mode, tag, private, public, slug, occurred, origin string
	batch                                              int
}

// wrkResult is what one run measured, from the BENCH line of wrk.lua's done() and the wrk process.
type wrkResult struct {
	Requests, Accepted, Other, LastOther int64
	Duration                             time.Duration
	P50, P90, P99, Max, Mean             time.Duration
	SocketErrors                         int64
	WrkCPU                               time.Duration // user + system time of the wrk process
	Raw                                  string
}

// AcceptedPerSec is the rate of 202 answers: only accepted work counts.
func (r wrkResult) AcceptedPerSec() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Accepted) / r.Duration.Seconds()
}

func writeScript(dir string) (string, error) {
	p := dir + "/wrk.lua"
	return p, os.WriteFile(p, wrkScript, 0o600)
}

// run runs wrk for d against url and parses its BENCH line.
func (l load) run(ctx context.Context, url string, d time.Duration, a wrkArgs) (wrkResult, error) {
	secs := max(1, int(d.Round(time.Second)/time.Second))
	args := []string{"-t", strconv.Itoa(l.threads), "-c", strconv.Itoa(l.connections), "-d", strconv.Itoa(secs) + "s",
		"--timeout", "10s", "--latency", "-s", l.script, url, "--",
		a.mode, a.tag, a.private, a.public, a.slug, a.occurred, strconv.Itoa(a.batch), a.origin}
	cmd := exec.CommandContext(ctx, l.bin, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w\n%s%s", url, err, out.String(), errb.String())
	}
	r, err := parseBench(out.String())
	if err != nil {
		return wrkResult{}, fmt.Errorf("wrk %s: %w\n%s%s", url, err, out.String(), errb.String())
	}
	r.WrkCPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return r, nil
}

// parseBench reads the BENCH line that wrk.lua's done() prints.
func parseBench(out string) (wrkResult, error) {
	r := wrkResult{Raw: out}
	var line string
	for l := range strings.Lines(out) {
		if strings.HasPrefix(l, "BENCH ") {
			line = strings.TrimSpace(l)
		}
	}
	if line == "" {
		return r, fmt.Errorf("no BENCH line in wrk output")
	}
	vals := map[string]int64{}
	for _, f := range strings.Fields(line)[1:] {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			return r, fmt.Errorf("bad field %q", f)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return r, fmt.Errorf("bad field %q: %w", f, err)
		}
		vals[k] = n
	}
	for _, k := range []string{"requests", "duration_us", "accepted", "other", "p50_us", "p99_us"} {
		if _, ok := vals[k]; !ok {
			return r, fmt.Errorf("BENCH line lacks %s", k)
		}
	}
	us := func(k string) time.Duration { return time.Duration(vals[k]) * time.Microsecond }
	r.Requests, r.Accepted, r.Other, r.LastOther = vals["requests"], vals["accepted"], vals["other"], vals["last_other"]
	r.Duration = us("duration_us")
	r.P50, r.P90, r.P99, r.Max, r.Mean = us("p50_us"), us("p90_us"), us("p99_us"), us("max_us"), us("mean_us")
	r.SocketErrors = vals["err_connect"] + vals["err_read"] + vals["err_write"] + vals["err_timeout"]
	return r, nil
}

// wrkVersion is the first line of `wrk -v`.
func wrkVersion(bin string) string {
	out, _ := exec.Command(bin, "-v").CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	if v, _, ok := strings.Cut(line, " Copyright"); ok {
		line = v
	}
	return strings.TrimSpace(line)
}
