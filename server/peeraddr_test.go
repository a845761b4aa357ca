package server

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// hostsNet emulates nodes on separate hosts that each listen on every
// interface: a wildcard address reaches the dialer's own host.
type hostsNet struct{ real map[string]string } // node id -> listener address

func (h hostsNet) Dial(from, _, addr string, timeout time.Duration) (net.Conn, error) {
	if wildcardAddr(addr) {
		addr = h.real[from]
	}
	return net.DialTimeout("tcp", addr, timeout)
}

func (hostsNet) Accepted(_, _ string, c net.Conn) net.Conn { return c }

// wildcardListener reports the address a listener bound to every
// interface reports.
type wildcardListener struct{ net.Listener }

func (l wildcardListener) Addr() net.Addr {
	return &net.TCPAddr{IP: net.IPv6unspecified, Port: l.Listener.Addr().(*net.TCPAddr).Port}
}

// A cluster written the way ZooKeeper's Docker image does it, each node's
// own server line 0.0.0.0 (where it listens) and the others by name: a
// node reaches its peers, the leader included, at the addresses its own
// lines give them, as in ZooKeeper. The leader advertises its listener's
// address, which is [::]:port; followers used it to forward writes, and
// dialed themselves.
func TestClusterOwnLineWildcard(t *testing.T) {
	const n = 3
	lns := make([]net.Listener, n)
	real := map[string]string{}
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns[i] = wildcardListener{ln}
		real[strconv.Itoa(i+1)] = ln.Addr().String()
	}
	cfgs := make([]Config, n)
	for i := range cfgs {
		var peers []Peer
		for j := range n {
			id := strconv.Itoa(j + 1)
			addr := real[id]
			if j == i {
				_, port, _ := net.SplitHostPort(addr)
				addr = net.JoinHostPort("0.0.0.0", port)
			}
			peers = append(peers, Peer{ID: id, Addr: addr})
		}
		cfgs[i] = testNodeConfig(strconv.Itoa(i+1), peers, NewMemoryStores(), lns[i])
		cfgs[i].ClusterNet = hostsNet{real}
	}
	servers := startNodes(t, cfgs)
	t.Cleanup(func() {
		for _, s := range servers {
			s.Close()
		}
	})
	leader := clusterLeader(t, servers)
	follower := servers[(leader+1)%n]
	require.Eventually(t, func() bool { return follower.Leader() != "" }, 10*time.Second, time.Millisecond)
	res, err := follower.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/through-a-follower", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err, "a write forwarded by a follower")
	require.Equal(t, wire.OK, res.Err)

	// A membership change replicates the leader's configuration, its own
	// wildcard address included; the next leader must still reach it
	// (Raft dials by node id, at the address this node's lines give).
	l := servers[leader]
	require.NoError(t, l.AddMember("4", "127.0.0.1:1", true)) // an observer that never comes
	next := (leader + 1) % n
	require.NoError(t, l.TransferLeadership(strconv.Itoa(next+1)))
	require.Eventually(t, servers[next].isLeader, 10*time.Second, time.Millisecond)
	_, err = servers[next].apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/after-transfer", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Eventually(t, func() bool { _, ok := l.FSM().Exists("/after-transfer"); return ok },
		10*time.Second, time.Millisecond, "the old leader, listed at 0.0.0.0 in the replicated configuration, is unreachable")
}
