# Helpers for deploy/local/stack: logging, templates, pid files, detached launch, probes.
# Sourced, not executed. Expects STACK_NAME and STACK_DIR to be set.

log() { printf '[stack %s] %s\n' "$STACK_NAME" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# render <template> <dest> VAR... : replaces @VAR@ with $VAR.
# Pure bash so values with / | & need no escaping (quoted replacement = literal in bash 5.2).
render() {
	local src=$1 dst=$2 content var
	shift 2
	content=$(<"$src")
	for var in "$@"; do
		content=${content//"@${var}@"/"${!var}"}
	done
	if [[ $content =~ @[A-Z_]+@ ]]; then
		die "template $src: unreplaced placeholder ${BASH_REMATCH[0]}"
	fi
	printf '%s\n' "$content" >"$dst.tmp"
	mv -f "$dst.tmp" "$dst"
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# reserve_ports <port...>: asks the kernel not to give these ports to outgoing connections as their
# local port (net.ipv4.ip_local_reserved_ports), where that file may be written (root; a read-only
# /proc/sys is left alone). The bench, fault and cluster stacks listen above 32767, inside Linux's
# ephemeral range: a broker the cluster tests stopped could not bind its port again (EADDRINUSE)
# because a client connection had taken it as its local port meanwhile. Adds to what is reserved.
reserve_ports() {
	local f=/proc/sys/net/ipv4/ip_local_reserved_ports cur list
	[[ -w $f && $# -gt 0 ]] || return 0
	cur=$(<"$f") || return 0
	list=$(IFS=,; echo "$*")
	printf '%s\n' "${cur:+$cur,}$list" 2>/dev/null >"$f" || true
}

# ---- pid files --------------------------------------------------------------------------------
# <svc>.pid holds the pid; <svc>.stime the kernel start time of that pid, so that a recycled pid
# (after a reboot or a crash long ago) is never mistaken for, or killed as, one of ours.

pidfile() { printf '%s/%s.pid' "$STACK_DIR" "$1"; }

proc_stime() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) } # comm may contain spaces and parens
	set -- $stat
	printf '%s' "${20}"
}

# Zombies pass `kill -0`, and PID 1 here is not guaranteed to reap orphans.
pid_alive() {
	local stat
	{ read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	stat=${stat##*) }
	[[ ${stat:0:1} != Z ]]
}

# live_pid <svc>: prints the pid and succeeds if the service started by this stack is alive.
live_pid() {
	local f pid want
	[[ -n $1 ]] || return 1
	f=$(pidfile "$1")
	[[ -f $f ]] || return 1
	pid=$(<"$f")
	[[ $pid =~ ^[0-9]+$ ]] || return 1
	pid_alive "$pid" || return 1
	if [[ -f $STACK_DIR/$1.stime ]]; then
		want=$(<"$STACK_DIR/$1.stime")
		[[ $(proc_stime "$pid") == "$want" ]] || return 1
	fi
	printf '%s' "$pid"
}

forget_pid() { rm -f "$(pidfile "$1")" "$STACK_DIR/$1.stime"; }

# launch <svc> <logfile> <workdir> <cmd...>
# Fully detached: own session (setsid), stdin from /dev/null, stdout/stderr to the log, and every
# other inherited fd closed. CI harnesses (go test, GitHub Actions steps) wait until all writers of
# their pipes exit; an inherited pipe or our flock fd would tie them to the service's lifetime.
# The trampoline writes its own pid before exec, so the pid file is right even if setsid forks.
launch() {
	local svc=$1 logf=$2 wd=$3 pf i pid stime
	shift 3
	pf=$(pidfile "$svc")
	forget_pid "$svc"
	(
		cd "$wd"
		setsid nohup bash -c '
			pf=$1; shift
			for fd in /proc/$$/fd/*; do
				fd=${fd##*/}
				if (( fd > 2 )); then eval "exec ${fd}>&-"; fi
			done
			echo $$ >"$pf.tmp" && mv -f "$pf.tmp" "$pf"
			exec "$@"' stack-launch "$pf" "$@" </dev/null >>"$logf" 2>&1 &
	)
	for ((i = 0; i < 100; i++)); do
		if [[ -s $pf ]]; then
			pid=$(<"$pf")
			if stime=$(proc_stime "$pid"); then
				printf '%s\n' "$stime" >"$STACK_DIR/$svc.stime"
			fi
			return 0
		fi
		sleep 0.05
	done
	die "$svc: process did not start (see $logf)"
}

# stop_services <svc...>: SIGTERM to each service's process group, up to STOP_TIMEOUT s, then
# SIGKILL. The group is the session setsid created, so any children go too.
stop_services() {
	local svc pid deadline
	local -a left
	local -A pids=()
	for svc in "$@"; do
		if pid=$(live_pid "$svc"); then
			pids[$svc]=$pid
			log "stopping $svc (pid $pid)"
			kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
		else
			forget_pid "$svc"
		fi
	done
	deadline=$((SECONDS + ${STOP_TIMEOUT:-20}))
	while :; do
		left=()
		for svc in "${!pids[@]}"; do
			if pid_alive "${pids[$svc]}" || pgrep -s "${pids[$svc]}" >/dev/null 2>&1; then
				left+=("$svc")
			fi
		done
		((${#left[@]} == 0)) && break
		if ((SECONDS >= deadline)); then
			for svc in "${left[@]}"; do
				log "$svc did not stop within ${STOP_TIMEOUT:-20}s: SIGKILL"
				kill -KILL -- "-${pids[$svc]}" 2>/dev/null || kill -KILL "${pids[$svc]}" 2>/dev/null || true
			done
			sleep 0.5
			deadline=$((SECONDS + 5))
			STOP_TIMEOUT=5
			continue
		fi
		sleep 0.2
	done
	for svc in "${!pids[@]}"; do
		forget_pid "$svc"
		log "$svc stopped"
	done
}

# wait_answer <svc> <timeout-s>: polls <svc>_answers until it succeeds; fails early if the
# process dies, and shows the log tail either way.
wait_answer() {
	local svc=$1 limit=$2 start=$SECONDS
	while :; do
		if "${svc}_answers"; then
			return 0
		fi
		if ! live_pid "$svc" >/dev/null; then
			log "ERROR: $svc exited during startup"
			show_log_tail "$svc"
			return 1
		fi
		if ((SECONDS - start >= limit)); then
			log "ERROR: $svc did not answer within ${limit}s (pid $(live_pid "$svc"))"
			show_log_tail "$svc"
			return 1
		fi
		sleep 0.5
	done
}

show_log_tail() {
	local f files
	mapfile -t files < <("${1}_logs")
	for f in "${files[@]}"; do
		[[ -s $f ]] || continue
		printf -- '----- tail of %s -----\n' "$f" >&2
		tail -n 40 "$f" >&2
	done
}

# apt_install <pkg...>: waits for another dpkg/apt (e.g. a provisioning script) instead of failing,
# and refreshes the package lists only if the install fails without them.
apt_install() {
	local sudo=()
	if ((EUID != 0)); then
		command -v sudo >/dev/null || die "need root (or sudo) to apt-get install $*"
		sudo=(sudo -n)
	fi
	local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -y -q)
	log "installing: $*"
	if ! "${apt[@]}" install "$@" </dev/null >&2; then
		log "apt-get install failed; running apt-get update and retrying"
		"${apt[@]}" update </dev/null >&2
		"${apt[@]}" install "$@" </dev/null >&2
	fi
}

# ---- shared by stack and cluster ---------------------------------------------------------------
# Expect SCRIPT_DIR, CH_DIR and the CLICKHOUSE_* user settings of the caller.

clickhouse_server_cmd() {
	# Debian 12 ships /usr/sbin/clickhouse-server (often not on a non-root PATH); newer packages
	# ship only the multi-call `clickhouse server`.
	if command -v clickhouse-server >/dev/null; then
		CH_SERVER=(clickhouse-server)
	elif [[ -x /usr/sbin/clickhouse-server ]]; then
		CH_SERVER=(/usr/sbin/clickhouse-server)
	elif command -v clickhouse >/dev/null; then
		CH_SERVER=(clickhouse server)
	else
		return 1
	fi
}

# stack_secret <name> <override-var>: the value of <override-var> if set, else a password generated at
# the first call and kept in <stack dir>/clickhouse/<name>.password (mode 600). Two racing first calls
# agree: the first file written wins.
stack_secret() {
	local name=$1 override=$2
	if [[ -n ${!override:-} ]]; then
		printf '%s' "${!override}"
		return
	fi
	local f=$CH_DIR/$name.password
	if [[ ! -s $f ]]; then
		mkdir -p "$CH_DIR"
		(umask 077 && od -An -tx1 -N16 /dev/urandom | tr -d ' \n' >"$f.$$")
		mv -n "$f.$$" "$f"
		rm -f "$f.$$"
	fi
	cat "$f"
}

sha256_of() { printf '%s' "$1" | sha256sum | cut -d' ' -f1; }

# render_if_changed <template> <dest> VAR...: renders, and replaces dest only when the content changed,
# since every rewrite makes ClickHouse reload its users.
render_if_changed() {
	local src=$1 dst=$2
	shift 2
	render "$src" "$dst.new" "$@"
	if cmp -s "$dst.new" "$dst"; then
		rm -f "$dst.new"
		return 1
	fi
	mv -f "$dst.new" "$dst"
}

# clickhouse_users writes users.xml and users.d/{revtrack,analyst}.xml. ClickHouse watches them and
# reloads users within seconds, so this also applies to a server that is already running: `up` calls
# it every time (a stack started before `default` had a password gets one at the next `up`).
clickhouse_users() {
	local dir=$CH_DIR/users.d
	mkdir -p "$dir"
	DEFAULT_PASSWORD_SHA256=$(sha256_of "$(stack_secret default CLICKHOUSE_DEFAULT_PASSWORD)")
	render_if_changed "$SCRIPT_DIR/clickhouse/users.xml.tmpl" "$CH_DIR/users.xml" DEFAULT_PASSWORD_SHA256 &&
		log "wrote $CH_DIR/users.xml (user 'default' with the password in $CH_DIR/default.password)"
	SERVICE_USER=$CLICKHOUSE_SERVICE_USER
	SERVICE_PASSWORD_SHA256=$(sha256_of "$(stack_secret revtrack CLICKHOUSE_PASSWORD)")
	render_if_changed "$SCRIPT_DIR/clickhouse/revtrack.xml.tmpl" "$dir/revtrack.xml" SERVICE_USER SERVICE_PASSWORD_SHA256 &&
		log "wrote $dir/revtrack.xml (ClickHouse user '$SERVICE_USER' for revtrack)"
	ANALYST_USER=$CLICKHOUSE_ANALYST_USER
	ANALYST_DATABASE=$CLICKHOUSE_ANALYST_DATABASE
	ANALYST_PASSWORD_SHA256=$(sha256_of "$(stack_secret analyst CLICKHOUSE_ANALYST_PASSWORD)")
	render_if_changed "$SCRIPT_DIR/clickhouse/analyst.xml.tmpl" "$dir/analyst.xml" ANALYST_USER ANALYST_DATABASE ANALYST_PASSWORD_SHA256 &&
		log "wrote $dir/analyst.xml (read-only ClickHouse user '$ANALYST_USER' on every workspace of database $ANALYST_DATABASE)"
	return 0
}

# Serialises up/down of one stack (two CI jobs, or a user and a test, racing on the same dir).
take_lock() {
	mkdir -p "$STACK_DIR"
	exec 9>"$STACK_DIR/.lock"
	flock -w 600 9 || die "could not lock $STACK_DIR/.lock"
}
