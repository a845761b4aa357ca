#!/usr/bin/env bash
# The project's test command (see README "Testing"). It runs every Go test
# with the race detector; when Apache ZooKeeper (Debian package zookeeper)
# is installed it first starts one and exports ZK_ORACLE so the
# differential and client suites also run against the real thing, and it
# runs the kazoo and zkCli compatibility scripts against paddock server.
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
cleanup() {
  [ -f "$work/paddock.pid" ] && kill "$(cat "$work/paddock.pid")" 2>/dev/null || true
  [ -x test/oracle/zk.sh ] && test/oracle/zk.sh stop "$work/zk" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

if [ -z "${ZK_ORACLE:-}" ] && [ -x test/oracle/zk.sh ] && [ -f /usr/share/java/zookeeper.jar ]; then
  eval "$(test/oracle/zk.sh start "$work/zk")"
  export ZK_ORACLE
  echo "Apache ZooKeeper oracle at $ZK_ORACLE"
fi

go test -race -timeout 15m ./...

# Real third-party clients against a real paddock server process. Debian's
# python3-kazoo is only importable by Debian's own python.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
has_kazoo() { "$py" -c 'import kazoo' 2>/dev/null; }
if has_kazoo || [ -f /usr/share/java/zookeeper.jar ]; then
  go build -o "$work/paddock" ./cmd/paddock
  port=$("$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$work/paddock" server --port "$port" --max-client-cnxns 0 >"$work/paddock.log" 2>&1 &
  echo $! >"$work/paddock.pid"
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break
    sleep 0.1
  done
  if has_kazoo && [ -f test/compat/kazoo_smoke.py ]; then
    "$py" test/compat/kazoo_smoke.py "127.0.0.1:$port"
  else
    echo "kazoo not installed (Debian python3-kazoo): kazoo compatibility script skipped"
  fi
  if [ -f /usr/share/java/zookeeper.jar ] && [ -x test/compat/zkcli_smoke.sh ]; then
    test/compat/zkcli_smoke.sh "127.0.0.1:$port"
  fi
fi
