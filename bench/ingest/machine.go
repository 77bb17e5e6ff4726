package main

import (
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
