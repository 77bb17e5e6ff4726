package deployfiles_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const clusterFile = "docker-compose.cluster.yml"

// revtrackEnv is the environment of the cluster file's migrate (every revtrack service shares it).
func revtrackEnv(t testing.TB, f composeFile) map[string]string {
	t.Helper()
	m, ok := f.Services["migrate"]
	if !ok {
		t.Fatal("no migrate service")
	}
	return m.env()
}

// TestClusterClickHouseTopology: REVTRACK_CLICKHOUSE_CLUSTER names a remote_servers cluster of 2
// shards x 2 replicas whose hosts are exactly the file's ClickHouse services, with
// internal_replication and the service user's credentials; each node's macros are its own place in
// that cluster; the nodes use the Keeper ensemble the file runs; the entry node is a first replica.
func TestClusterClickHouseTopology(t *testing.T) {
	f := loadCompose(t, clusterFile)
	env := revtrackEnv(t, f)
	nodes := f.servicesWithImage("clickhouse/clickhouse-server")
	if len(nodes) != 4 {
		t.Fatalf("ClickHouse services %v, want 4", nodes)
	}
	const configTarget = "/etc/clickhouse-server/config.d/cluster.xml"
	source := f.Services[nodes[0]].mountedConfig(configTarget)
	for _, n := range nodes {
		if got := f.Services[n].mountedConfig(configTarget); got == "" || got != source {
			t.Fatalf("%s mounts %q at %s, want the same cluster config as every node", n, got, configTarget)
		}
	}
	cfg := parseXML(t, source, f.configFile(t, source))

	name := env["REVTRACK_CLICKHOUSE_CLUSTER"]
	cluster := cfg.at("remote_servers/" + name)
	if name == "" || cluster.XMLName.Local == "" {
		t.Fatalf("REVTRACK_CLICKHOUSE_CLUSTER=%q is not a remote_servers cluster of %s", name, source)
	}
	shards := cluster.all("shard")
	if len(shards) != 2 {
		t.Fatalf("cluster %s has %d shards, want 2", name, len(shards))
	}
	place := map[string][2]int{} // host -> shard number, replica position (both from 1)
	for i, sh := range shards {
		if sh.at("internal_replication").text() != "true" {
			t.Errorf("shard %d: internal_replication is not true: a Distributed insert would write both replicas", i+1)
		}
		replicas := sh.all("replica")
		if len(replicas) != 2 {
			t.Errorf("shard %d has %d replicas, want 2", i+1, len(replicas))
		}
		for j, r := range replicas {
			host := r.at("host").text()
			s, ok := f.Services[host]
			if !ok || !slices.Contains(nodes, host) {
				t.Errorf("shard %d replica %d: host %q is not a ClickHouse service of the file", i+1, j+1, host)
				continue
			}
			if _, dup := place[host]; dup {
				t.Errorf("%s is in the cluster twice", host)
			}
			place[host] = [2]int{i + 1, j + 1}
			if p := r.at("port").text(); p != "9000" {
				t.Errorf("%s: port %s, want the native port 9000", host, p)
			}
			nodeEnv := s.env()
			if r.at("user").value(nodeEnv) != env["REVTRACK_CLICKHOUSE_USERNAME"] || r.at("password").value(nodeEnv) != env["REVTRACK_CLICKHOUSE_PASSWORD"] {
				t.Errorf("%s: the cluster's credentials are not revtrack's service user", host)
			}
		}
	}
	macros := map[string]string{}
	for _, n := range nodes {
		s := f.Services[n]
		p, ok := place[n]
		if !ok {
			t.Errorf("%s is not in cluster %s", n, name)
			continue
		}
		if s.Hostname != n {
			t.Errorf("%s: hostname %q, want the service name (interserver host and remote_servers host)", n, s.Hostname)
		}
		nodeEnv := s.env()
		shard, replica := cfg.at("macros/shard").value(nodeEnv), cfg.at("macros/replica").value(nodeEnv)
		if shard != strconv.Itoa(p[0]) {
			t.Errorf("%s: macro shard %q, but remote_servers puts it in shard %d", n, shard, p[0])
		}
		key := shard + "/" + replica
		if replica == "" || macros[key] != "" {
			t.Errorf("%s: macros shard=%q replica=%q are empty or those of %s", n, shard, replica, macros[key])
		}
		macros[key] = n
		if c := cfg.at("macros/cluster").text(); c != name {
			t.Errorf("macro cluster %q, want %q", c, name)
		}
	}

	host, _, _ := strings.Cut(env["REVTRACK_CLICKHOUSE_ADDR"], ":")
	if p, ok := place[host]; !ok || p[1] != 1 {
		t.Errorf("REVTRACK_CLICKHOUSE_ADDR %q is not a first replica of cluster %s", env["REVTRACK_CLICKHOUSE_ADDR"], name)
	}
	if cfg.at("distributed_ddl/path").text() == "" {
		t.Error("no distributed_ddl path: ON CLUSTER statements would not run")
	}
	checkKeeper(t, f, cfg)
}

