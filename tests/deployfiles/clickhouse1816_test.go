package deployfiles_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// serverConfig is the least a ClickHouse 18.16 server needs to start in a folder of its own.
const serverConfig = `<?xml version="1.0"?>
<yandex>
    <logger><level>warning</level><log>%[1]s/server.log</log><errorlog>%[1]s/server.err.log</errorlog></logger>
    <listen_host>127.0.0.1</listen_host>
    <tcp_port>%[2]d</tcp_port>
    <http_port>%[3]d</http_port>
    <path>%[1]s/data/</path>
    <tmp_path>%[1]s/tmp/</tmp_path>
    <user_files_path>%[1]s/user_files/</user_files_path>
    <format_schema_path>%[1]s/format_schemas/</format_schema_path>
    <users_config>%[1]s/users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <mark_cache_size>67108864</mark_cache_size>
    <uncompressed_cache_size>67108864</uncompressed_cache_size>
</yandex>
`

// imageUsers stands for what the server image's entrypoint writes: CLICKHOUSE_USER with its
// password and the `default` profile, beside the image's passwordless `default` user.
const imageUsers = `<?xml version="1.0"?>
<yandex>
    <profiles><default/></profiles>
    <quotas><default/></quotas>
    <users>
        <default><password/><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default>
        <%[1]s><password from_env="CLICKHOUSE_PASSWORD"/><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></%[1]s>
    </users>
</yandex>
`

var serviceHost = regexp.MustCompile(`<host>clickhouse-[a-z0-9-]+</host>`)

// TestClusterConfigLoadsInClickHouse1816: the local ClickHouse server (18.16, the oldest the project
// supports) loads one node's files of the cluster example with that node's environment: the cluster
// has 2 shards x 2 replicas with the service user, the macros are the node's, revtrack's and the
// analyst's profiles carry the cluster settings and the passwordless `default` user is gone. The
// service names do not resolve here, so the copy names 127.0.0.1 instead (18.16 refuses a cluster
// whose hosts it cannot resolve); everything else is the files as shipped.
func TestClusterConfigLoadsInClickHouse1816(t *testing.T) {
	bin, err := exec.LookPath("clickhouse-server")
	if err != nil {
		t.Skip("no clickhouse-server here (deploy/local/stack installs it)")
	}
	f := loadCompose(t, clusterFile)
	const node = "clickhouse-s2r2"
	s := f.Services[node]
	nodeEnv := s.env()
	dir := t.TempDir()
	for _, sub := range []string{"config.d", "users.d"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tcp, http := freePort(t), freePort(t)
	write(t, filepath.Join(dir, "config.xml"), fmt.Sprintf(serverConfig, dir, tcp, http))
	write(t, filepath.Join(dir, "users.xml"), fmt.Sprintf(imageUsers, nodeEnv["CLICKHOUSE_USER"]))
	for _, c := range s.Configs {
		text := f.configFile(t, c.Source)
		sub := filepath.Base(filepath.Dir(c.Target))
		if sub == "config.d" {
			text = serviceHost.ReplaceAllString(text, "<host>127.0.0.1</host>")
		}
		write(t, filepath.Join(dir, sub, filepath.Base(c.Target)), text)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--config-file="+filepath.Join(dir, "config.xml"))
	cmd.Env = os.Environ()
	for k, v := range nodeEnv {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})

	user, password := nodeEnv["CLICKHOUSE_USER"], nodeEnv["CLICKHOUSE_PASSWORD"]
	query := func(user, password, q string) (string, error) {
		out, err := exec.Command("clickhouse-client", "--host", "127.0.0.1", "--port", fmt.Sprint(tcp),
			"--user", user, "--password", password, "--query", q).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := query(user, password, "SELECT 1"); err == nil {
			break
		} else if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "server.err.log"))
			t.Fatalf("the server did not answer in 30 s: %v\n%s", err, log)
		}
		time.Sleep(200 * time.Millisecond)
	}

	name := revtrackEnv(t, f)["REVTRACK_CLICKHOUSE_CLUSTER"]
	checks := []struct{ user, password, query, want string }{
		{user, password, "SELECT groupArray(toString(shard_num) || '/' || toString(replica_num) || '/' || user) FROM system.clusters WHERE cluster = '" + name + "'",
			"['1/1/" + user + "','1/2/" + user + "','2/1/" + user + "','2/2/" + user + "']"},
		{user, password, "SELECT groupArray(macro || '=' || substitution) FROM (SELECT * FROM system.macros ORDER BY macro)",
			"['cluster=" + name + "','replica=" + nodeEnv["CLICKHOUSE_MACRO_REPLICA"] + "','shard=" + nodeEnv["CLICKHOUSE_MACRO_SHARD"] + "']"},
		{user, password, "SELECT groupArray(value) FROM (SELECT * FROM system.settings WHERE name IN ('distributed_product_mode', 'load_balancing') ORDER BY name)",
			"['global','in_order']"},
		{"analyst_all_workspaces", nodeEnv["CLICKHOUSE_ANALYST_PASSWORD"],
			"SELECT groupArray(value) FROM (SELECT * FROM system.settings WHERE name IN ('distributed_product_mode', 'load_balancing', 'readonly') ORDER BY name)",
			"['global','in_order','1']"},
	}
	for _, c := range checks {
		got, err := query(c.user, c.password, c.query)
		if err != nil || got != c.want {
			t.Errorf("%s: %s\n got %s (%v)\nwant %s", c.user, c.query, got, err, c.want)
		}
	}
	if out, err := query("default", "", "SELECT 1"); err == nil || !strings.Contains(out, "Unknown user default") {
		t.Errorf("the passwordless default user still answers: %s", out)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func write(t testing.TB, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
