package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/revtrack/revtrack/bench/internal/benchkit"
)

// machine describes where the numbers were measured.
type machine struct {
	benchkit.Host
	Wrk     string
	LoadAvg string
}

func describeMachine(wrkBin string) machine {
	return machine{Wrk: wrkVersion(wrkBin), Host: benchkit.DescribeHost(), LoadAvg: benchkit.LoadAvg()}
}

// cpuSample is a snapshot of CPU time: the whole machine (busy and total, from /proc/stat), this
// process (revtrack in-process and the bare handler) and the stack's services, by pid file.
type cpuSample struct {
	at         time.Time
	busy, all  float64 // machine jiffies, summed over CPUs
	self       float64 // seconds
	services   map[string]float64
	serviceDir string
}

const clockTicks = 100 // USER_HZ on Linux

func sampleCPU(stackDir string) cpuSample {
	s := cpuSample{at: time.Now(), services: map[string]float64{}, serviceDir: stackDir}
	if b, err := os.ReadFile("/proc/stat"); err == nil {
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		for i, v := range f[1:] {
			n, _ := strconv.ParseFloat(v, 64)
			if i >= 8 { // guest time is already in user
				break
			}
			s.all += n
			if i != 3 && i != 4 { // idle, iowait
				s.busy += n
			}
		}
	}
	s.self = procCPU("self")
	if stackDir != "" {
		for _, svc := range []string{"kafka", "clickhouse", "redis"} {
			if b, err := os.ReadFile(filepath.Join(stackDir, svc+".pid")); err == nil {
				s.services[svc] = procCPU(strings.TrimSpace(string(b)))
			}
		}
	}
	return s
}

// procCPU is user + system seconds of /proc/<pid>/stat (all threads), or -1.
func procCPU(pid string) float64 {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return -1
	}
	// The command name may hold spaces; fields after its closing parenthesis are fixed.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return -1
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) / clockTicks
}

// cpuUse is where CPU went between two samples, in cores (CPU-seconds per wall second).
type cpuUse struct {
	Machine, Self, Wrk float64
	Services           map[string]float64
}

func cpuBetween(a, b cpuSample, wrkCPU time.Duration) cpuUse {
	wall := b.at.Sub(a.at).Seconds()
	u := cpuUse{Services: map[string]float64{}}
	if wall <= 0 {
		return u
	}
	if b.all > a.all {
		u.Machine = float64(runtime.NumCPU()) * (b.busy - a.busy) / (b.all - a.all)
	}
	u.Self = (b.self - a.self) / wall
	u.Wrk = wrkCPU.Seconds() / wall
	for k, v := range b.services {
		if p, ok := a.services[k]; ok && v >= 0 && p >= 0 {
			u.Services[k] = (v - p) / wall
		}
	}
	return u
}

// perRequest is the CPU time one request cost in this process and in every process the benchmark
// accounts for (itself, wrk and the stack's services), at rate requests per second.
func (u cpuUse) perRequest(rate float64) (self, all time.Duration) {
	if rate <= 0 {
		return 0, 0
	}
	sum := u.Self + u.Wrk
	for _, v := range u.Services {
		sum += v
	}
	return time.Duration(u.Self / rate * float64(time.Second)), time.Duration(sum / rate * float64(time.Second))
}

func (u cpuUse) String() string {
	other := u.Machine - u.Self - u.Wrk
	s := fmt.Sprintf("machine %.2f of %d cores: bench process %.2f, wrk %.2f", u.Machine, runtime.NumCPU(), u.Self, u.Wrk)
	for _, k := range []string{"kafka", "clickhouse", "redis"} {
		if v, ok := u.Services[k]; ok {
			s += fmt.Sprintf(", %s %.2f", k, v)
			other -= v
		}
	}
	return s + fmt.Sprintf(", rest (other processes, kernel) %.2f", max(other, 0))
}