// checkKeeper: the nodes' <zookeeper> lists every Keeper service of the file at its client port,
// and the Keeper Raft configuration names each service with the id its environment gives it.
func checkKeeper(t *testing.T, f composeFile, cfg xnode) {
	keepers := f.servicesWithImage("clickhouse/clickhouse-keeper")
	if len(keepers) != 3 {
		t.Fatalf("Keeper services %v, want 3 (a quorum survives one down)", keepers)
	}
	source := f.Services[keepers[0]].mountedConfig("/etc/clickhouse-keeper/keeper_config.xml")
	kc := parseXML(t, source, f.configFile(t, source))
	port := kc.at("keeper_server/tcp_port").text()
	var zk []string
	for _, n := range cfg.at("zookeeper").all("node") {
		if p := n.at("port").text(); p != port {
			t.Errorf("zookeeper node %s: port %s, Keeper listens on %s", n.at("host").text(), p, port)
		}
		zk = append(zk, n.at("host").text())
	}
	slices.Sort(zk)
	if !slices.Equal(zk, keepers) {
		t.Errorf("the ClickHouse nodes' zookeeper hosts %v, the Keeper services %v", zk, keepers)
	}
	idVar := kc.at("keeper_server/server_id").attr("from_env")
	raft := map[string]string{}
	for _, s := range kc.at("keeper_server/raft_configuration").all("server") {
		raft[s.at("id").text()] = s.at("hostname").text()
	}
	for _, k := range keepers {
		s := f.Services[k]
		if s.mountedConfig("/etc/clickhouse-keeper/keeper_config.xml") != source {
			t.Errorf("%s does not mount %s", k, source)
		}
		for _, p := range []string{"log_storage_path", "snapshot_storage_path"} {
			if dir := kc.at("keeper_server/" + p).text(); !onVolume(s, dir) {
				t.Errorf("%s: %s %q is on no volume of the service: the Raft log would not survive a recreate", k, p, dir)
			}
		}
		id := s.env()[idVar]
		if raft[id] != k || s.Hostname != k {
			t.Errorf("%s: %s=%q, hostname %q; the Raft configuration gives that id to %q", k, idVar, id, s.Hostname, raft[id])
		}
	}
	if len(raft) != len(keepers) {
		t.Errorf("the Raft configuration has %d servers, the file %d Keeper services", len(raft), len(keepers))
	}
}

