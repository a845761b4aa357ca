#!/usr/bin/env bash
# zkcli_smoke.sh HOST:PORT[,HOST:PORT...] — drive Apache ZooKeeper's Java CLI
# (org.apache.zookeeper.ZooKeeperMain, i.e. zkCli.sh, from Debian's `zookeeper`
# package) against a server and check its output.
#
# Most commands run as one JVM per command (`ZooKeeperMain -server ADDR cmd
# args...`, exit status 0 on success, 1 on a KeeperException). The ephemeral
# node check needs its session to stay open, so it runs one interactive session
# as a coprocess fed through stdin (Debian ships no jline, so ZooKeeperMain
# falls back to plain line reading), using the `version` command as an
# end-of-output marker after each command.
#
# Prints `PASS name` / `FAIL name: reason` per check, then `N passed, M failed`;
# exits 1 if anything failed, 2 if java or the ZooKeeper jars are missing.
#
# Environment:
#   ZKCLI_TIMEOUT  seconds allowed per CLI invocation / per session read (default 30)
#   ZKCLI_DEBUG=1  print the full CLI output of failing checks
#   JAVA           java binary (default: java on PATH)
#   ZK_JARDIR      where the Debian jars are (default /usr/share/java)
set -euo pipefail

PROG=${0##*/}
if (($# != 1)) || [[ -z $1 ]]; then
	echo "usage: $PROG HOST:PORT[,HOST:PORT...]" >&2
	exit 64
fi
ADDR=$1
TMO=${ZKCLI_TIMEOUT:-30}

JARDIR=${ZK_JARDIR:-/usr/share/java}
JAVA=${JAVA:-$(command -v java || true)}
if [[ -z $JAVA || ! -x $JAVA ]]; then
	echo "$PROG: java not found; install Apache ZooKeeper's CLI from Debian: apt-get install -y zookeeper" >&2
	exit 2
fi
if [[ ! -r $JARDIR/zookeeper.jar || ! -r $JARDIR/zookeeper-jute.jar ]]; then
	echo "$PROG: $JARDIR/zookeeper.jar / zookeeper-jute.jar not found; install: apt-get install -y zookeeper" >&2
	exit 2
fi
# zookeeper.jar's manifest Class-Path pulls in jute, netty, commons-cli,
# slf4j-api...; slf4j-nop only silences SLF4J's "no binding" warnings.
CP=$JARDIR/zookeeper.jar
[[ -r $JARDIR/slf4j-nop.jar ]] && CP+=:$JARDIR/slf4j-nop.jar
CLI=(timeout "$TMO" "$JAVA" -Xmx128m -cp "$CP" org.apache.zookeeper.ZooKeeperMain -server "$ADDR")

ROOT=/zkcli-$(date +%s)-$$-$RANDOM
PASSED=0
FAILED=0

pass() {
	echo "PASS $1"
	PASSED=$((PASSED + 1))
}

fail() {
	echo "FAIL $1: $2"
	FAILED=$((FAILED + 1))
	if [[ ${ZKCLI_DEBUG:-0} == 1 && -n ${OUT:-} ]]; then
		echo "    | ${OUT//$'\n'/$'\n'    | }"
	fi
}

# cli CMD ARGS...: run one CLI command; sets OUT (stdout+stderr: ZooKeeperMain
# prints "Created ..." and error messages on stderr) and RC.
cli() {
	RC=0
	OUT=$("${CLI[@]}" "$@" 2>&1) || RC=$?
}

# matches WANT_RC REGEX...: RC is WANT_RC and every extended regex matches
# some line of OUT.
matches() {
	local want=$1 re
	shift
	[[ $RC == "$want" ]] || return 1
	for re in "$@"; do
		grep -Eq -- "$re" <<<"$OUT" || return 1
	done
}

# expect NAME WANT_RC REGEX...: report whether the last command matches.
expect() {
	local name=$1 want=$2 re
	shift 2
	if [[ $RC != "$want" ]]; then
		fail "$name" "exit status $RC, want $want; output: $(summary)"
		return 1
	fi
	for re in "$@"; do
		if ! grep -Eq -- "$re" <<<"$OUT"; then
			fail "$name" "no line matching /$re/ in output: $(summary)"
			return 1
		fi
	done
	pass "$name"
}

# write NAME WANT_RC REGEX... -- runs "${CMD[@]}" once.
write() {
	cli "${CMD[@]}"
	expect "$@" || true
}

# read_ NAME WANT_RC REGEX... -- runs the read-only "${CMD[@]}" until it
# matches (up to 10 s while it connects): each invocation is a new session that
# may land on a different ensemble member, which may lag behind the last write.
read_() {
	local deadline=$((SECONDS + 10))
	while :; do
		cli "${CMD[@]}"
		matches "${@:2}" && break
		((SECONDS < deadline)) || break
		[[ $OUT == *"state:SyncConnected"* ]] || break
		sleep 0.3
	done
	expect "$@" || true
}

# summary: OUT without the connection chatter, on one line.
summary() {
	grep -Ev '^(Connecting to |WATCHER::|WatchedEvent state:SyncConnected|$)' <<<"$OUT" | tr '\n' '|' | cut -c1-400
}

cleanup() {
	if [[ -n ${SESSION_PID:-} ]] && kill -0 "$SESSION_PID" 2>/dev/null; then
		kill "$SESSION_PID" 2>/dev/null || true
	fi
	"${CLI[@]}" deleteall "$ROOT" >/dev/null 2>&1 || true
}
trap cleanup EXIT

# --- one command per JVM --------------------------------------------------

CMD=(ls /)
read_ "ls /" 0 '^\[(.*, )?zookeeper(, .*)?\]$'

CMD=(create "$ROOT" data)
write "create" 0 "^Created $ROOT\$"

CMD=(create "$ROOT" other)
write "create existing" 1 "Node already exists: $ROOT"

CMD=(get "$ROOT")
read_ "get" 0 '^data$'

CMD=(get -s "$ROOT")
read_ "get -s" 0 '^data$' '^dataVersion = 0$' '^dataLength = 4$' \
	'^ephemeralOwner = 0x0$' '^numChildren = 0$' '^cversion = 0$' '^cZxid = 0x[0-9a-f]+$'

CMD=(set "$ROOT" data2)
write "set" 0

CMD=(get -s "$ROOT")
read_ "get after set" 0 '^data2$' '^dataVersion = 1$' '^dataLength = 5$'

CMD=(set -s -v 1 "$ROOT" data3)
write "set -s -v (matching version)" 0 '^dataVersion = 2$' '^dataLength = 5$'

CMD=(set -v 1 "$ROOT" stale)
write "set -v (stale version)" 1 "version No is not valid : $ROOT"

CMD=(stat "$ROOT")
read_ "stat" 0 '^dataVersion = 2$' '^numChildren = 0$' '^ephemeralOwner = 0x0$'

# --- one interactive session: ephemeral sequential node -------------------

SESSION_OUT=""
# read_until REGEX: read session lines into SESSION_OUT until one matches REGEX.
read_until() {
	local line deadline=$((SECONDS + TMO))
	while ((SECONDS < deadline)); do
		if ! IFS= read -r -t "$TMO" line <&"$S_OUT"; then
			return 1
		fi
		SESSION_OUT+=$line$'\n'
		[[ $line =~ $1 ]] && return 0
	done
	return 1
}
# session CMD: send CMD and the `version` marker; SESSION_OUT gets CMD's output.
session() {
	SESSION_OUT=""
	printf '%s\nversion\n' "$1" >&"$S_IN" || return 1
	read_until '^ZooKeeper CLI version: '
}

coproc ZKSESSION { exec "${CLI[@]}" 2>&1; }
# shellcheck disable=SC2153 # ZKSESSION_PID is set by coproc
SESSION_PID=$ZKSESSION_PID
exec {S_OUT}<&"${ZKSESSION[0]}" {S_IN}>&"${ZKSESSION[1]}"

EPH=""
if ! session "create -e -s $ROOT/e- x"; then
	OUT=$SESSION_OUT
	fail "create -e -s" "no answer from the CLI session within ${TMO}s: $(tr '\n' '|' <<<"$SESSION_OUT" | cut -c1-400)"
elif [[ $SESSION_OUT =~ Created\ ($ROOT/e-[0-9]{10}) ]]; then
	EPH=${BASH_REMATCH[1]}
	pass "create -e -s"
else
	OUT=$SESSION_OUT
	fail "create -e -s" "no 'Created $ROOT/e-NNNNNNNNNN' in: $(tr '\n' '|' <<<"$SESSION_OUT" | cut -c1-400)"
fi

if [[ -n $EPH ]]; then
	if session "get -s $EPH"; then
		OUT=$SESSION_OUT RC=0
		expect "get -s ephemeral" 0 '^x$' '^ephemeralOwner = 0x0*[1-9a-f][0-9a-f]*$' '^dataLength = 1$' || true
	else
		fail "get -s ephemeral" "no answer from the CLI session"
	fi
	if session "ls $ROOT"; then
		OUT=$SESSION_OUT RC=0
		expect "ls shows ephemeral" 0 "^\[${EPH##*/}\]\$" || true
	else
		fail "ls shows ephemeral" "no answer from the CLI session"
	fi
	if session "stat $ROOT"; then
		OUT=$SESSION_OUT RC=0
		expect "stat parent numChildren" 0 '^numChildren = 1$' '^cversion = 1$' || true
	else
		fail "stat parent numChildren" "no answer from the CLI session"
	fi
fi
{ printf 'quit\n' >&"$S_IN"; } 2>/dev/null || true
exec {S_IN}>&- {S_OUT}<&-
wait "$SESSION_PID" 2>/dev/null || true
SESSION_PID=""

# --- after the session closed ----------------------------------------------

if [[ -n $EPH ]]; then
	# Closing a session deletes its ephemerals at once; read_ polls anyway.
	CMD=(ls "$ROOT")
	read_ "ephemeral gone after session close" 0 '^\[\]$'

	CMD=(stat "$ROOT")
	read_ "stat parent cversion after child delete" 0 '^cversion = 2$' '^numChildren = 0$'
fi

CMD=(delete -v 0 "$ROOT")
write "delete -v (stale version)" 1 "version No is not valid : $ROOT"

CMD=(delete "$ROOT")
write "delete" 0

CMD=(stat "$ROOT")
read_ "stat deleted" 1 "Node does not exist: $ROOT"

echo "$PASSED passed, $FAILED failed"
((FAILED == 0)) || exit 1
