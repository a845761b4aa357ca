#!/usr/bin/env bash
# zk.sh — run a real Apache ZooKeeper 3.8 (Debian's `zookeeper` package) as a
# reference server ("oracle") for Paddock's differential and compatibility tests.
#
#   zk.sh start DIR                 standalone server on a free loopback port
#   zk.sh start-ensemble DIR N      N-node loopback ensemble (nodes in DIR/node1..N)
#   zk.sh stop DIR                  stop whatever start/start-ensemble started in DIR
#   zk.sh status DIR                print the `srvr` output of every node in DIR
#
# start and start-ensemble print exactly one line on stdout,
#   ZK_ORACLE=127.0.0.1:PORT[,127.0.0.1:PORT...]
# so a caller can do:
#   eval "$(test/oracle/zk.sh start /tmp/zkoracle)"; export ZK_ORACLE
# (eval alone only sets a shell variable; export it for `go test`). The line is
# plain KEY=VALUE, so it can also be appended to $GITHUB_ENV and the like.
# Everything else (progress, errors) goes to stderr.
#
# Environment:
#   ZK_TICK       tickTime in ms (default 2000)
#   ZK_PORT       client port for `start` (default: a free one chosen by the kernel)
#   ZK_HEAP       JVM -Xmx per node (default 512m; "default": no -Xmx, the
#                 JVM's own sizing, as Debian's zkServer.sh runs it)
#   ZK_TIMEOUT    seconds to wait for the server(s) to serve (default 30)
#   ZK_KEEP_DATA  if 1, keep DIR/data from a previous run (default: wiped)
#   ZK_EXTRA_CFG  extra zoo.cfg lines, newline-separated, appended to every
#                 node's zoo.cfg (default: none), e.g. ZK_EXTRA_CFG=forceSync=no
#   JAVA          java binary (default: java on PATH)
#   ZK_JARDIR     where the Debian jars are (default /usr/share/java)
#
# Requires java and /usr/share/java/zookeeper.jar (apt-get install -y zookeeper);
# exits 2 with a message on stderr if they are missing.
set -euo pipefail

JARDIR=${ZK_JARDIR:-/usr/share/java}
ZK_JAR=$JARDIR/zookeeper.jar
ZK_TICK=${ZK_TICK:-2000}
ZK_HEAP=${ZK_HEAP:-512m}
ZK_TIMEOUT=${ZK_TIMEOUT:-30}
# user "super", password "test"
SUPER_DIGEST='super:D/InIHSb7yEEbrWz8b9l71RjZJU='

PROG=${0##*/}

die() {
	echo "$PROG: $*" >&2
	exit 1
}

usage() {
	cat >&2 <<EOF
usage: $PROG start DIR
       $PROG start-ensemble DIR N
       $PROG stop DIR
       $PROG status DIR
EOF
	exit 64
}

require_java() {
	JAVA=${JAVA:-$(command -v java || true)}
	if [[ -z $JAVA || ! -x $JAVA ]]; then
		echo "$PROG: java not found; install Apache ZooKeeper from Debian: apt-get install -y zookeeper (pulls in a JRE)" >&2
		exit 2
	fi
	if [[ ! -r $ZK_JAR ]]; then
		echo "$PROG: $ZK_JAR not found; install Apache ZooKeeper from Debian: apt-get install -y zookeeper" >&2
		exit 2
	fi
	# The jar's manifest Class-Path covers the NIO server; the netty jars make
	# the Netty server usable too; slf4j-simple is the log binding (the
	# manifest has none, so without it nothing would be logged).
	CLASSPATH=$ZK_JAR
	local j
	for j in slf4j-simple netty-codec netty-resolver netty-transport-native-unix-common; do
		if [[ -r $JARDIR/$j.jar ]]; then
			CLASSPATH+=:$JARDIR/$j.jar
		fi
	done
}

# free_ports COUNT: print COUNT distinct free loopback TCP ports, one per line.
free_ports() {
	local count=$1
	if command -v python3 >/dev/null 2>&1 && python3 - "$count" <<'EOF' 2>/dev/null; then
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
for s in socks:
    s.close()
EOF
		return 0
	fi
	# Fallback: scan upwards from 21810 for ports nobody answers on.
	local port=21810 found=0
	while ((found < count && port < 65535)); do
		if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
			echo "$port"
			found=$((found + 1))
		fi
		port=$((port + 1))
	done
	((found == count)) || die "could not find $count free ports"
}

# fourlw PORT WORD: print the answer to a four-letter word (empty on failure).
fourlw() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf %s "$2" >&3 && cat <&3' _ "$1" "$2" 2>/dev/null || true
}

