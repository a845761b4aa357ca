package cluster_test

import (
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestLinearizableUnderMembershipChanges: the linearizability check while
// the membership changes under load (reliability plan F11): a node joins,
// a follower is removed, then the leader is removed.
func TestLinearizableUnderMembershipChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	c := zktest.StartCluster(t, 3, zktest.WithTickTime(500*time.Millisecond))
	setup, _ := connect(t, c.Servers())
	_, err := setup.Create("/lin", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	h, finish := startClients(t, c.Servers(), 1)
	pause := func() { time.Sleep(400 * time.Millisecond) } // traffic between the changes
	pause()
	added := c.AddNode()
	pause()
	follower := (c.Leader() + 1) % 3
	c.RemoveNode(follower)
	pause()
	leader := c.Leader()
	c.RemoveNode(leader)
	pause()
	removed := map[int]bool{follower: true, leader: true}
	ops := finish()
	t.Logf("%d ops; node %d added, two removed", ops, added)
	require.Greater(t, ops, int64(100), "too little traffic for the check to mean anything")

	var live []int
	for i := 0; i < c.Size(); i++ {
		if !removed[i] {
			live = append(live, i)
		}
	}
	var addrs []string
	for _, i := range live {
		addrs = append(addrs, c.Node(i).Addr())
	}
	final, _ := connect(t, addrs)
	finalReads(t, h, final)
	res := porcupine.CheckOperationsTimeout(znodeModel, h.ops, 60*time.Second)
	require.NotEqual(t, porcupine.Illegal, res, "history is not linearizable")
	want := c.Node(c.Leader()).Server().FSM()
	for _, i := range live {
		f := c.Node(i).Server().FSM()
		eventually(t, "replica digests converge", func() bool { return f.Digest() == want.Digest() })
		require.NoError(t, f.Check())
	}
}
