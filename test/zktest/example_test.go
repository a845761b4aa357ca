package zktest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
)

// In a real test file the *testing.T comes from the test function; the
// examples use a stand-in so they can run as examples.
func exampleT() *testing.T { return &testing.T{} }

// Start a fake ZooKeeper, connect go-zookeeper to it, and expire the
// session exactly as a timeout would.
func ExampleStart() {
	t := exampleT()
	srv := zktest.Start(t)
	defer srv.Stop()

	conn, events, err := zk.Connect(srv.Servers(), 2*time.Second, zk.WithLogInfo(false))
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	for e := range events {
		if e.State == zk.StateHasSession {
			break
		}
	}
	if _, err := conn.Create("/service", []byte("up"), zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		panic(err)
	}
	fmt.Println("nodes before expiry:", len(srv.Tree()))
	if err := srv.ExpireSession(conn.SessionID()); err != nil {
		panic(err)
	}
	fmt.Println("nodes after expiry:", len(srv.Tree()))
	// Output:
	// nodes before expiry: 1
	// nodes after expiry: 0
}

// Start a 3-node cluster and cut its leader off from the others.
func ExampleStartCluster() {
	t := exampleT()
	c := zktest.StartCluster(t, 3)
	defer c.Stop()
	old := c.Leader()
	c.Partition(old)
	deadline := time.Now().Add(10 * time.Second)
	for c.Leader() == old && time.Now().Before(deadline) { // the majority elects a new leader
		time.Sleep(10 * time.Millisecond)
	}
	c.Heal()
	fmt.Println("nodes:", len(c.Servers()))
	// Output:
	// nodes: 3
}