srvr() {
	fourlw "$1" srvr
}

alive() {
	[[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null
}

# write_cfg NODEDIR CLIENTPORT [SERVERLINES...]
write_cfg() {
	local dir=$1 port=$2
	shift 2
	{
		echo "tickTime=$ZK_TICK"
		echo "initLimit=10"
		echo "syncLimit=5"
		echo "dataDir=$dir/data"
		echo "clientPort=$port"
		echo "clientPortAddress=127.0.0.1"
		echo "admin.enableServer=false"
		echo "extendedTypesEnabled=true"
		echo "4lw.commands.whitelist=*"
		echo "maxClientCnxns=0"
		echo "DigestAuthenticationProvider.superDigest=$SUPER_DIGEST"
		if [[ -n ${ZK_EXTRA_CFG:-} ]]; then
			printf '%s\n' "$ZK_EXTRA_CFG"
		fi
		if (($# > 0)); then
			echo "standaloneEnabled=false"
			printf '%s\n' "$@"
		fi
	} >"$dir/zoo.cfg"
}

# ZK_HEAP=default leaves the heap to the JVM's ergonomics (no -Xmx), as
# Debian's zkServer.sh does.
ZK_HEAP_FLAG=("-Xmx$ZK_HEAP")
[[ $ZK_HEAP == default ]] && ZK_HEAP_FLAG=()

# launch NODEDIR: start the JVM in the background in its own session.
launch() {
	local dir=$1
	rm -f "$dir/zk.pid"
	# The inner shell writes its own pid and then execs java, so zk.pid is the
	# JVM's pid. stdin/stdout/stderr are detached so that $(zk.sh start ...)
	# returns as soon as the server is up.
	# shellcheck disable=SC2016 # expanded by the inner shell
	setsid nohup bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$dir/zk.pid" \
		"$JAVA" ${ZK_HEAP_FLAG[@]+"${ZK_HEAP_FLAG[@]}"} -Dfile.encoding=UTF-8 \
		"-Dorg.slf4j.simpleLogger.logFile=$dir/zookeeper.log" \
		-cp "$CLASSPATH" \
		org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg" \
		</dev/null >"$dir/zookeeper.out" 2>&1 &
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -s $dir/zk.pid ]] && return 0
		sleep 0.1
	done
	die "could not start java (no pid file in $dir)"
}

# wait_serving DEADLINE NODEDIR PORT...: poll srvr until every node prints
# Mode:. Returns 0 when all serve, 3 if a port is served by someone else, 1 on
# failure (a node exited or the deadline passed).
wait_serving() {
	local deadline=$1
	shift
	local -a dirs=() ports=()
	while (($# > 0)); do
		dirs+=("$1")
		ports+=("$2")
		shift 2
	done
	local i out pending
	while :; do
		pending=0
		for i in "${!ports[@]}"; do
			if ! alive "$(cat "${dirs[i]}/zk.pid" 2>/dev/null)"; then
				echo "$PROG: ZooKeeper in ${dirs[i]} exited during startup; last log lines:" >&2
				tail -n 30 "${dirs[i]}/zookeeper.out" "${dirs[i]}/zookeeper.log" >&2 2>/dev/null || true
				return 1
			fi
			out=$(srvr "${ports[i]}")
			[[ $out == *"Mode:"* ]] || pending=1
		done
		if ((pending == 0)); then
			# Make sure each port is served by our JVM, not by some other
			# server that grabbed the port after free_ports released it.
			for i in "${!ports[@]}"; do
				out=$(fourlw "${ports[i]}" conf)
				if [[ $out != *"dataDir=${dirs[i]}/data"* ]]; then
					echo "$PROG: port ${ports[i]} is served by another ZooKeeper ($(grep '^dataDir=' <<<"$out" || echo 'unknown dataDir'))" >&2
					return 3
				fi
			done
			return 0
		fi
		if ((SECONDS >= deadline)); then
			echo "$PROG: ZooKeeper did not serve within ${ZK_TIMEOUT}s; last log lines:" >&2
			for i in "${!dirs[@]}"; do
				tail -n 20 "${dirs[i]}/zookeeper.out" "${dirs[i]}/zookeeper.log" >&2 2>/dev/null || true
			done
			return 1
		fi
		sleep 0.2
	done
}

node_dirs() {
	local d=$1
	[[ -f $d/zk.pid ]] && echo "$d"
	local n
	for n in "$d"/node*; do
		[[ -f $n/zk.pid ]] && echo "$n"
	done
	return 0
}

cmd_stop() {
	local top=$1 d pid i
	local -a pids=()
	[[ -d $top ]] || return 0
	while IFS= read -r d; do
		pid=$(cat "$d/zk.pid" 2>/dev/null || true)
		if alive "$pid"; then
			kill -TERM "$pid" 2>/dev/null || true
			pids+=("$pid")
		fi
		rm -f "$d/zk.pid"
	done < <(node_dirs "$top")
	rm -f "$top/zk.addr"
	((${#pids[@]} > 0)) || return 0
	for ((i = 0; i < 100; i++)); do # up to 10 s for a clean exit
		local left=0
		for pid in "${pids[@]}"; do
			alive "$pid" && left=1
		done
		((left == 0)) && return 0
		sleep 0.1
	done
	for pid in "${pids[@]}"; do
		kill -KILL "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 50; i++)); do
		local left=0
		for pid in "${pids[@]}"; do
			alive "$pid" && left=1
		done
		((left == 0)) && return 0
		sleep 0.1
	done
	die "could not stop pid(s) ${pids[*]}"
}

# refuse_if_running TOPDIR: fail before touching anything if a server that
# start/start-ensemble launched from TOPDIR is still alive.
refuse_if_running() {
	local d pid
	while IFS= read -r d; do
		pid=$(cat "$d/zk.pid" 2>/dev/null || true)
		if alive "$pid"; then
			die "a server is already running from $d (pid $pid); run: $PROG stop $1"
		fi
	done < <(node_dirs "$1")
}

prepare_dir() {
	local dir=$1
	mkdir -p "$dir"
	if [[ ${ZK_KEEP_DATA:-0} != 1 ]]; then
		rm -rf "$dir/data"
	fi
	mkdir -p "$dir/data"
	: >"$dir/zookeeper.log"
}

# bind_conflict DIR...: did a node fail because a port was taken meanwhile?
bind_conflict() {
	local d
	for d in "$@"; do
		grep -qs -e 'Address already in use' -e 'BindException' "$d/zookeeper.log" "$d/zookeeper.out" && return 0
	done
	return 1
}

# start_nodes TOPDIR N: one attempt at starting N nodes (N=0: standalone in
# TOPDIR itself). Sets ADDRS. Returns 0 on success, 3 if a port was taken
# between choosing and binding it (worth retrying), 1 otherwise.
start_nodes() {
	local top=$1 n=$2 i
	local -a dirs=() ports=() lines=() waitargs=()
	if ((n == 0)); then
		dirs=("$top")
		ports=("${ZK_PORT:-$(free_ports 1)}")
	else
		mapfile -t ports < <(free_ports $((3 * n)))
		((${#ports[@]} == 3 * n)) || die "could not allocate ports"
		for ((i = 1; i <= n; i++)); do
			dirs+=("$top/node$i")
			lines+=("server.$i=127.0.0.1:${ports[3 * (i - 1) + 1]}:${ports[3 * (i - 1) + 2]};127.0.0.1:${ports[3 * (i - 1)]}")
		done
	fi
	ADDRS=""
	for i in "${!dirs[@]}"; do
		local port=${ports[3 * i]}
		((n == 0)) && port=${ports[0]}
		prepare_dir "${dirs[i]}"
		((n == 0)) || echo "$((i + 1))" >"${dirs[i]}/data/myid"
		write_cfg "${dirs[i]}" "$port" "${lines[@]}"
		waitargs+=("${dirs[i]}" "$port")
		ADDRS+=${ADDRS:+,}127.0.0.1:$port
	done
	local deadline=$((SECONDS + ZK_TIMEOUT))
	for i in "${!dirs[@]}"; do
		launch "${dirs[i]}"
	done
	local rc=0
	wait_serving "$deadline" "${waitargs[@]}" || rc=$?
	((rc == 0)) && return 0
	cmd_stop "$top" || true
	if [[ -z ${ZK_PORT:-} ]] && { ((rc == 3)) || bind_conflict "${dirs[@]}"; }; then
		return 3
	fi
	return 1
}

# start_with_retry TOPDIR N: start_nodes, retrying with fresh ports when a
# chosen port was grabbed by someone else before ZooKeeper bound it.
start_with_retry() {
	local attempt rc
	for attempt in 1 2 3; do
		rc=0
		start_nodes "$1" "$2" || rc=$?
		case $rc in
		0) return 0 ;;
		3) echo "$PROG: a port was taken meanwhile; retrying with other ports (attempt $attempt)" >&2 ;;
		*) exit 1 ;;
		esac
	done
	exit 1
}

cmd_start() {
	local dir=$1
	require_java
	refuse_if_running "$dir"
	start_with_retry "$dir" 0
	echo "$ADDRS" >"$dir/zk.addr"
	echo "$PROG: ZooKeeper standalone serving on $ADDRS (pid $(cat "$dir/zk.pid"), log $dir/zookeeper.log)" >&2
	echo "ZK_ORACLE=$ADDRS"
}

cmd_start_ensemble() {
	local top=$1 n=$2
	[[ $n =~ ^[1-9][0-9]*$ ]] || die "N must be a positive integer, got '$n'"
	require_java
	refuse_if_running "$top"
	mkdir -p "$top"
	start_with_retry "$top" "$n"
	echo "$ADDRS" >"$top/zk.addr"
	echo "$PROG: ZooKeeper ensemble of $n serving on $ADDRS (logs $top/node*/zookeeper.log)" >&2
	echo "ZK_ORACLE=$ADDRS"
}

cmd_status() {
	local top=$1 d port rc=0
	while IFS= read -r d; do
		port=$(sed -n 's/^clientPort=//p' "$d/zoo.cfg")
		echo "== $d (pid $(cat "$d/zk.pid"), port $port)"
		srvr "$port" | grep -E '^(Zookeeper version|Mode|Zxid|Node count)' || {
			echo "(not answering)"
			rc=1
		}
	done < <(node_dirs "$top")
	return "$rc"
}

(($# >= 2)) || usage
[[ -n $2 ]] || usage
TOPDIR=$(realpath -m -- "$2")
case $1 in
start)
	(($# == 2)) || usage
	cmd_start "$TOPDIR"
	;;
start-ensemble)
	(($# == 3)) || usage
	cmd_start_ensemble "$TOPDIR" "$3"
	;;
stop)
	(($# == 2)) || usage
	cmd_stop "$TOPDIR"
	;;
status)
	(($# == 2)) || usage
	cmd_status "$TOPDIR"
	;;
*) usage ;;
esac
