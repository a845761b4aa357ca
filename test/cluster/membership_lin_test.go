package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestLinearizableUnderMembershipChanges: the linearizability check while
// the membership changes under load (reliability plan F11): a node joins,
// a follower is removed, then the leader is removed.
func TestLinearizableUnderMembershipChanges(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	c := startLinCluster(t, 3)

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
	checkHistory(t, h, c, live)
}
