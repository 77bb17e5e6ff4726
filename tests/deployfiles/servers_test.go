package deployfiles_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestClusterKafkaSettingsMatchTheLocalCluster: every KAFKA_* setting of the cluster file's brokers
// (the image turns KAFKA_A_B into the broker property a.b) is a property the local cluster's brokers
// set too (deploy/local/kafka/cluster.properties.tmpl, the shape the cluster tests run), with the same
// value where the local one is not per-host (replication, listeners' names, topic creation).
func TestClusterKafkaSettingsMatchTheLocalCluster(t *testing.T) {
	f := loadCompose(t, clusterFile)
	b, err := os.ReadFile(filepath.Join(deployDir(t), "local", "kafka", "cluster.properties.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	local := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(line, "#") {
			local[k] = v
		}
	}
	for _, broker := range f.servicesWithImage("apache/kafka") {
		for k, v := range f.Services[broker].env() {
			if !strings.HasPrefix(k, "KAFKA_") {
				continue
			}
			prop := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(k, "KAFKA_"), "_", "."))
			lv, ok := local[prop]
			switch {
			case !ok:
				t.Errorf("%s: %s (%s) is not set by the local cluster's brokers", broker, k, prop)
			case !strings.Contains(lv, "@") && prop != "log.dirs" && lv != v:
				t.Errorf("%s: %s=%s, the local cluster's brokers have %s=%s", broker, k, v, prop, lv)
			}
		}
	}
}

// TestClusterRedisConfLoads: the local Redis server (7.0; the example runs 7.4) starts from the
// cluster example's redis.conf with a node's command-line settings, in cluster mode with the
// settings the file means.
func TestClusterRedisConfLoads(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server here (deploy/local/stack installs it)")
	}
	f := loadCompose(t, clusterFile)
	s := f.Services["redis-1"]
	dir := t.TempDir()
	conf := filepath.Join(dir, "redis.conf")
	write(t, conf, f.configFile(t, s.mountedConfig("/usr/local/etc/redis/redis.conf")))
	port := freePort(t)
	// The node's own arguments, then this test's port and folder (later arguments win).
	args := append([]string{conf}, s.Command[2:]...)
	args = append(args, "--port", fmt.Sprint(port), "--dir", dir, "--bind", "127.0.0.1", "--cluster-port", fmt.Sprint(freePort(t)))
	for i, a := range args {
		args[i] = interpolate(a)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, args...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cancel()
		<-exited
	})
	password := s.env()["REDISCLI_AUTH"]
	cli := func(a ...string) (string, error) {
		c := exec.Command("redis-cli", append([]string{"-p", fmt.Sprint(port), "--no-auth-warning"}, a...)...)
		c.Env = append(os.Environ(), "REDISCLI_AUTH="+password)
		b, err := c.CombinedOutput()
		return strings.TrimSpace(string(b)), err
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, _ := cli("ping"); got == "PONG" {
			break
		}
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("redis-server refused the example's settings (%v):\n%s", err, out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("redis-server did not answer in 10 s:\n%s", out)
		}
	}
	for setting, want := range map[string]string{"cluster-enabled": "yes", "appendonly": "yes", "cluster-require-full-coverage": "no",
		"cluster-preferred-endpoint-type": "hostname", "cluster-announce-hostname": "redis-1", "masterauth": password} {
		got, err := cli("config", "get", setting)
		if err != nil || got != setting+"\n"+want {
			t.Errorf("config get %s: %q (%v), want %s", setting, got, err, want)
		}
	}
}
