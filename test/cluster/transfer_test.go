package cluster_test

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestClusterFailedTransferRefusesNoWrite: while a leadership transfer
// runs, the leader holds its proposals instead of letting Raft refuse them
// (hashicorp/raft answers ErrLeadershipTransferInProgress, and after a
// failed transfer takes the next ones, so a client's pipelined writes had
// a gap). Writes on the leader during a transfer that fails (its target is
// cut off) all succeed, in order; they used to fail with ConnectionLoss.
func TestClusterFailedTransferRefusesNoWrite(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	l := c.Leader()
	target := (l + 1) % 3
	cl, _ := connect(t, []string{c.Servers()[l]})
	_, err := cl.Create("/t", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	c.Partition(target)

	var transferring atomic.Bool
	transferring.Store(true)
	done := make(chan error, 1)
	go func() {
		done <- c.Node(l).Server().TransferLeadership(strconv.Itoa(target + 1))
		transferring.Store(false)
	}()
	during := 0
	for i := 0; transferring.Load() || i < 20; i++ {
		if transferring.Load() {
			during++ // sent while the transfer runs
		}
		_, err := cl.Create(fmt.Sprintf("/t/n-%04d", i), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err, "write %d, sent during the transfer: %v", i, during > i)
	}
	require.NotZero(t, during)
	require.Error(t, <-done, "the transfer to a cut-off node fails")
	require.Equal(t, l, c.Leader(), "the leader keeps leading")
	t.Logf("%d writes during the transfer", during)
	kids, _, err := cl.Children("/t")
	require.NoError(t, err)
	for i, k := range kids {
		require.Equal(t, fmt.Sprintf("n-%04d", i), k)
	}
}

// TestClusterOldLeaderServesRightAfterATransfer: the moment a transfer
// ends, the node that led knows no leader for a few milliseconds (until
// the new one's first AppendEntries), and the others may still name the
// old one. A write or a sync sent then waits for the new leader and goes
// there (a sync the old leader refused goes again); they failed with
// ConnectionLoss, closing the connection, before. So did a write through
// a node whose connection to the leader was dialed while that node led
// before (leadership back where it was: the leader takes a connection's
// writes within one term only).
func TestClusterOldLeaderServesRightAfterATransfer(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	conns := make([]*zk.Conn, c.Size())
	for i := range conns {
		conns[i], _ = connect(t, []string{c.Servers()[i]})
	}
	_, err := conns[0].Create("/t", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for round := range 10 {
		l := c.Leader()
		require.NoError(t, c.Node(l).Server().TransferLeadership(""), "round %d", round)
		_, err := conns[l].Create(fmt.Sprintf("/t/n-%02d", round), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err, "round %d: a write on the old leader right after the transfer", round)
		l = c.Leader()
		require.NoError(t, c.Node(l).Server().TransferLeadership(""), "round %d", round)
		_, err = conns[l].Sync("/t")
		require.NoError(t, err, "round %d: a sync on the old leader right after the transfer", round)
		// The third node may not have heard of the new leader yet: its
		// sync goes to the old one, is refused, and goes again.
		l = c.Leader()
		require.NoError(t, c.Node(l).Server().TransferLeadership(""), "round %d", round)
		for i := range conns {
			if i != l {
				_, err = conns[i].Sync("/t")
				require.NoError(t, err, "round %d: a sync on node %d right after the transfer", round, i)
			}
		}
	}
}
