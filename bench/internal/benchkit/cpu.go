package benchkit

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CPUSample is a snapshot of CPU time: the whole machine (busy and total, from /proc/stat), this
// process (revtrack in-process and whatever else the benchmark runs in it) and the stack's
// services, by pid file.
type CPUSample struct {
	at        time.Time
	busy, all float64 // machine jiffies, summed over CPUs
	self      float64 // seconds
	services  map[string]float64
}

const clockTicks = 100 // USER_HZ on Linux

// SampleCPU reads the CPU time spent so far; stackDir is the stack's state directory with the pid
// files of Kafka, ClickHouse and Redis ("" leaves the services out).
func SampleCPU(stackDir string) CPUSample {
	s := CPUSample{at: time.Now(), services: map[string]float64{}}
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

// CPUUse is where CPU went between two samples, in cores (CPU-seconds per wall second). Wrk is the
// load tool's share, 0 when no external tool ran.
type CPUUse struct {
	Machine, Self, Wrk float64
	Services           map[string]float64
}

// CPUBetween is the use between samples a and b; wrkCPU is the load tool's own CPU time over the
// same span (its rusage), or 0.
func CPUBetween(a, b CPUSample, wrkCPU time.Duration) CPUUse {
	wall := b.at.Sub(a.at).Seconds()
	u := CPUUse{Services: map[string]float64{}}
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

// PerRequest is the CPU time one request cost in this process and in every process the benchmark
// accounts for (itself, wrk and the stack's services), at rate requests per second.
func (u CPUUse) PerRequest(rate float64) (self, all time.Duration) {
	if rate <= 0 {
		return 0, 0
	}
	sum := u.Self + u.Wrk
	for _, v := range u.Services {
		sum += v
	}
	return time.Duration(u.Self / rate * float64(time.Second)), time.Duration(sum / rate * float64(time.Second))
}

func (u CPUUse) String() string {
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
