package benchkit

import (
	"os"
	"runtime"
	"strconv"
	"strings"
)

// Host is what every report says about the machine it was measured on, so that numbers from
// different machines or Go versions are not compared as if they were alike.
type Host struct {
	CPUs   int
	Model  string
	MemGiB float64
	Kernel string
	Go     string
}

// DescribeHost reads the machine from /proc; what it cannot read stays empty.
func DescribeHost() Host {
	h := Host{CPUs: runtime.NumCPU(), Go: runtime.Version()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				h.Model = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for l := range strings.Lines(string(b)) {
			if v, ok := strings.CutPrefix(l, "MemTotal:"); ok {
				if f := strings.Fields(v); len(f) > 0 {
					kb, _ := strconv.ParseFloat(f[0], 64)
					h.MemGiB = kb / (1 << 20)
				}
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}

// LoadAvg is the 1, 5 and 15 minute load average, or "?": reports print it at the start and the
// end of a run because the machine is shared and a busy one explains slow numbers.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}
