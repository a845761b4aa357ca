#!/usr/bin/env bash
# compare.sh — measure Paddock side by side with Apache ZooKeeper 3.8 (Debian
# package zookeeper) on this machine, in one run, with the same client
# (`paddock bench`, go-zookeeper), and print Paddock/ZooKeeper ratios.
#
#   test/bench/compare.sh [--quick] [--repeat N] [--out DIR] [--configs LIST] [--workloads LIST]
#
# Configurations (--configs, comma-separated; default all three):
#   standalone-fsync     one server each, every write fsynced
#   standalone-nofsync   ZooKeeper forceSync=no, paddock --no-sync
#   ensemble3-fsync      three nodes each on loopback, fsync on
# Both servers get tickTime 2000 and no per-IP connection limit
# (maxClientCnxns=0 / --max-client-cnxns 0), and run at the same time; each
# workload runs against ZooKeeper, then against Paddock, before the next.
# Every server is started fresh for each configuration (and again for
# scale, so RSS per znode is measured on a fresh process) and killed on exit.
#
# --workloads (default: all) picks from write,read,mixed,lock-fair,lock-herd,
# fanout,expiry,scale. expiry runs in the fsync configurations, scale
# (RSS per znode) in standalone-fsync only.
#
# --quick: short runs and smaller parameters (about 6 minutes); the full
# run takes about 30 minutes (scale samples each server's RSS 5.5 minutes
# after its last create, 75 s with --quick).
#
# --repeat N (default 1): run each workload N times, alternating the
# servers each time (ZooKeeper, Paddock, ZooKeeper, ...), and compare the
# median runs (by throughput; by time for fanout), with the errors of all
# runs. On a shared machine single runs move by ±20%; a median of 3 is not
# at the mercy of one disturbed run. expiry and scale run once (expiry's
# goal is about every session, and scale needs fresh servers). N=3 takes
# about 55 minutes.
#
# Results: DIR/<config>/{zookeeper,paddock}/<workload>.json (paddock bench
# --json), DIR/summary.{txt,md,json} (paddock bench compare), DIR/machine.txt,
# DIR/logs/. DIR defaults to /tmp/paddock-bench-<date>.
#
# Environment: ZK_HEAP (JVM -Xmx per ZooKeeper node; default "default": no
# -Xmx, the JVM sizes its heap itself, as Debian's zkServer.sh leaves it and
# as Paddock runs with no memory cap; e.g. ZK_HEAP=2g caps it, which makes
# ZooKeeper's RSS per znode smaller: 1M znodes do not fit the oracle's usual
# 512m), PADDOCK_BIN (a paddock binary to measure instead of building this
# tree), GO (go binary), JAVA (see zk.sh), KEEP_DATA=1 (keep the servers'
# data dirs under DIR/servers; by default each configuration's ZooKeeper
# version-2 and Paddock wal/snapshots dirs are deleted once its servers
# stop: a full run with 1M znodes leaves about 4 GB otherwise).
#
# On Debian as root it installs what it needs (apt-get install -y zookeeper);
# elsewhere it needs java, /usr/share/java/zookeeper.jar and go.
set -euo pipefail

REPO=$(cd "$(dirname "$0")/../.." && pwd)
cd "$REPO"
PROG=${0##*/}
ZKSH=$REPO/test/oracle/zk.sh
GO=${GO:-go}
export ZK_HEAP=${ZK_HEAP:-default}
KEEP_DATA=${KEEP_DATA:-0}
TICK_MS=2000

QUICK=0
REPEAT=1
OUT=""
CONFIGS="standalone-fsync,standalone-nofsync,ensemble3-fsync"
WORKLOADS="write,read,mixed,lock-fair,lock-herd,fanout,expiry,scale"

die() {
	echo "$PROG: $*" >&2
	exit 1
}
log() { echo "[$(date +%H:%M:%S)] $*" >&2; }

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//' >&2
	exit 64
}

