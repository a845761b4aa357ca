package cluster_test

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestClusterPausedNodeIsFrozen: a paused node behaves as a process
// stopped by SIGSTOP. Its connected clients get no answers and no close,
// even after the others have elected a new leader (a frozen process never
// notices it lost its quorum); a new connection is accepted but its
// handshake is not answered. Once resumed it serves again.
func TestClusterPausedNodeIsFrozen(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	leader := c.Leader()
	addr := c.Servers()[leader]
	old, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer old.Close()
	rawSend(t, old, nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})
	_, err = wire.ReadFrame(old, nil, wire.DefaultMaxFrame)
	require.NoError(t, err)

	c.Pause(leader)
	rawSend(t, old, &wire.RequestHeader{Xid: wire.XidPing, Op: wire.OpPing}, nil)
	fresh, err := net.Dial("tcp", addr)
	require.NoError(t, err, "the kernel accepts connections for a frozen process")
	defer fresh.Close()
	rawSend(t, fresh, nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})
	eventually(t, "the others elect a new leader", func() bool {
		for i := 0; i < 3; i++ {
			if i != leader && c.Node(i).Server().IsLeader() {
				return true
			}
		}
		return false
	})
	// Well past the two leaderless heartbeats (200 ms here) after which a
	// running node closes its clients' connections.
	for _, nc := range []net.Conn{old, fresh} {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(time.Second)))
		_, err := wire.ReadFrame(nc, nil, wire.DefaultMaxFrame)
		var ne net.Error
		require.True(t, errors.As(err, &ne) && ne.Timeout(), "frozen: no answer and no close, got %v", err)
	}

	c.Resume(leader)
	// The held handshake and ping are read now: each is answered, or the
	// connection closed (the node may not know the new leader yet).
	for _, nc := range []net.Conn{old, fresh} {
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(10*time.Second)))
		_, err := wire.ReadFrame(nc, nil, wire.DefaultMaxFrame)
		require.False(t, errors.Is(err, os.ErrDeadlineExceeded), "resumed node still frozen")
	}
}

// frozenFirst is a go-zookeeper HostProvider that returns the hosts in
// order, starting with the first, and then cycles over the others only.
// go-zookeeper waits 10 × 2/3 of the session timeout for a handshake
// reply, so a client whose list keeps a frozen server (as a JVM stopped by
// SIGSTOP) can lose its session waiting on it; the Paddock client bounds
// the handshake by the session timeout divided by the number of servers,
// as the Java client (TestClusterPausedLeaderPaddockClientMovesOn).
type frozenFirst struct {
	hosts []string
	next  int
}

func (p *frozenFirst) Init(servers []string) error { return nil }
func (p *frozenFirst) Len() int                    { return len(p.hosts) }
func (p *frozenFirst) Connected()                  {}
func (p *frozenFirst) Next() (string, bool) {
	h := p.hosts[p.next]
	p.next++
	if p.next == len(p.hosts) {
		p.next = 1
	}
	return h, false
}

// TestClusterPausedLeaderClientsMoveOn: a go-zookeeper client on a frozen
// leader notices the silence after 2/3 of its session timeout, reconnects
// to another node and keeps its session.
func TestClusterPausedLeaderClientsMoveOn(t *testing.T) {
	c := zktest.StartCluster(t, 3, zktest.WithTickTime(500*time.Millisecond))
	leader := c.Leader()
	hosts := []string{c.Servers()[leader], c.Servers()[(leader+1)%3], c.Servers()[(leader+2)%3]}
	// A 10 s session (the 20-tick maximum): go-zookeeper notices the frozen
	// connection only after 2/3 of the timeout, and must then reconnect.
	cl, ev, err := zk.Connect(hosts, 10*time.Second, zk.WithHostProvider(&frozenFirst{hosts: hosts}),
		zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	waitState(t, ev, zk.StateHasSession)
	require.Equal(t, hosts[0], cl.Server())
	id := cl.SessionID()
	c.Pause(leader)
	eventually(t, "client writes through another node", func() bool {
		_, err := cl.Create("/after-pause", nil, 0, zk.WorldACL(zk.PermAll))
		return err == nil || err == zk.ErrNodeExists
	})
	require.Equal(t, id, cl.SessionID(), "the session survived the move")
	c.Resume(leader)
	f := c.Node(leader).Server().FSM()
	eventually(t, "resumed node catches up", func() bool { _, ok := f.Exists("/after-pause"); return ok })
}

// TestClusterPausedLeaderPaddockClientMovesOn: the Paddock client, whose
// list keeps the frozen leader, moves on and keeps its session: a
// handshake gets the session timeout divided by the number of servers.
func TestClusterPausedLeaderPaddockClientMovesOn(t *testing.T) {
	c := zktest.StartCluster(t, 3, zktest.WithTickTime(500*time.Millisecond))
	leader := c.Leader()
	hosts := []string{c.Servers()[leader], c.Servers()[(leader+1)%3], c.Servers()[(leader+2)%3]}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := client.Connect(ctx, hosts, client.WithSessionTimeout(6*time.Second), client.WithShuffleHosts(false))
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	id := cl.SessionID()
	c.Pause(leader)
	for i := 0; ; i++ {
		// Each attempt may end in ConnectionLoss (sent to the frozen node,
		// or through one that lost its leader); the session must live on.
		_, _, err := cl.Create(ctx, "/after-pause", nil, client.ModePersistent, nil)
		if err == nil || errors.Is(err, client.ErrNodeExists) {
			break
		}
		require.ErrorIs(t, err, client.ErrConnectionLoss, "attempt %d", i)
	}
	require.Equal(t, id, cl.SessionID(), "the session survived the move")
}
