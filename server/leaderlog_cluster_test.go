package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// startHeldCluster starts a 3-node cluster on loopback whose in-memory log
// stores can hold writes.
func startHeldCluster(t *testing.T) ([]*Server, []*heldStore) {
	t.Helper()
	return startHeldClusterWith(t, nil)
}

// startHeldClusterWith is startHeldCluster with each node's configuration
// adjusted.
func startHeldClusterWith(t *testing.T, adjust func(*Config)) ([]*Server, []*heldStore) {
	t.Helper()
	const n = 3
	var peers []Peer
	lns := make([]net.Listener, n)
	for i := range lns {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns[i] = ln
		peers = append(peers, Peer{ID: strconv.Itoa(i + 1), Addr: ln.Addr().String()})
	}
	stores := make([]*heldStore, n)
	cfgs := make([]Config, n)
	for i := range cfgs {
		stores[i] = newHeldStore()
		mem := NewMemoryStores()
		mem.Logs = stores[i]
		cfgs[i] = testNodeConfig(peers[i].ID, peers, mem, lns[i])
		if adjust != nil {
			adjust(&cfgs[i])
		}
	}
	servers := startNodes(t, cfgs)
	t.Cleanup(func() {
		for i, s := range servers {
			stores[i].hold.Store(false)
			select { // a writer still held
			case stores[i].release <- nil:
			case <-time.After(10 * time.Millisecond):
			}
			_ = s.Close()
		}
	})
	return servers, stores
}

// testNodeConfig is a cluster node's configuration for tests: in-memory
// stores, a free client port, short Raft timers, no logs.
func testNodeConfig(id string, peers []Peer, stores *Stores, clusterLn net.Listener) Config {
	cfg := DefaultConfig()
	cfg.ID, cfg.Peers, cfg.Stores, cfg.Port, cfg.ClusterListener = id, peers, stores, 0, clusterLn
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	// A leader that hears from no quorum for the lease steps down: under
	// the race detector on a loaded machine 50 ms went by often enough to
	// lose a write mid-test ("leadership lost while committing log").
	cfg.Raft = RaftTimers{Heartbeat: 200 * time.Millisecond, Election: 200 * time.Millisecond,
		LeaderLease: 200 * time.Millisecond, Commit: 2 * time.Millisecond}
	return cfg
}

// startNodes starts one server per configuration, all at once (a node's
// New waits for its cluster), and fails the test if any fails.
func startNodes(t *testing.T, cfgs []Config) []*Server {
	t.Helper()
	servers := make([]*Server, len(cfgs))
	errs := make(chan error, len(cfgs))
	for i, cfg := range cfgs {
		go func() {
			var err error
			servers[i], err = New(cfg)
			errs <- err
		}()
	}
	for range cfgs {
		require.NoError(t, <-errs)
	}
	return servers
}

func clusterLeader(t *testing.T, servers []*Server) int {
	t.Helper()
	var leader int
	require.Eventually(t, func() bool {
		for i, s := range servers {
			if s.isLeader() {
				leader = i
				return true
			}
		}
		return false
	}, 10*time.Second, 5*time.Millisecond, "no leader")
	return leader
}

// newLeader waits for a node other than servers[old] to lead.
func newLeader(t *testing.T, servers []*Server, old int) *Server {
	t.Helper()
	var next *Server
	require.Eventually(t, func() bool {
		for i, s := range servers {
			if i != old && s.isLeader() {
				next = s
				return true
			}
		}
		return false
	}, 10*time.Second, time.Millisecond, "no new leader")
	return next
}