while (($# > 0)); do
	case $1 in
	--quick) QUICK=1 ;;
	--out) OUT=${2:?}; shift ;;
	--repeat) REPEAT=${2:?}; shift ;;
	--configs) CONFIGS=${2:?}; shift ;;
	--workloads) WORKLOADS=${2:?}; shift ;;
	-h | --help) usage ;;
	*) echo "$PROG: unknown argument $1" >&2; usage ;;
	esac
	shift
done

if ((QUICK)); then
	DURATION=1s WARMUP=500ms CLIENTS=16,64 CONTENDERS=50,200 WATCHERS=100,1000
	ZNODES=100000 SESSIONS=6 PREWARM=1s EXPIRY_CONFIGS=standalone-fsync
	# a minute of Paddock's idle wait and a little: a snapshot check that
	# lands in it can still delay Paddock's return of its free heap
	RSS_SETTLE=75s
else
	DURATION=4s WARMUP=1s CLIENTS=1,16,64 CONTENDERS=10,50,200 WATCHERS=100,1000,10000
	ZNODES=1000000 SESSIONS=20 PREWARM=6s EXPIRY_CONFIGS=standalone-fsync,ensemble3-fsync
	RSS_SETTLE=5m30s # paddock bench's default: a snapshot check and a minute idle
fi
OUT=${OUT:-/tmp/paddock-bench-$(date +%Y%m%d-%H%M%S)}

[[ $REPEAT =~ ^[1-9][0-9]*$ ]] || die "--repeat wants a positive count, not $REPEAT"

has() { [[ ,$1, == *,$2,* ]]; }
for c in ${CONFIGS//,/ }; do
	case $c in standalone-fsync | standalone-nofsync | ensemble3-fsync) ;; *) die "unknown configuration $c" ;; esac
done
for w in ${WORKLOADS//,/ }; do
	case $w in write | read | mixed | lock-fair | lock-herd | fanout | expiry | scale) ;; *) die "unknown workload $w" ;; esac
done

# --- dependencies ------------------------------------------------------------

if [[ ! -r /usr/share/java/zookeeper.jar ]] || ! command -v java >/dev/null 2>&1; then
	if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
		log "installing Apache ZooKeeper (apt-get install -y zookeeper)"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq >/dev/null
		apt-get install -y -qq zookeeper >/dev/null
	else
		die "need Apache ZooKeeper: run as root on Debian, or apt-get install -y zookeeper"
	fi
fi
command -v "$GO" >/dev/null 2>&1 || die "go not found (set GO=/path/to/go)"

# 10,000 watchers are 10,000 sockets in the bench and in the server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

mkdir -p "$OUT/logs" "$OUT/servers"
if [[ -n ${PADDOCK_BIN:-} ]]; then
	PADDOCK=$PADDOCK_BIN
	[[ -x $PADDOCK ]] || die "PADDOCK_BIN=$PADDOCK is not executable"
	log "using $PADDOCK"
else
	PADDOCK=$OUT/paddock
	log "building paddock into $PADDOCK"
	"$GO" build -o "$PADDOCK" ./cmd/paddock
fi

# --- server management -------------------------------------------------------

PD_PIDS=()
# The servers whose CPU time each run counts, by label (set per configuration).
declare -A CPU_PIDS=()
ZK_DIRS=()

cleanup() {
	local pid i
	for pid in "${PD_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PD_PIDS[@]}"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
	done
	PD_PIDS=()
	local d
	for d in "${ZK_DIRS[@]}"; do
		"$ZKSH" stop "$d" >/dev/null 2>&1 || true
	done
	ZK_DIRS=()
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_ports() {
	python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
EOF
}

srvr() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	timeout 3 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$1" 2>/dev/null || true
}

# wait_modes PORT...: until every port answers srvr with a Mode, and one is
# leader or standalone.
wait_modes() {
	local deadline=$((SECONDS + 60)) p out leader
	while :; do
		local ok=1
		leader=0
		for p in "$@"; do
			out=$(srvr "$p")
			[[ $out == *"Mode: "* ]] || ok=0
			[[ $out == *"Mode: leader"* || $out == *"Mode: standalone"* ]] && leader=1
		done
		((ok && leader)) && return 0
		((SECONDS < deadline)) || die "servers on ports $* not serving after 60s"
		sleep 0.2
	done
}

