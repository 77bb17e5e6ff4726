package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sharedStacks are stacks other people's work runs on: the suite kills services, so it refuses them.
var sharedStacks = map[string]bool{"dev": true, "test": true, "bench": true}

// stackCtl drives the suite's own local stack through deploy/local/stack: its addresses come from
// `stack env`, a service is killed through the pid file the script keeps, and `stack up` brings back
// whatever is not running (it starts only the missing services and waits until all three answer).
type stackCtl struct {
	script string // deploy/local/stack
	name   string // STACK_NAME
	dir    string // STACK_DIR, where <service>.pid and <service>.stime live
}

func newStackCtl(script, name, dir string) (stackCtl, error) {
	if sharedStacks[name] {
		return stackCtl{}, fmt.Errorf("stack %q is shared with other work and this suite kills its services: use STACK_NAME=faults", name)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return stackCtl{}, err
	}
	return stackCtl{script: script, name: name, dir: abs}, nil
}

func (s stackCtl) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, s.script, args...)
	cmd.Env = append(os.Environ(), "STACK_NAME="+s.name, "STACK_DIR="+s.dir)
	return cmd
}

// env returns the named variables of `stack env`. The script prints shell-quoted exports, so bash
// evaluates them and prints the values NUL-separated (a password may hold any character).
func (s stackCtl) env(ctx context.Context, names ...string) (map[string]string, error) {
	const prog = `eval "$("$0" env)" || exit 1; for v in "$@"; do printf '%s\0' "${!v}"; done`
	cmd := exec.CommandContext(ctx, "bash", append([]string{"-c", prog, s.script}, names...)...)
	cmd.Env = append(os.Environ(), "STACK_NAME="+s.name, "STACK_DIR="+s.dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s env: %w: %s", s.script, err, strings.TrimSpace(stderr.String()))
	}
	vals := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(vals) != len(names) {
		return nil, fmt.Errorf("%s env: got %d values for %d names", s.script, len(vals), len(names))
	}
	m := make(map[string]string, len(names))
	for i, n := range names {
		if vals[i] == "" {
			return nil, fmt.Errorf("%s env does not set %s", s.script, n)
		}
		m[n] = vals[i]
	}
	return m, nil
}

// up starts what is not running and waits until every service answers.
func (s stackCtl) up(ctx context.Context, log *os.File) error {
	cmd := s.command(ctx, "up")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("STACK_NAME=%s %s up: %w (log: %s)", s.name, s.script, err, log.Name())
	}
	return nil
}

// down stops every service of the stack.
func (s stackCtl) down(ctx context.Context, log *os.File) error {
	cmd := s.command(ctx, "down")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("STACK_NAME=%s %s down: %w (log: %s)", s.name, s.script, err, log.Name())
	}
	return nil
}

// lock makes this run the only suite run on the stack until the returned file is closed: two
// runs would kill each other's services and stop the stack under each other. A second run waits
// for the first, up to limit.
func (s stackCtl) lock(limit time.Duration) (*os.File, error) {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, ".suite.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(limit)
	for said := false; ; {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("another fault-suite run holds %s: %w", f.Name(), err)
		}
		if !said {
			progress("waiting for another fault-suite run on stack %s to end", s.name)
			said = true
		}
		time.Sleep(time.Second)
	}
}

// pid is the live process of a service, checked against the start time the script recorded so that
// a recycled pid is never taken for (or killed as) the service.
func (s stackCtl) pid(svc string) (int, error) {
	raw, err := os.ReadFile(filepath.Join(s.dir, svc+".pid"))
	if err != nil {
		return 0, fmt.Errorf("%s is not running (no pid file): %w", svc, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil || pid <= 1 {
		return 0, fmt.Errorf("%s: bad pid file %q", svc, raw)
	}
	want, err := os.ReadFile(filepath.Join(s.dir, svc+".stime"))
	if err != nil {
		return 0, fmt.Errorf("%s: no start time beside its pid file: %w", svc, err)
	}
	got, err := procStartTime(pid)
	if err != nil || got != strings.TrimSpace(string(want)) {
		return 0, fmt.Errorf("%s: pid %d is not the process the stack started", svc, pid)
	}
	return pid, nil
}

// kill sends SIGKILL to the service's process group (its own session, so children go too) and
// waits until the process is gone.
func (s stackCtl) kill(svc string) error {
	pid, err := s.pid(svc)
	if err != nil {
		return err
	}
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			return fmt.Errorf("kill -9 %s (pid %d): %w", svc, pid, err)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) still alive 10s after SIGKILL", svc, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// procStartTime is field 22 of /proc/<pid>/stat, what deploy/local/lib.sh records as <svc>.stime.
func procStartTime(pid int) (string, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "", err
	}
	i := bytes.LastIndexByte(raw, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return "", errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(raw[i+1:]))
	if len(f) < 20 {
		return "", errors.New("short /proc stat")
	}
	return f[19], nil
}

// processAlive is false for a gone process and for a zombie (nothing may reap it here).
func processAlive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(raw, ')')
	return i >= 0 && i+2 < len(raw) && raw[i+2] != 'Z'
}
