# shellcheck shell=bash
# The node kinds of deploy/local/cluster: <kind>_start|answers|ports|logs <arg>. Sourced, not executed.

# ---- zookeeper --------------------------------------------------------------------------------

zookeeper_ports() { echo "$ZK_PORT"; }
zookeeper_logs() { printf '%s\n' "$ZK_DIR/logs/zookeeper.log" "$ZK_DIR/logs/stdout.log"; }

zookeeper_start() {
	local ZK_DATA_DIR=$ZK_DIR/data
	mkdir -p "$ZK_DIR/logs" "$ZK_DATA_DIR"
	maven_libs "$SCRIPT_DIR/zookeeper/pom.xml" "$LIBS_DIR/zookeeper" 'zookeeper-3.*.jar'
	render "$SCRIPT_DIR/zookeeper/zoo.cfg.tmpl" "$ZK_DIR/zoo.cfg" ZK_DATA_DIR ZK_PORT
	# shellcheck disable=SC2086 # ZOOKEEPER_HEAP is a list of JVM flags
	launch zookeeper "$ZK_DIR/logs/stdout.log" "$ZK_DIR" \
		"$JAVA" $ZOOKEEPER_HEAP -XX:+UseG1GC -Djava.awt.headless=true \
		-Dzookeeper.log.dir="$ZK_DIR/logs" \
		-Dlog4j2.configurationFile="$SCRIPT_DIR/zookeeper/log4j2.xml" \
		-cp "$LIBS_DIR/zookeeper/*" org.apache.zookeeper.server.ZooKeeperServerMain "$ZK_DIR/zoo.cfg"
}