# start_zk DIR NODES SYNC: sets ZK_SERVERS and ZK_PID (node 1's JVM).
start_zk() {
	local dir=$1 nodes=$2 sync=$3 extra="" out
	[[ $sync == yes ]] || extra="forceSync=no"
	ZK_DIRS+=("$dir")
	if ((nodes == 1)); then
		out=$(ZK_EXTRA_CFG=$extra "$ZKSH" start "$dir" 2>>"$OUT/logs/zk.sh.log")
		ZK_PID=$(cat "$dir/zk.pid")
	else
		out=$(ZK_EXTRA_CFG=$extra "$ZKSH" start-ensemble "$dir" "$nodes" 2>>"$OUT/logs/zk.sh.log")
		ZK_PID=$(cat "$dir/node1/zk.pid")
	fi
	ZK_SERVERS=${out#ZK_ORACLE=}
	local ports=${ZK_SERVERS//127.0.0.1:/}
	# shellcheck disable=SC2086 # one port per word
	wait_modes ${ports//,/ }
}

# zk_pids DIR NODES: the JVMs' process ids, comma-separated.
zk_pids() {
	local dir=$1 nodes=$2 i pids=""
	if ((nodes == 1)); then
		cat "$dir/zk.pid"
		return
	fi
	for ((i = 1; i <= nodes; i++)); do
		pids+=${pids:+,}$(cat "$dir/node$i/zk.pid")
	done
	echo "$pids"
}

stop_zk() {
	local d
	for d in "${ZK_DIRS[@]}"; do
		"$ZKSH" stop "$d" >/dev/null 2>&1 || true
	done
	ZK_DIRS=()
}

# start_paddock DIR NODES SYNC: sets PD_SERVERS and PD_PID (node 1).
start_paddock() {
	local dir=$1 nodes=$2 sync=$3
	rm -rf "$dir"
	mkdir -p "$dir"
	local -a ports
	if ((nodes == 1)); then
		mapfile -t ports < <(free_ports 1)
		local -a args=(server --port "${ports[0]}" --data-dir "$dir/data" --tick "${TICK_MS}ms" --max-client-cnxns 0)
		[[ $sync == yes ]] || args+=(--no-sync)
		"$PADDOCK" "${args[@]}" >"$dir/paddock.log" 2>&1 &
		PD_PID=$!
		PD_PIDS+=("$PD_PID")
		PD_SERVERS=127.0.0.1:${ports[0]}
		wait_modes "${ports[0]}"
		return
	fi
	mapfile -t ports < <(free_ports $((4 * nodes)))
	local i lines="" clients=() admins=() force=yes
	[[ $sync == yes ]] || force=no
	for ((i = 0; i < nodes; i++)); do
		lines+="server.$((i + 1))=127.0.0.1:${ports[4 * i]}:${ports[4 * i + 1]};127.0.0.1:${ports[4 * i + 2]}"$'\n'
		clients+=("${ports[4 * i + 2]}")
		admins+=("${ports[4 * i + 3]}")
	done
	PD_SERVERS=""
	for ((i = 0; i < nodes; i++)); do
		local d=$dir/node$((i + 1))
		mkdir -p "$d"
		echo $((i + 1)) >"$d/myid"
		cat >"$d/zoo.cfg" <<EOF
tickTime=$TICK_MS
dataDir=$d
clientPort=${clients[i]}
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=$force
admin.serverAddress=127.0.0.1
admin.serverPort=${admins[i]}
$lines
EOF
		"$PADDOCK" server --config "$d/zoo.cfg" >"$d/paddock.log" 2>&1 &
		PD_PIDS+=($!)
		((i == 0)) && PD_PID=$!
		PD_SERVERS+=${PD_SERVERS:+,}127.0.0.1:${clients[i]}
	done
	wait_modes "${clients[@]}"
	# ZooKeeper's election makes the highest id (node N) the leader of a
	# fresh ensemble; Paddock's leader is whoever won. Move it to node N
	# too, so that client i meets a leader or a follower alike on both
	# (client 0, on node 1, always a follower).
	if [[ $(srvr "${clients[nodes - 1]}") != *"Mode: leader"* ]]; then
		"$PADDOCK" cluster --admin "127.0.0.1:${admins[0]}" transfer-leadership "$nodes" >>"$dir/transfer.log" 2>&1 ||
			die "could not move Paddock's leadership to node $nodes (see $dir/transfer.log)"
	fi
	local deadline=$((SECONDS + 60))
	until [[ $(srvr "${clients[nodes - 1]}") == *"Mode: leader"* ]]; do
		((SECONDS < deadline)) || die "Paddock's node $nodes did not become leader"
		sleep 0.2
	done
	wait_modes "${clients[@]}"
}

stop_paddock() {
	local pid i
	for pid in "${PD_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
	done
	for pid in "${PD_PIDS[@]}"; do
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	PD_PIDS=()
}

# --- benchmarking ------------------------------------------------------------

# bench CONFIG LABEL SERVERS PID WORKLOAD [extra paddock bench flags...]
bench() {
	local config=$1 label=$2 servers=$3 pid=$4 wl=$5
	shift 5
	local -a args=(bench --server "$servers" --workload "$wl" --label "$label"
		--duration "$DURATION" --warmup "$WARMUP" --clients "$CLIENTS" --contenders "$CONTENDERS"
		--watchers "$WATCHERS" --znodes "$ZNODES" --sessions "$SESSIONS" --rss-settle "$RSS_SETTLE"
		--tick "${TICK_MS}ms" --session-timeout "$((2 * TICK_MS))ms")
	[[ $pid == 0 ]] || args+=(--pid "$pid")
	# Every node's CPU time, for the servers' CPU per operation.
	[[ -z ${CPU_PIDS[$label]:-} ]] || args+=(--cpu-pid "${CPU_PIDS[$label]}")
	if [[ $config != - ]]; then
		mkdir -p "$OUT/$config/$label"
		local rep=${REP:-1} suffix=""
		((rep == 1)) || suffix=.r$rep
		args+=(--json "$OUT/$config/$label/$wl$suffix.json")
	fi
	args+=("$@")
	local logf=$OUT/logs/$config-$label-$wl${suffix:-}.txt
	[[ $config == - ]] && logf=$OUT/logs/prewarm-$label.txt
	if ! "$PADDOCK" "${args[@]}" >"$logf"; then
		log "WARNING: paddock bench against $label ($wl) failed; see $logf"
	fi
}

# prewarm: unrecorded load so the JVM's JIT (and Paddock's heap) are warm.
# A full run's 6 s of each operation fills Paddock's 256 MiB of GC headroom
# once (a page first touched costs ~30 us on a virtual machine here).
prewarm() {
	log "warm-up (not recorded)"
	bench - zookeeper "$ZK_SERVERS" 0 write,read --clients 16 --duration "$PREWARM" --warmup 0 --quiet
	bench - paddock "$PD_SERVERS" 0 write,read --clients 16 --duration "$PREWARM" --warmup 0 --quiet
}

# drop_data DIR: delete the stopped servers' data under DIR (not their logs)
# unless KEEP_DATA=1.
drop_data() {
	[[ $KEEP_DATA == 1 ]] && return
	find "$1" -type d \( -name version-2 -o -name wal -o -name snapshots \) -prune -exec rm -rf {} +
}

# run_config NAME NODES SYNC
run_config() {
	local name=$1 nodes=$2 sync=$3 wl
	local sdir=$OUT/servers/$name
	rm -rf "${OUT:?}/$name"
	log "== $name: starting ZooKeeper and Paddock ($nodes node(s), fsync $sync)"
	start_zk "$sdir/zookeeper" "$nodes" "$sync"
	start_paddock "$sdir/paddock" "$nodes" "$sync"
	CPU_PIDS[zookeeper]=$(zk_pids "$sdir/zookeeper" "$nodes")
	CPU_PIDS[paddock]=$(
		IFS=,
		echo "${PD_PIDS[*]}"
	)
	log "ZooKeeper $ZK_SERVERS (pids ${CPU_PIDS[zookeeper]}), Paddock $PD_SERVERS (pids ${CPU_PIDS[paddock]})"
	local zpid=$ZK_PID ppid=$PD_PID
	((nodes == 1)) || zpid=0 ppid=0
	prewarm
	for wl in write read mixed lock-fair lock-herd fanout expiry; do
		has "$WORKLOADS" "$wl" || continue
		[[ $wl == expiry ]] && ! has "$EXPIRY_CONFIGS" "$name" && continue
		local n=$REPEAT
		[[ $wl == expiry ]] && n=1
		for ((REP = 1; REP <= n; REP++)); do
			if ((n == 1)); then
				log "$name: $wl"
			else
				log "$name: $wl (run $REP of $n)"
			fi
			# The order swaps every run, so that what one server does
			# after its run (a snapshot, a GC cycle, returning memory)
			# falls into each other's window alike.
			if ((REP % 2 == 1)); then
				bench "$name" zookeeper "$ZK_SERVERS" "$zpid" "$wl"
				bench "$name" paddock "$PD_SERVERS" "$ppid" "$wl"
			else
				bench "$name" paddock "$PD_SERVERS" "$ppid" "$wl"
				bench "$name" zookeeper "$ZK_SERVERS" "$zpid" "$wl"
			fi
		done
		REP=1
	done
	stop_zk
	stop_paddock
	CPU_PIDS=()
	drop_data "$sdir"
	if [[ $name == standalone-fsync ]] && has "$WORKLOADS" scale; then
		log "== $name: scale ($ZNODES znodes) on fresh servers"
		start_zk "$sdir/zookeeper-scale" 1 "$sync"
		start_paddock "$sdir/paddock-scale" 1 "$sync"
		bench "$name" zookeeper "$ZK_SERVERS" "$ZK_PID" scale --keep
		bench "$name" paddock "$PD_SERVERS" "$PD_PID" scale --keep
		stop_zk
		stop_paddock
		drop_data "$sdir"
	fi
}

machine() {
	{
		echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "mode: $([[ $QUICK == 1 ]] && echo quick || echo full) (duration $DURATION, warmup $WARMUP per run; each workload run $REPEAT time(s), medians compared)"
		echo "cpus: $(nproc) x $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
		echo "memory: $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
		echo "kernel: $(uname -sr)"
		echo "os: $(sed -n 's/^PRETTY_NAME=//p' /etc/os-release 2>/dev/null | tr -d '"')"
		echo "disk: $(df -h "$OUT" | awk 'NR==2 {print $1}') ($(findmnt -no FSTYPE --target "$OUT" 2>/dev/null || echo '?'))"
		echo "java: $(java -version 2>&1 | head -1)"
		echo "zookeeper: $(java -cp /usr/share/java/zookeeper.jar org.apache.zookeeper.version.VersionInfoMain 2>/dev/null | head -1) (Debian package, $([[ $ZK_HEAP == default ]] && echo "JVM default heap, no -Xmx" || echo "-Xmx$ZK_HEAP"))"
		echo "go: $("$GO" version)"
		echo "paddock: $("$PADDOCK" version)"
		echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) (other processes share the CPUs)"
	} >"$OUT/machine.txt"
}

log "results in $OUT ($([[ $QUICK == 1 ]] && echo quick || echo full) mode)"
machine
dirs=()
for c in ${CONFIGS//,/ }; do
	case $c in
	standalone-fsync) run_config "$c" 1 yes ;;
	standalone-nofsync) run_config "$c" 1 no ;;
	ensemble3-fsync) run_config "$c" 3 yes ;;
	esac
	dirs+=("$OUT/$c")
done

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$OUT/machine.txt"
echo
cat "$OUT/machine.txt"
echo
"$PADDOCK" bench compare --markdown "$OUT/summary.md" --json "$OUT/summary.json" "${dirs[@]}" | tee "$OUT/summary.txt"
log "results: $OUT/summary.txt, $OUT/summary.md, $OUT/summary.json; raw: $OUT/<config>/*/*.json"
