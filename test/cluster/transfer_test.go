package cluster_test

import (
	"fmt"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
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

// TestClusterLoneWriteThroughALaggingFollowerAfterATransfer: a follower
// slow to hear of a new leader forwards a client's write to the old one,
// which refuses it unproposed; being the only write of its connection in
// flight, it goes again to the new leader instead of failing with
// ConnectionLoss.
func TestClusterLoneWriteThroughALaggingFollowerAfterATransfer(t *testing.T) {
	lag := newLaggingFollower(t)
	cl, _ := connect(t, []string{lag.c.Servers()[lag.slow]})
	_, err := cl.Create("/t", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	lag.c.Slow(lag.slow, 20*time.Millisecond)
	for round := range 6 {
		lag.transfer(round)
		_, err := cl.Create(fmt.Sprintf("/t/n-%02d", round), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err, "round %d: a write through the lagging follower right after the transfer", round)
	}
}

// TestClusterPipelinedWritesThroughALaggingFollowerLeaveNoGap: two
// creates sent back to back through that follower right after a
// transfer may fail, but the second never lands without the first (the
// first is not sent again once the second is in flight).
func TestClusterPipelinedWritesThroughALaggingFollowerLeaveNoGap(t *testing.T) {
	lag := newLaggingFollower(t)
	c, slow := lag.c, lag.slow
	check, _ := connect(t, []string{c.Servers()[lag.fast]})
	_, err := check.Create("/p", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	nc, err := net.Dial("tcp", c.Servers()[slow])
	require.NoError(t, err)
	defer nc.Close()
	rawSend(t, nc, nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})
	_, err = wire.ReadFrame(nc, nil, wire.DefaultMaxFrame)
	require.NoError(t, err)
	c.Slow(slow, 20*time.Millisecond)
	failed := 0
	for round := range 6 {
		lag.transfer(round)
		first, second := fmt.Sprintf("/p/a-%02d", round), fmt.Sprintf("/p/b-%02d", round)
		for i, p := range []string{first, second} {
			rawSend(t, nc, &wire.RequestHeader{Xid: int32(2*round + i + 1), Op: wire.OpCreate},
				&wire.CreateRequest{Path: p, ACL: wire.OpenACLUnsafe})
		}
		codes := readCodes(nc, 2)
		if len(codes) < 2 || codes[0] != wire.OK || codes[1] != wire.OK {
			failed++
			_, err = check.Sync("/p")
			require.NoError(t, err)
			a, _, err := check.Exists(first)
			require.NoError(t, err)
			b, _, err := check.Exists(second)
			require.NoError(t, err)
			require.False(t, b && !a, "round %d: the second create landed without the first (answers %v)", round, codes)
			nc = reconnect(t, c.Servers()[slow])
			defer nc.Close()
		}
	}
	t.Logf("%d of 6 pipelines failed", failed)
}

// laggingFollower is a 3-node cluster whose leadership moves between
// two nodes while the third (slow) hears of it late.
type laggingFollower struct {
	t                  *testing.T
	c                  *zktest.Cluster
	leader, slow, fast int
}

func newLaggingFollower(t *testing.T) *laggingFollower {
	c := zktest.StartCluster(t, 3)
	l := c.Leader()
	return &laggingFollower{t: t, c: c, leader: l, slow: (l + 1) % 3, fast: (l + 2) % 3}
}

// transfer hands the leadership from one fast node to the other.
func (lag *laggingFollower) transfer(round int) {
	from, to := lag.leader, lag.fast
	if round%2 == 1 {
		from, to = lag.fast, lag.leader
	}
	require.NoError(lag.t, lag.c.Node(from).Server().TransferLeadership(strconv.Itoa(to+1)), "round %d", round)
}

// readCodes reads up to n replies' error codes from nc (fewer if it
// closes).
func readCodes(nc net.Conn, n int) []wire.Code {
	var codes []wire.Code
	for len(codes) < n {
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		frame, err := wire.ReadFrame(nc, nil, wire.DefaultMaxFrame)
		if err != nil {
			return codes
		}
		var h wire.ReplyHeader
		if h.Decode(wire.NewDecoder(frame)) != nil {
			return codes
		}
		if h.Xid != wire.XidNotification {
			codes = append(codes, h.Err)
		}
	}
	return codes
}

// reconnect opens a new session on addr over a raw connection, trying
// again while the node refuses it (its session's creation, a write, can
// fail while leadership moves).
func reconnect(t *testing.T, addr string) net.Conn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		rawSend(t, nc, nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})
		if _, err = wire.ReadFrame(nc, nil, wire.DefaultMaxFrame); err == nil {
			return nc
		}
		_ = nc.Close()
		require.True(t, time.Now().Before(deadline), "no session on %s: %v", addr, err)
	}
}
