package cluster_test

import (
	"context"
	"errors"
	"fmt"
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

// TestClusterPausedLeaderExpiresNoLiveSession: a leader frozen for longer
// than the session timeout (a GC pause, a SIGSTOP; etcd#15247 lost leases
// this way) must not expire the sessions that went on heartbeating
// through the other nodes, neither when it wakes up still believing it
// leads (its session tracker saw nothing for the whole pause) nor after.
func TestClusterPausedLeaderExpiresNoLiveSession(t *testing.T) {
	c := zktest.StartCluster(t, 3, zktest.WithTickTime(100*time.Millisecond)) // sessions of 0.2–2 s
	leader := c.Leader()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var ids []int64
	for i := 1; i <= 2; i++ {
		// Each client on one follower only: it never talks to the frozen node.
		cl, err := client.Connect(ctx, []string{c.Servers()[(leader+i)%3]}, client.WithSessionTimeout(2*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		_, _, err = cl.Create(ctx, fmt.Sprintf("/eph%d", i), nil, client.ModeEphemeral, nil)
		require.NoError(t, err)
		ids = append(ids, cl.SessionID())
	}
	live := func() bool {
		for n := 0; n < 3; n++ {
			f := c.Node(n).Server().FSM()
			for i := 1; i <= 2; i++ {
				if _, ok := f.Exists(fmt.Sprintf("/eph%d", i)); !ok {
					return false
				}
			}
		}
		return true
	}
	// Every node has applied both creates before the freeze: a follower
	// that acknowledged its client's create may not yet know the other
	// follower's is committed, and it would learn that only from the next
	// leader's first commit, after the election the test waits for.
	eventually(t, "every node applied the ephemerals", live)
	c.Pause(leader)
	eventually(t, "a new leader", func() bool {
		return c.Node((leader+1)%3).Server().IsLeader() || c.Node((leader+2)%3).Server().IsLeader()
	})
	// Frozen for twice the session timeout.
	require.Never(t, func() bool { return !live() }, 4*time.Second, 20*time.Millisecond,
		"a session expired while the old leader was frozen")
	c.Resume(leader)
	require.Never(t, func() bool { return !live() }, 4*time.Second, 20*time.Millisecond,
		"a live session expired once the old leader woke up")
	for n := 0; n < 3; n++ {
		sessions := map[int64]bool{}
		for _, s := range c.Node(n).Server().FSM().Sessions() {
			sessions[s.ID] = true
		}
		for _, id := range ids {
			require.True(t, sessions[id], "node %d lost session 0x%x", n, id)
		}
	}
}

// TestClusterSlowFollower: a follower whose links to the others are slow
// does not stop the cluster or fall behind for good (reliability plan F6).
// With each message half a second late (longer than the election
// timeout, so the slow node keeps losing its leader) the other two commit
// writes as usual; with 100 ms the slow node serves writes too; once the
// links are healed every replica holds the same tree.
func TestClusterSlowFollower(t *testing.T) {
	c := zktest.StartCluster(t, 3) // Raft timers of 200 ms
	slow := (c.Leader() + 1) % 3
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	writes := func(node int, prefix string) {
		cl, err := client.Connect(ctx, []string{c.Servers()[node]}, client.WithSessionTimeout(10*time.Second))
		require.NoError(t, err)
		defer cl.Close()
		for j := range 20 {
			p := fmt.Sprintf("/%s-%d", prefix, j)
			eventually(t, "create "+p, func() bool {
				_, _, err := cl.Create(ctx, p, nil, client.ModePersistent, nil)
				return err == nil || errors.Is(err, client.ErrNodeExists)
			})
		}
	}
	c.Slow(slow, 500*time.Millisecond)
	writes((slow+1)%3, "fast-a")
	writes((slow+2)%3, "fast-b")
	c.Heal()
	c.Slow(slow, 100*time.Millisecond)
	writes(slow, "through-slow")
	c.Heal()
	want := c.Node(c.Leader()).Server().FSM()
	for i := 0; i < 3; i++ {
		f := c.Node(i).Server().FSM()
		eventually(t, fmt.Sprintf("node %d converges", i), func() bool { return f.Digest() == want.Digest() })
		for _, p := range []string{"/fast-a-19", "/fast-b-19", "/through-slow-19"} {
			_, ok := f.Exists(p)
			require.True(t, ok, "node %d: %s", i, p)
		}
		require.NoError(t, f.Check())
	}
}