// TestClusterLeaderReplicatesWhileItWrites holds the leader's log write
// of a create: the followers store the entry meanwhile (with Raft's order
// they could not: the leader writes first), and no node applies it, nor
// does the create return, until the leader's copy is durable.
func TestClusterLeaderReplicatesWhileItWrites(t *testing.T) {
	servers, stores := startHeldCluster(t)
	l := clusterLeader(t, servers)
	before := make([]uint64, len(stores))
	for i, st := range stores {
		before[i], _ = st.LastIndex()
	}

	stores[l].hold.Store(true)
	created := make(chan error, 1)
	go func() {
		res, err := servers[l].apply(&fsm.Command{Type: fsm.CmdOps,
			Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/held", ACL: wire.OpenACLUnsafe}}})
		if err == nil && res.Err != wire.OK {
			err = res.Err
		}
		created <- err
	}()

	for i, st := range stores {
		if i == l {
			continue
		}
		require.Eventually(t, func() bool {
			last, _ := st.LastIndex()
			return last > before[i]
		}, 10*time.Second, time.Millisecond, "follower %d did not store the entry while the leader wrote it", i)
	}
	visible := func() bool {
		for _, s := range servers {
			if _, ok := s.FSM().Exists("/held"); ok {
				return true
			}
		}
		return len(created) > 0
	}
	// Followers stored it and Raft counts the leader: it is committed.
	// Over many commit timers, nothing may show it yet.
	require.Never(t, visible, 300*time.Millisecond, 5*time.Millisecond,
		"an entry was applied before the leader's copy was durable")

	stores[l].hold.Store(false)
	stores[l].release <- nil
	select {
	case err := <-created:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the create did not return after the leader's write")
	}
	for i, s := range servers {
		require.Eventually(t, func() bool { _, ok := s.FSM().Exists("/held"); return ok },
			10*time.Second, time.Millisecond, "node %d never applied the create", i)
	}
}

// TestParallelLeaderLogSwitch checks when a node gets a leaderLog: in a
// cluster, unless SyncLeaderLog or NoSync.
func TestParallelLeaderLogSwitch(t *testing.T) {
	cfg := Config{ID: "1", Peers: []Peer{{ID: "1", Addr: "127.0.0.1:1"}, {ID: "2", Addr: "127.0.0.1:2"}}}
	require.True(t, cfg.clustered())
	cfg.SyncLeaderLog = true
	require.False(t, parallelLeaderLog(&cfg))
	cfg.SyncLeaderLog = false
	require.True(t, parallelLeaderLog(&cfg))
	cfg.NoSync = true
	require.False(t, parallelLeaderLog(&cfg), "nothing to overlap without fsync")
}

// TestClusterLeaderWriteFailureStopsTheServer fails the leader's log
// write: the write is not acknowledged, and the leader stops itself with
// the error instead of serving on.
func TestClusterLeaderWriteFailureStopsTheServer(t *testing.T) {
	servers, stores := startHeldCluster(t)
	l := clusterLeader(t, servers)
	err := failLogWrite(t, servers, stores, l, l, "/lost")
	require.Error(t, err, "a write the leader could not store was acknowledged")
	_, ok := servers[l].FSM().Exists("/lost")
	require.False(t, ok, "the failed leader applied the entry it could not store")
	for i, s := range servers {
		if i != l {
			require.NoError(t, s.Err(), "node %d has not failed", i)
		}
	}
	// The other two elect a leader and take writes and reads again (a
	// full disk on one node is that node's outage, not the cluster's).
	next := newLeader(t, servers, l)
	res, err := next.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/after", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Equal(t, wire.OK, res.Err)
	for i, s := range servers {
		if i != l {
			require.Eventually(t, func() bool { _, ok := s.FSM().Exists("/after"); return ok },
				10*time.Second, time.Millisecond, "node %d never applied the write after the failure", i)
		}
	}
}

// A follower whose log write fails stops too (failStopLog): Raft would
// only answer the leader with a failure and take the next AppendEntries
// on the same store. The other two commit the write and go on.
func TestClusterFollowerWriteFailureStopsIt(t *testing.T) {
	servers, stores := startHeldCluster(t)
	l := clusterLeader(t, servers)
	f := (l + 1) % len(servers)
	err := failLogWrite(t, servers, stores, l, f, "/x")
	require.NoError(t, err, "the leader and the other follower did not commit the write")
	for i, s := range servers {
		if i != f {
			require.NoError(t, s.Err(), "node %d failed", i)
		}
	}
}

// failLogWrite proposes a create of path through leader l while node n's
// log store is held, fails n's write of it, checks that n stops with that
// error, and returns the create's outcome.
func failLogWrite(t *testing.T, servers []*Server, stores []*heldStore, l, n int, path string) error {
	t.Helper()
	stores[n].hold.Store(true)
	created := make(chan error, 1)
	go func() {
		_, err := servers[l].apply(&fsm.Command{Type: fsm.CmdOps,
			Ops: []fsm.Op{{Type: wire.OpCreate, Path: path, ACL: wire.OpenACLUnsafe}}})
		created <- err
	}()
	boom := errors.New("disk on fire")
	select {
	case stores[n].release <- boom:
	case <-time.After(10 * time.Second):
		t.Fatalf("node %d never wrote the create", n)
	}
	select {
	case <-servers[n].Failed():
		require.ErrorIs(t, servers[n].Err(), boom)
	case <-time.After(10 * time.Second):
		t.Fatalf("node %d did not stop after its log write failed", n)
	}
	select {
	case err := <-created:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the create never returned")
		return nil
	}
}
