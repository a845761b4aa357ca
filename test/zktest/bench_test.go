package zktest_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
)

// BenchmarkStart measures Start-to-ready of one server (target ≤ 20 ms).
func BenchmarkStart(b *testing.B) {
	for i := 0; i < b.N; i++ {
		srv := zktest.Start(b)
		srv.Stop()
	}
}

// BenchmarkStartCluster measures Start-to-leader of a 3-node cluster
// (target ≤ 300 ms).
func BenchmarkStartCluster(b *testing.B) {
	for i := 0; i < b.N; i++ {
		c := zktest.StartCluster(b, 3)
		c.Stop()
	}
}

// BenchmarkStartConnectCreateClose measures a whole test's cycle: start,
// connect go-zookeeper, create a node, close (target ≤ 30 ms).
func BenchmarkStartConnectCreateClose(b *testing.B) {
	for i := 0; i < b.N; i++ {
		srv := zktest.Start(b)
		conn, ev, err := zk.Connect(srv.Servers(), time.Second, zk.WithLogInfo(false))
		if err != nil {
			b.Fatal(err)
		}
		for e := range ev {
			if e.State == zk.StateHasSession {
				break
			}
		}
		if _, err := conn.Create("/x", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
			b.Fatal(err)
		}
		conn.Close()
		srv.Stop()
	}
}