// TestClusterClickHouseProfile: the profile of the user revtrack connects as (the image's entrypoint
// gives it `default`) sets what cluster mode requires (internal/clickhousex refuses a connection
// without), on every node; the analyst profile too, since readonly users cannot SET it.
func TestClusterClickHouseProfile(t *testing.T) {
	f := loadCompose(t, clusterFile)
	want := map[string]string{"distributed_product_mode": "global", "load_balancing": "in_order"}
	for _, n := range f.servicesWithImage("clickhouse/clickhouse-server") {
		s := f.Services[n]
		src := s.mountedConfig("/etc/clickhouse-server/users.d/cluster-profile.xml")
		if src == "" {
			t.Errorf("%s mounts no users.d/cluster-profile.xml", n)
			continue
		}
		p := parseXML(t, src, f.configFile(t, src)).at("profiles/default")
		for k, v := range want {
			if got := p.at(k).text(); got != v {
				t.Errorf("%s: profile default %s = %q, want %q", n, k, got, v)
			}
		}
		src = s.mountedConfig("/etc/clickhouse-server/users.d/analyst.xml")
		a := parseXML(t, src, f.configFile(t, src))
		profile := a.at("users/analyst_all_workspaces/profile").text()
		for k, v := range want {
			if got := a.at("profiles/" + profile + "/" + k).text(); got != v {
				t.Errorf("%s: analyst profile %s = %q, want %q", n, k, got, v)
			}
		}
		if s.mountedConfig("/etc/clickhouse-server/users.d/no-default-user.xml") == "" {
			t.Errorf("%s keeps the passwordless default user", n)
		}
	}
}

// TestClusterKafkaQuorum: the controller quorum's voters are exactly the brokers (id, host and
// controller port), all of one cluster ID; revtrack bootstraps from every broker; topics get
// replication factor 3 and writes need 2 in-sync replicas, internal topics alike.
func TestClusterKafkaQuorum(t *testing.T) {
	f := loadCompose(t, clusterFile)
	brokers := f.servicesWithImage("apache/kafka")
	if len(brokers) != 3 {
		t.Fatalf("Kafka services %v, want 3", brokers)
	}
	var voters, advertised []string
	ids, clusterIDs := map[string]string{}, map[string]bool{}
	for _, b := range brokers {
		e := f.Services[b].env()
		if !strings.Contains(e["KAFKA_PROCESS_ROLES"], "controller") {
			t.Errorf("%s is not a controller", b)
		}
		if other, dup := ids[e["KAFKA_NODE_ID"]]; dup {
			t.Errorf("%s and %s share node ID %s", b, other, e["KAFKA_NODE_ID"])
		}
		ids[e["KAFKA_NODE_ID"]] = b
		clusterIDs[e["CLUSTER_ID"]] = true
		port := listenerPort(e["KAFKA_LISTENERS"], e["KAFKA_CONTROLLER_LISTENER_NAMES"])
		voters = append(voters, fmt.Sprintf("%s@%s:%s", e["KAFKA_NODE_ID"], b, port))
		advertised = append(advertised, strings.TrimPrefix(e["KAFKA_ADVERTISED_LISTENERS"], "PLAINTEXT://"))
		for k, v := range map[string]string{"KAFKA_DEFAULT_REPLICATION_FACTOR": "3", "KAFKA_MIN_INSYNC_REPLICAS": "2",
			"KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR": "3", "KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR": "3",
			"KAFKA_TRANSACTION_STATE_LOG_MIN_ISR": "2", "KAFKA_AUTO_CREATE_TOPICS_ENABLE": "false"} {
			if e[k] != v {
				t.Errorf("%s: %s=%q, want %s", b, k, e[k], v)
			}
		}
	}
	if len(clusterIDs) != 1 {
		t.Errorf("the brokers have %d cluster IDs", len(clusterIDs))
	}
	for _, b := range brokers {
		if got := strings.Split(f.Services[b].env()["KAFKA_CONTROLLER_QUORUM_VOTERS"], ","); !sameSet(got, voters) {
			t.Errorf("%s: quorum voters %v, the brokers are %v", b, got, voters)
		}
	}
	env := revtrackEnv(t, f)
	if got := strings.Split(env["REVTRACK_KAFKA_BROKERS"], ","); !sameSet(got, advertised) {
		t.Errorf("REVTRACK_KAFKA_BROKERS %v, the brokers advertise %v", got, advertised)
	}
	if env["REVTRACK_KAFKA_REPLICATION_FACTOR"] != strconv.Itoa(len(brokers)) {
		t.Errorf("REVTRACK_KAFKA_REPLICATION_FACTOR=%q for %d brokers", env["REVTRACK_KAFKA_REPLICATION_FACTOR"], len(brokers))
	}
}

