package cluster_test

import (
	"testing"
	"time"

	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// ringHold is how long each majorities-ring partition is held: several
// election timeouts at the test's tick, so the nodes cut off from the
// leader do try to elect one.
const ringHold = 2 * time.Second

// TestMajoritiesRingPartition runs the linearizability clients against a
// five-node cluster cut into Jepsen's majorities ring (every node talks to
// its two ring neighbours only: each sees a majority, no two the same
// one), twice, around two different rings, healing in between. Nothing
// may break: the history stays linearizable, every acknowledged write
// survives, the replicas converge, no term has two leaders, and the
// cluster keeps taking writes while the ring holds (the leader keeps a
// quorum of its neighbours; the clients of the nodes beyond them move).
func TestMajoritiesRingPartition(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	var faults []heldFault
	for _, order := range [][]int{{0, 1, 2, 3, 4}, {0, 2, 4, 1, 3}} {
		faults = append(faults, func(t *testing.T, c *zktest.Cluster) func() func() {
			c.PartitionRing(order...)
			return func() func() {
				far, lead := beyondNeighbours(c, order)
				return func() { requireRingCut(t, c, far, lead) }
			}
		})
	}
	runHeldFaults(t, 42, "ring", ringHold, faults)
}

// heldFault is one partition of runHeldFaults: it cuts the cluster (whose
// leader is known) and returns what to do halfway through the hold, which
// returns the check to run at its end, before the cluster is healed.
type heldFault func(t *testing.T, c *zktest.Cluster) (halfway func() (atEnd func()))

// runHeldFaults runs the linearizability clients against a five-node
// cluster while each fault holds for hold in turn, healing in between,
// then checks what every such run must end with: a write acknowledged
// while each fault held, no term with two leaders, and checkHistory.
func runHeldFaults(t *testing.T, seed int64, name string, hold time.Duration, faults []heldFault) {
	t.Helper()
	c := startLinCluster(t, 5)
	leaders := c.MonitorLeaders()
	h, finish := startClients(t, c.Servers(), seed)
	var held []window
	for _, fault := range faults {
		c.Leader()
		from := h.now()
		halfway := fault(t, c)
		// The fault's duration, not a wait for a condition.
		time.Sleep(hold / 2)
		atEnd := halfway()
		time.Sleep(hold / 2)
		atEnd()
		c.Heal()
		held = append(held, window{from, h.now()})
	}
	c.Leader()
	ops := finish()
	terms, err := leaders.Stop()
	require.NoError(t, err)
	t.Logf("%d ops, %d terms with a leader", ops, terms)
	require.Greater(t, ops, int64(100), "too little traffic for the check to mean anything")
	requireWritesWhileHeld(t, h, name, held)
	checkHistory(t, h, c, allNodes(c))
}

// window is a stretch of a history's time (history.now) while a fault
// held.
type window struct{ from, to int64 }

// requireWritesWhileHeld checks that a write was acknowledged within each
// window: a write both sent and answered while the fault held.
func requireWritesWhileHeld(t *testing.T, h *history, fault string, windows []window) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, w := range windows {
		acked := 0
		for _, op := range h.ops {
			in, out := op.Input.(znodeInput), op.Output.(znodeOutput)
			if in.Kind != opGet && out.Err == nil && op.Call >= w.from && op.Return <= w.to {
				acked++
			}
		}
		require.Positive(t, acked, "%s %d: no write was acknowledged while it held", fault, i)
	}
}

// beyondNeighbours returns the applied zxid of each node beyond the
// current leader's neighbours on the ring in order, and the leader's.
func beyondNeighbours(c *zktest.Cluster, order []int) (far map[int]int64, lead [2]int64) {
	l := c.Leader()
	at := map[int]int{}
	for pos, i := range order {
		at[i] = pos
	}
	n := len(order)
	far = map[int]int64{}
	for _, i := range order {
		if d := (at[i] - at[l] + n) % n; d > 1 && d < n-1 {
			far[i] = c.Node(i).Server().FSM().LastZxid()
		}
	}
	return far, [2]int64{int64(l), c.Node(l).Server().FSM().LastZxid()}
}

// requireRingCut checks that the ring really cut the nodes beyond the
// leader's ring neighbours off from it: since beyondNeighbours read them
// they applied nothing, while the leader, still the leader, went on
// committing with its neighbours.
func requireRingCut(t *testing.T, c *zktest.Cluster, far map[int]int64, lead [2]int64) {
	t.Helper()
	l := int(lead[0])
	require.Equal(t, l, c.Leader(), "the leader changed while the ring held")
	require.Greater(t, c.Node(l).Server().FSM().LastZxid(), lead[1], "the leader committed nothing while the ring held")
	require.Len(t, far, 2)
	for i, z := range far {
		require.Equal(t, z, c.Node(i).Server().FSM().LastZxid(), "node %d, beyond the leader %d's ring neighbours, still applied entries", i, l)
	}
}
