// Package oracle gives tests the address of a real Apache ZooKeeper (the
// "oracle") to compare Paddock against.
//
// The address comes from the ZK_ORACLE environment variable, a ZooKeeper
// connect string without chroot ("host:port" or "host:port,host:port,...").
// test/oracle/zk.sh prints it:
//
//	eval "$(test/oracle/zk.sh start /tmp/zkoracle)"   # or: start-ensemble DIR 3
//	export ZK_ORACLE
//	go test ./...
//	test/oracle/zk.sh stop /tmp/zkoracle
//
// Without ZK_ORACLE, tests that ask for the oracle are skipped.
package oracle

import (
	"os"
	"strings"
	"testing"
)

// Env is the environment variable holding the oracle's connect string.
const Env = "ZK_ORACLE"

const skipMsg = "ZK_ORACLE not set: differential tests against Apache ZooKeeper skipped (run test/oracle/zk.sh start DIR, or .ci/run)"

// Addr returns the oracle's connect string ($ZK_ORACLE), or skips the test if
// it is not set.
func Addr(t testing.TB) string {
	t.Helper()
	addr := strings.TrimSpace(os.Getenv(Env))
	if addr == "" {
		t.Skip(skipMsg)
	}
	return addr
}

// Servers returns the oracle's servers as host:port strings ($ZK_ORACLE split
// on commas), or skips the test if it is not set.
func Servers(t testing.TB) []string {
	t.Helper()
	var servers []string
	for _, s := range strings.Split(Addr(t), ",") {
		if s = strings.TrimSpace(s); s != "" {
			servers = append(servers, s)
		}
	}
	if len(servers) == 0 {
		t.Skip(skipMsg)
	}
	return servers
}
