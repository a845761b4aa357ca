#!/usr/bin/env bash
# soak.sh: an hour (or --duration) of churn against one `paddock server`:
# rounds of writes, reads, fair-lock hand-offs (ephemeral sequential nodes,
# one-shot watches) and a watch fan-out, each round opening and closing
# dozens of sessions, with a rest after each. At every rest it samples
# the server's goroutines, open file descriptors and RSS from its
# /metrics; at the end it fails if any of them grew (reliability plan,
# "one-hour soak: memory, goroutine count and file-descriptor count must
# stay flat").
#
# Usage: test/soak/soak.sh [--duration 1h] [--rest 35s] [--fsync] [--out DIR]
#
# Every bench run deletes its subtree, so the tree is the same size at
# each rest. The server returns its free heap to the OS after 5 s idle
# (--gc-idle-after 5s; a minute by default) and the rest (default 35 s) is
# longer than its 30 s minimum gap between such returns, so each RSS
# sample is taken at rest after one. Flat means: goroutines and
# file descriptors at the last rest at most those at the first plus
# SLACK_COUNT (5), and RSS at the last three rests (median) at most 20%
# plus 16 MiB above the first three's. Results: DIR/samples.tsv,
# DIR/rounds/*.json (paddock bench --json), DIR/server.log.
set -euo pipefail

DURATION=1h
REST=35s
SYNC=(--no-sync)
OUT=/tmp/paddock-soak-$(date +%Y%m%d-%H%M%S)
SLACK_COUNT=${SLACK_COUNT:-5}
while (($#)); do
	case $1 in
	--duration) DURATION=$2; shift 2 ;;
	--rest) REST=$2; shift 2 ;;
	--fsync) SYNC=(); shift ;;
	--out) OUT=$2; shift 2 ;;
	-h | --help) sed -n '2,20p' "$0"; exit 0 ;;
	*) echo "soak.sh: unknown argument $1" >&2; exit 2 ;;
	esac
done

log() { echo "soak: $*" >&2; }
die() { log "$*"; exit 1; }

# seconds parses 90, 90s, 15m or 2h.
seconds() {
	local v=$1
	case $v in
	*h) echo $((${v%h} * 3600)) ;;
	*m) echo $((${v%m} * 60)) ;;
	*s) echo "${v%s}" ;;
	*) echo "$v" ;;
	esac
}

cd "$(dirname "$0")/../.."
mkdir -p "$OUT/rounds"
PADDOCK=${PADDOCK_BIN:-$OUT/paddock}
if [[ -z ${PADDOCK_BIN:-} ]]; then
	log "building paddock into $PADDOCK"
	go build -o "$PADDOCK" ./cmd/paddock
fi

# free_port prints a free loopback port.
free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null ||
		echo $((20000 + RANDOM % 20000))
}
PORT=$(free_port)
ADMIN=$(free_port)
"$PADDOCK" server --port "$PORT" --admin-addr "127.0.0.1:$ADMIN" --data-dir "$OUT/data" \
	--max-client-cnxns 0 --gc-idle-after 5s "${SYNC[@]}" >"$OUT/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; wait $PID 2>/dev/null || true' EXIT

# metric NAME prints one sample of a Prometheus metric from /metrics
# (bash's /dev/tcp: no curl needed).
metrics() {
	exec 3<>"/dev/tcp/127.0.0.1/$ADMIN"
	printf 'GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
	cat <&3
	exec 3<&-
}
sample() {
	metrics | awk '/^go_goroutines /{g=$2} /^process_open_fds /{f=$2} /^process_resident_memory_bytes /{r=$2}
		END {printf "%d\t%d\t%d\n", g, f, r}'
}

deadline=$((SECONDS + 60))
until metrics >/dev/null 2>&1; do
	((SECONDS < deadline)) || die "the server did not start (see $OUT/server.log)"
	kill -0 $PID 2>/dev/null || die "the server exited (see $OUT/server.log)"
	sleep 0.2
done

rest=$(seconds "$REST")
end=$((SECONDS + $(seconds "$DURATION")))
printf 'round\telapsed_s\tgoroutines\tfds\trss_bytes\n' >"$OUT/samples.tsv"
round=0
log "server pid $PID on 127.0.0.1:$PORT, admin 127.0.0.1:$ADMIN; until $DURATION have passed; results in $OUT"
while ((SECONDS < end)); do
	round=$((round + 1))
	"$PADDOCK" bench --server "127.0.0.1:$PORT" --workload write,mixed,lock-fair,fanout \
		--clients 16 --contenders 50 --watchers 200 --duration 5s --warmup 1s --quiet \
		--json "$OUT/rounds/round-$round.json" >>"$OUT/bench.log" 2>&1 ||
		die "round $round: paddock bench failed (see $OUT/bench.log)"
	kill -0 $PID 2>/dev/null || die "round $round: the server exited (see $OUT/server.log)"
	sleep "$rest"
	printf '%d\t%d\t%s\n' "$round" "$SECONDS" "$(sample)" >>"$OUT/samples.tsv"
	log "round $round: $(tail -1 "$OUT/samples.tsv" | cut -f3- | awk '{printf "goroutines %d, fds %d, rss %.1f MiB", $1, $2, $3/1048576}')"
done
((round >= 6)) || die "only $round rounds: give --duration room for at least 6 (each ~$((rest + 30)) s)"

column -t "$OUT/samples.tsv" >&2 || cat "$OUT/samples.tsv" >&2
awk -v slack="$SLACK_COUNT" -F'\t' '
	NR == 1 { next }
	{ g[NR-1] = $3; f[NR-1] = $4; r[NR-1] = $5; n = NR-1 }
	function med3(a, i,   x, y, z) { x = a[i]; y = a[i+1]; z = a[i+2]
		if ((x <= y && y <= z) || (z <= y && y <= x)) return y
		if ((y <= x && x <= z) || (z <= x && x <= y)) return x
		return z }
	END {
		r0 = med3(r, 1); r1 = med3(r, n-2)
		printf "goroutines %d -> %d, fds %d -> %d, rss (median of 3) %.1f -> %.1f MiB over %d rounds\n",
			g[1], g[n], f[1], f[n], r0/1048576, r1/1048576, n
		bad = 0
		if (g[n] > g[1] + slack) { print "FAIL: goroutines grew"; bad = 1 }
		if (f[n] > f[1] + slack) { print "FAIL: file descriptors grew"; bad = 1 }
		if (r1 > r0 * 1.2 + 16 * 1048576) { print "FAIL: RSS grew"; bad = 1 }
		if (!bad) print "flat"
		exit bad
	}' "$OUT/samples.tsv"