# `srvr` answers "Mode: standalone" only once the server serves requests (not just listens).
zookeeper_answers() {
	local out
	out=$(timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$ZK_PORT" 2>/dev/null) || return 1
	[[ $out == *"Mode: standalone"* ]]
}

# ---- clickhouse -------------------------------------------------------------------------------

ch_ports() { echo "$(ch_port tcp "$1") $(ch_port http "$1") $(ch_port interserver "$1")"; }
ch_logs() {
	local d=$CH_DIR/$1/log
	printf '%s\n' "$d/clickhouse-server.err.log" "$d/clickhouse-server.log" "$d/stdout.log"
}

ch_start() {
	local r=$1 sr=${1//[sr]/}
	local CLICKHOUSE_PORT CLICKHOUSE_HTTP_PORT CLICKHOUSE_INTERSERVER_PORT CH_SHARD=${sr:0:1} CH_REPLICA=$1
	local CH_S1R1_PORT CH_S1R2_PORT CH_S2R1_PORT CH_S2R2_PORT CLUSTER_USERS_XML=$CH_DIR/users.xml
	local SERVICE_USER=$CLICKHOUSE_SERVICE_USER SERVICE_PASSWORD
	SERVICE_PASSWORD=$(stack_secret revtrack CLICKHOUSE_PASSWORD)
	CLICKHOUSE_PORT=$(ch_port tcp "$r") CLICKHOUSE_HTTP_PORT=$(ch_port http "$r")
	CLICKHOUSE_INTERSERVER_PORT=$(ch_port interserver "$r")
	CH_S1R1_PORT=$(ch_port tcp s1r1) CH_S1R2_PORT=$(ch_port tcp s1r2)
	CH_S2R1_PORT=$(ch_port tcp s2r1) CH_S2R2_PORT=$(ch_port tcp s2r2)
	# The single-node template, rendered with the node's own directory as its CH_DIR.
	local CH_DIR=$CH_DIR/$r
	mkdir -p "$CH_DIR"/{data,tmp,user_files,format_schemas,log,config.d}
	render "$SCRIPT_DIR/clickhouse/config.xml.tmpl" "$CH_DIR/config.xml" \
		CH_DIR CLICKHOUSE_PORT CLICKHOUSE_HTTP_PORT CLICKHOUSE_INTERSERVER_PORT
	(
		umask 077
		render "$SCRIPT_DIR/clickhouse/cluster.xml.tmpl" "$CH_DIR/config.d/cluster.xml" \
			CLUSTER_USERS_XML CH_S1R1_PORT CH_S1R2_PORT CH_S2R1_PORT CH_S2R2_PORT \
			SERVICE_USER SERVICE_PASSWORD CH_SHARD CH_REPLICA ZK_PORT
	)
	launch "clickhouse-$r" "$CH_DIR/log/stdout.log" "$CH_DIR" \
		"${CH_SERVER[@]}" --config-file="$CH_DIR/config.xml"
}

ch_query() {
	timeout 15 clickhouse-client --host 127.0.0.1 --port "$(ch_port tcp "$1")" --user "$CLICKHOUSE_SERVICE_USER" \
		--password "$(stack_secret revtrack CLICKHOUSE_PASSWORD)" -q "$2" </dev/null 2>/dev/null
}

# The node answers a query that needs its ZooKeeper session: replication works, not only SELECT 1.
ch_answers() {
	[[ $(ch_query "$1" "SELECT count() > 0 FROM system.zookeeper WHERE path = '/'") == 1 ]]
}

# Every node knows the 4 nodes of cluster revtrack and its own shard/replica macros.
clickhouse_cluster_answers() {
	local r sr
	for r in "${CH_REPLICAS[@]}"; do
		sr=${r//[sr]/}
		[[ $(ch_query "$r" "SELECT count() FROM system.clusters WHERE cluster = 'revtrack'") == 4 ]] || return 1
		# getMacro() is newer than 18.16.
		[[ $(ch_query "$r" "SELECT macro, substitution FROM system.macros WHERE macro IN ('shard', 'replica') ORDER BY macro") == \
			"replica"$'\t'"$r"$'\n'"shard"$'\t'"${sr:0:1}" ]] || return 1
	done
}

# ---- kafka ------------------------------------------------------------------------------------

kafka_ports() { echo "$(kafka_port "$1") $(kafka_controller_port "$1")"; }
kafka_logs() { printf '%s\n' "$STACK_DIR/kafka-$1/logs/server.log" "$STACK_DIR/kafka-$1/logs/stdout.log"; }

kafka_start() {
	local id=$1 dir=$STACK_DIR/kafka-$1 i voters=()
	local KAFKA_NODE_ID=$1 KAFKA_VOTERS KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_DATA_DIR=$STACK_DIR/kafka-$1/data
	maven_libs "$SCRIPT_DIR/kafka/pom.xml" "$LIBS_DIR/kafka" 'kafka_2.13-*.jar'
	for i in "${KAFKA_IDS[@]}"; do voters+=("$i@127.0.0.1:$(kafka_controller_port "$i")"); done
	KAFKA_VOTERS=$(join_addrs "${voters[@]}")
	KAFKA_PORT=$(kafka_port "$id") KAFKA_CONTROLLER_PORT=$(kafka_controller_port "$id")
	mkdir -p "$dir/logs" "$KAFKA_DATA_DIR"
	render "$SCRIPT_DIR/kafka/cluster.properties.tmpl" "$dir/server.properties" \
		KAFKA_NODE_ID KAFKA_VOTERS KAFKA_PORT KAFKA_CONTROLLER_PORT KAFKA_DATA_DIR
	# Format exactly once, every node with the same cluster id: reformatting would wipe its topics.
	if [[ ! -f $KAFKA_DATA_DIR/meta.properties ]]; then
		log "formatting kafka-$id storage (cluster id $(kafka_cluster_id))"
		"$JAVA" -cp "$LIBS_DIR/kafka/*" kafka.tools.StorageTool format -t "$(kafka_cluster_id)" \
			-c "$dir/server.properties" </dev/null >>"$dir/logs/stdout.log" 2>&1 ||
			{ tail -n 20 "$dir/logs/stdout.log" >&2; die "kafka-$id storage format failed"; }
	fi
	# Where this start's lines begin in server.log, for kafka_answers.
	stat -c %s "$dir/logs/server.log" 2>/dev/null >"$dir/launch.logpos" || echo 0 >"$dir/launch.logpos"
	# shellcheck disable=SC2086 # KAFKA_HEAP is a list of JVM flags
	launch "kafka-$id" "$dir/logs/stdout.log" "$dir" \
		"$JAVA" $KAFKA_HEAP -XX:+UseG1GC -Djava.awt.headless=true \
		-Dkafka.logs.dir="$dir/logs" \
		-Dlog4j2.configurationFile="$SCRIPT_DIR/kafka/log4j2.xml" \
		-cp "$LIBS_DIR/kafka/*" kafka.Kafka "$dir/server.properties"
}

# A Kafka Uuid (16 random bytes, unpadded base64url, no leading '-'), generated once per cluster.
kafka_cluster_id() {
	local f=$STACK_DIR/kafka.cluster.id cid=-
	if [[ ! -s $f ]]; then
		while [[ $cid == -* ]]; do
			cid=$(head -c16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
		done
		printf '%s\n' "$cid" >"$f"
	fi
	cat "$f"
}

# A real API round trip through the node's own listener, and the node registered and unfenced.
# A broker this command has just launched answers once its server.log says, after the launch, that
# it has STARTED (Kafka logs that only after the controller unfenced it): the same fact without a
# JVM per poll, which costs seconds on a loaded machine. Any other broker gets the API round trip.
kafka_answers() {
	local dir=$STACK_DIR/kafka-$1 pos size
	port_open "$(kafka_port "$1")" || return 1
	if [[ " ${STARTED[*]:-} " == *" kafka-$1 "* && -s $dir/launch.logpos ]]; then
		pos=$(<"$dir/launch.logpos")
		size=$(stat -c %s "$dir/logs/server.log" 2>/dev/null) || size=0
		# A smaller file was rolled over since the launch: then ask the broker.
		if ((size >= pos)); then
			grep -q "\[BrokerServer id=$1\] Transition from STARTING to STARTED" < <(tail -c +"$((pos + 1))" "$dir/logs/server.log")
			return
		fi
	fi
	timeout 30 "$JAVA" -cp "$LIBS_DIR/kafka/*" org.apache.kafka.tools.BrokerApiVersionsCommand \
		--bootstrap-server "127.0.0.1:$(kafka_port "$1")" </dev/null 2>/dev/null |
		grep -Eq "^127\.0\.0\.1:$(kafka_port "$1") \(id: $1 rack: [^)]*isFenced: false\)"
}

# ---- redis ------------------------------------------------------------------------------------

redis_ports() { echo "$(redis_port "$1") $(redis_bus_port "$1")"; }
redis_logs() { printf '%s\n' "$STACK_DIR/redis-$1/redis.log" "$STACK_DIR/redis-$1/stdout.log"; }

redis_start() {
	local dir=$STACK_DIR/redis-$1
	local REDIS_PORT REDIS_BUS_PORT REDIS_DATA_DIR=$STACK_DIR/redis-$1/data REDIS_LOG=$STACK_DIR/redis-$1/redis.log
	REDIS_PORT=$(redis_port "$1") REDIS_BUS_PORT=$(redis_bus_port "$1")
	mkdir -p "$REDIS_DATA_DIR"
	render "$SCRIPT_DIR/redis/cluster.conf.tmpl" "$dir/redis.conf" REDIS_PORT REDIS_BUS_PORT REDIS_DATA_DIR REDIS_LOG
	launch "redis-$1" "$dir/stdout.log" "$REDIS_DATA_DIR" redis-server "$dir/redis.conf"
}

redis_info() { timeout 5 redis-cli -h 127.0.0.1 -p "$(redis_port "$1")" cluster info </dev/null 2>/dev/null | tr -d '\r'; }

# The node's view of the cluster: every slot served (by this node or the others it knows).
redis_answers() { [[ $(redis_info "$1") == *cluster_state:ok* ]]; }

# redis_form_cluster: once the three nodes answer, assigns the slots if no node has any yet (the first
# `up`); a formed cluster is remembered by each node in its nodes.conf.
redis_form_cluster() {
	local i info assigned=0 fresh=0 addrs=() deadline=$((SECONDS + START_TIMEOUT))
	for i in "${REDIS_IDS[@]}"; do
		until info=$(redis_info "$i") && [[ $info == *cluster_slots_assigned:* ]]; do
			live_pid "redis-$i" >/dev/null || { log "ERROR: redis-$i exited during startup"; show_log_tail "redis-$i"; return 1; }
			((SECONDS < deadline)) || { log "ERROR: redis-$i did not answer within ${START_TIMEOUT}s"; return 1; }
			sleep 0.3
		done
		info=$'\n'$info$'\n'
		[[ $info == *$'\ncluster_slots_assigned:0\n'* && $info == *$'\ncluster_known_nodes:1\n'* ]] && fresh=$((fresh + 1))
		[[ $info == *$'\ncluster_slots_assigned:16384\n'* ]] && assigned=$((assigned + 1))
		addrs+=("127.0.0.1:$(redis_port "$i")")
	done
	((assigned == ${#REDIS_IDS[@]})) && return 0
	if ((fresh != ${#REDIS_IDS[@]})); then
		log "ERROR: the Redis nodes are partly in a cluster (remove them with: $0 wipe)"
		return 1
	fi
	log "creating the Redis Cluster of ${addrs[*]}"
	timeout 60 redis-cli --cluster create "${addrs[@]}" --cluster-replicas 0 --cluster-yes </dev/null \
		>"$STACK_DIR/redis-cluster-create.log" 2>&1 ||
		{ tail -n 20 "$STACK_DIR/redis-cluster-create.log" >&2; log "ERROR: redis-cli --cluster create failed"; return 1; }
}
