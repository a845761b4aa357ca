package cluster_test

import (
	"testing"
	"time"

	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// splitHold is how long each split is held: several election timeouts at
// the test's tick, so a leader cut off from the majority does step down
// and the majority does elect another.
const splitHold = 2 * time.Second

// TestFiveNodeSplitTwoThree runs the linearizability clients against a
// five-node cluster cut in two, two nodes against three (Jepsen's
// majority/minority partition, reliability plan F4): first with the
// leader among the two, then with it among the three. The minority side
// commits nothing and ends up with no leader; the majority side has a
// leader and goes on acknowledging writes; once healed, the history is
// linearizable, every acknowledged write is there, the replicas converge,
// and no term had two leaders.
func TestFiveNodeSplitTwoThree(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	var faults []heldFault
	for _, leaderInMinority := range []bool{true, false} {
		faults = append(faults, func(t *testing.T, c *zktest.Cluster) func() func() {
			l := c.Leader()
			minority := []int{(l + 1) % 5, (l + 2) % 5}
			if leaderInMinority {
				minority[1] = l
			}
			c.Split(minority...)
			return func() func() {
				held := map[int]int64{}
				for _, i := range minority {
					held[i] = c.Node(i).Server().FSM().LastZxid()
				}
				lead := c.Leader()
				leadZxid := c.Node(lead).Server().FSM().LastZxid()
				return func() { requireSplit(t, c, minority, held, lead, leadZxid) }
			}
		})
	}
	runHeldFaults(t, 43, "split", splitHold, faults)
}

// requireSplit checks, at the end of a split, that the side of two applied
// nothing since held was read and has no leader, while the leader read
// with leadZxid is on the side of three, still leads, and went on
// committing.
func requireSplit(t *testing.T, c *zktest.Cluster, minority []int, held map[int]int64, lead int, leadZxid int64) {
	t.Helper()
	for _, i := range minority {
		require.NotEqual(t, i, lead, "node %d, on the side of two, leads", i)
		require.False(t, c.Node(i).Server().IsLeader(), "node %d, on the side of two, leads", i)
		require.Equal(t, held[i], c.Node(i).Server().FSM().LastZxid(), "node %d, on the side of two, applied entries", i)
	}
	require.Equal(t, lead, c.Leader(), "the majority's leader changed while the split held")
	require.Greater(t, c.Node(lead).Server().FSM().LastZxid(), leadZxid, "the majority committed nothing while the split held")
}
