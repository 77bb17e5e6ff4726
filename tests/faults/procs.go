package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// component is one revtrack component (`revtrack ingest|process|query|upload`) running as its own
// OS process, so that it can be killed like a crashed container and started again on the same port.
type component struct {
	name string // the subcommand
	bin  string
	addr string   // its --http-addr, the same across restarts
	args []string // flags after the subcommand
	env  []string
	log  *os.File // one per suite run; each start of the component appends to it

	cmd  *exec.Cmd
	done chan struct{} // closed when the current process has exited
}

func newComponent(name, bin string, args, env []string, logDir string) (*component, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(logDir+"/"+name+".log", os.O_CREATE|os.O_WRONLY|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &component{name: name, bin: bin, addr: addr, args: append([]string{"--http-addr", addr}, args...), env: env, log: f}, nil
}

func (c *component) baseURL() string { return "http://" + c.addr }

// start launches the process; ready waits for it to answer.
func (c *component) start() error {
	if c.running() {
		return fmt.Errorf("%s is already running", c.name)
	}
	fmt.Fprintf(c.log, "----- faults: start %s at %s\n", c.name, time.Now().UTC().Format(time.RFC3339Nano))
	cmd := exec.Command(c.bin, append([]string{c.name}, c.args...)...)
	cmd.Env = c.env
	cmd.Stdout, cmd.Stderr = c.log, c.log
	// Its own process group (a signal to the suite's terminal does not reach it twice), and killed
	// with the suite if the suite dies first, so no component outlives a run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", c.name, err)
	}
	c.cmd, c.done = cmd, make(chan struct{})
	done := c.done
	go func() { _ = cmd.Wait(); close(done) }()
	return nil
}

func (c *component) running() bool {
	if c.done == nil {
		return false
	}
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// ready waits until /readyz answers 200, for at most limit.
func (c *component) ready(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: 3 * time.Second}
	for {
		if !c.running() {
			return fmt.Errorf("%s exited before it was ready (log: %s)", c.name, c.log.Name())
		}
		if resp, err := client.Get(c.baseURL() + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (log: %s)", c.name, limit, c.log.Name())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// kill is kill -9: no drain, no commit, no flush.
func (c *component) kill() error {
	if !c.running() {
		return fmt.Errorf("%s is not running", c.name)
	}
	fmt.Fprintf(c.log, "----- faults: kill -9 %s at %s\n", c.name, time.Now().UTC().Format(time.RFC3339Nano))
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		return err
	}
	<-c.done
	return nil
}

// term is SIGTERM, then the component's own drain; after limit it is killed and that is an error.
func (c *component) term(limit time.Duration) error {
	if !c.running() {
		return fmt.Errorf("%s is not running", c.name)
	}
	fmt.Fprintf(c.log, "----- faults: SIGTERM %s at %s\n", c.name, time.Now().UTC().Format(time.RFC3339Nano))
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-c.done:
		if code := c.cmd.ProcessState.ExitCode(); code != 0 {
			return fmt.Errorf("%s exited with %d after SIGTERM (log: %s)", c.name, code, c.log.Name())
		}
		return nil
	case <-time.After(limit):
		_ = c.cmd.Process.Signal(syscall.SIGKILL)
		<-c.done
		return fmt.Errorf("%s did not stop within %s of SIGTERM (killed; log: %s)", c.name, limit, c.log.Name())
	}
}

// stop ends the component at the end of the run, whatever state it is in.
func (c *component) stop() error {
	defer c.log.Close()
	if !c.running() {
		return nil
	}
	return c.term(20 * time.Second)
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// stopAll stops every component at once (each has its own drain), reporting every failure.
func stopAll(cs []*component) error {
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c.stop() }()
	}
	wg.Wait()
	return errors.Join(errs...)
}