// onVolume says whether path is on a named volume the service mounts.
func onVolume(s service, path string) bool {
	for _, v := range s.Volumes {
		src, target, _ := strings.Cut(v, ":")
		if !strings.HasPrefix(src, ".") && !strings.HasPrefix(src, "/") && path != "" &&
			(path == target || strings.HasPrefix(path, strings.TrimSuffix(target, "/")+"/")) {
			return true
		}
	}
	return false
}

// listenerPort is the port of the named listener in a KAFKA_LISTENERS list.
func listenerPort(listeners, name string) string {
	for _, l := range strings.Split(listeners, ",") {
		if n, addr, ok := strings.Cut(l, "://"); ok && n == name {
			return addr[strings.LastIndex(addr, ":")+1:]
		}
	}
	return ""
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestClusterRedisCluster: every Redis node of the file is a cluster node announcing its service
// name, the one-shot job forms the cluster from all of them (3 primaries, 1 replica each), and
// revtrack runs in cluster mode against nodes of the file.
func TestClusterRedisCluster(t *testing.T) {
	f := loadCompose(t, clusterFile)
	const confTarget = "/usr/local/etc/redis/redis.conf"
	var nodes []string
	for _, name := range f.servicesWithImage("redis") {
		s := f.Services[name]
		if len(s.Command) == 0 || s.Command[0] != "redis-server" {
			continue
		}
		nodes = append(nodes, name)
		conf := f.configFile(t, s.mountedConfig(confTarget))
		if !strings.Contains(conf, "\ncluster-enabled yes\n") || !strings.Contains(conf, "\nappendonly yes\n") {
			t.Errorf("%s: redis.conf lacks cluster-enabled yes or appendonly yes", name)
		}
		cmd := strings.Join(s.Command, " ")
		if !strings.Contains(cmd, "--cluster-announce-hostname "+name+" ") || s.Hostname != name {
			t.Errorf("%s announces another name than its service name: %s", name, cmd)
		}
		if !strings.Contains(cmd, "--requirepass") || !strings.Contains(cmd, "--masterauth") {
			t.Errorf("%s: a replica needs masterauth as clients need requirepass", name)
		}
	}
	init, ok := f.Services["redis-cluster-init"]
	if !ok {
		t.Fatal("no redis-cluster-init job")
	}
	formed := strings.Fields(init.env()["REDIS_NODES"])
	if !sameSet(formed, nodes) || len(nodes) != 6 {
		t.Errorf("redis-cluster-init forms %v, the file runs %v (want 6: 3 primaries, 3 replicas)", formed, nodes)
	}
	script := strings.Join(init.Command, " ")
	if !strings.Contains(script, "--cluster-replicas 1") || !strings.Contains(script, "$REDIS_NODES") {
		t.Errorf("redis-cluster-init does not create 3 primaries with a replica each from REDIS_NODES: %s", script)
	}
	for _, n := range nodes {
		if init.DependsOn[n].Condition != "service_healthy" {
			t.Errorf("redis-cluster-init does not wait for %s", n)
		}
	}
	env := revtrackEnv(t, f)
	if env["REVTRACK_REDIS_CLUSTER"] != "true" {
		t.Error("REVTRACK_REDIS_CLUSTER is not true")
	}
	for _, a := range strings.Split(env["REVTRACK_REDIS_ADDR"], ",") {
		if h, p, _ := strings.Cut(a, ":"); !slices.Contains(nodes, h) || p != "6379" {
			t.Errorf("REVTRACK_REDIS_ADDR lists %q, not a Redis node of the file", a)
		}
	}
	if f.Services["migrate"].DependsOn["redis-cluster-init"].Condition != "service_completed_successfully" {
		t.Error("migrate does not wait for the Redis Cluster to be formed")
	}
}

// TestSingleNodeStaysSingleNode: the single-node example sets no cluster mode.
func TestSingleNodeStaysSingleNode(t *testing.T) {
	f := loadCompose(t, composeFiles[0])
	for name, s := range f.Services {
		e := s.env()
		if e["REVTRACK_CLICKHOUSE_CLUSTER"] != "" || e["REVTRACK_REDIS_CLUSTER"] == "true" {
			t.Errorf("%s runs in cluster mode", name)
		}
	}
}
