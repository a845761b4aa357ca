package server

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// TestRemovedLeaderAnswersEveryProposal removes the leader and then
// proposes on it, as a write racing its removal does. Every proposal must
// be answered: with Raft's ShutdownOnRemove, the removed node's Raft shut
// itself down, and a proposal Raft's buffered apply channel still took
// (ApplyLog picks at random between it and the shutdown) was never
// answered. A RemoveMember of the leader that published the new
// configuration in that window waited for ever (the follower that
// forwarded it gave up after 30 s).
func TestRemovedLeaderAnswersEveryProposal(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	old := servers[l]
	require.NoError(t, old.RemoveMember("0"+old.cfg.ID), "member ids are numbers")
	// Raft answers the change before it steps down.
	require.Eventually(t, func() bool { return !old.isLeader() }, 10*time.Second, time.Millisecond, "still leads")

	answered := make(chan error, 64)
	for range cap(answered) {
		f := old.node.r.ApplyLog(raft.Log{Data: []byte("x")}, time.Second)
		go func() { answered <- f.Error() }()
	}
	deadline := time.After(10 * time.Second)
	for i := range cap(answered) {
		select {
		case err := <-answered:
			require.Error(t, err, "a removed node must take no write")
		case <-deadline:
			t.Fatalf("%d of %d proposals to the removed leader never answered", cap(answered)-i, cap(answered))
		}
	}
	// The server's own write path answers too: not leader, and no leader
	// known to forward to.
	done := make(chan error, 1)
	go func() {
		_, err := old.apply(&fsm.Command{Type: fsm.CmdSetConfig, Data: []byte("server.1=x")})
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("a write on the removed node was never answered")
	}

	// It knows no leader (so it closes its client connections:
	// quorumWatch).
	require.Eventually(t, func() bool { return old.Leader() == "" }, 10*time.Second, 5*time.Millisecond,
		"the removed node still names a leader")

	// Added back, the node rejoins without a restart and catches up.
	next := newLeader(t, servers, l)
	require.NoError(t, next.AddMember(old.cfg.ID, old.cfg.Peers[l].Addr, false))
	res, err := next.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/back", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Equal(t, wire.OK, res.Err)
	require.Eventually(t, func() bool {
		_, _, err := old.FSM().Get("/back")
		return err == nil
	}, 10*time.Second, 5*time.Millisecond, "the re-added node never caught up")
}

// TestRemovedFollowerForwardsNoWrite removes a follower and at once has
// it forward a write, while it still knows the leader: the leader must not
// take it. A removed node no longer receives the log, so it could never
// see the write applied and would answer its client ConnectionLoss for a
// write that was made (a retried create then fails with NodeExists: seen
// with Curator in TestCuratorEnsembleTrackerFollowsCluster). As a
// ZooKeeper leader drops a removed learner, the leader serves a node's
// forwarded requests only while it is a member, on the connection it had
// and on a new one.
func TestRemovedFollowerForwardsNoWrite(t *testing.T) {
	// The removed node forgets its leader a heartbeat timeout after the
	// leader's last message: long enough here for it to forward a write
	// first, even on a loaded machine.
	servers, _ := startHeldClusterWith(t, func(cfg *Config) {
		cfg.Raft.Heartbeat, cfg.Raft.Election, cfg.Raft.LeaderLease = time.Second, time.Second, time.Second
	})
	l := clusterLeader(t, servers)
	f := servers[(l+1)%3]
	create := func(s *Server, path string) (*fsm.Result, error) {
		return s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: path, ACL: wire.OpenACLUnsafe}}})
	}
	// f forwards over a connection opened while it was a member.
	_, err := create(f, "/before")
	require.NoError(t, err)
	require.NoError(t, servers[l].RemoveMember(f.cfg.ID))
	require.True(t, raftKnowsLeader(f), "the removed node forgot its leader too soon for this test")
	_, err = create(f, "/after")
	require.Error(t, err)
	_, _, err = servers[l].FSM().Get("/after")
	require.Error(t, err, "the leader took a write a removed node forwarded")

	// A connection it opens now is refused as well.
	f.fwd.mu.Lock()
	if f.fwd.conn != nil {
		f.fwd.failLocked(f.fwd.conn)
	}
	f.fwd.mu.Unlock()
	require.True(t, raftKnowsLeader(f), "the removed node forgot its leader too soon for this test")
	_, err = create(f, "/later")
	require.Error(t, err)
	_, _, err = servers[l].FSM().Get("/later")
	require.Error(t, err, "the leader took a write a removed node forwarded on a new connection")
}

// TestRemovingAFollowerThroughItselfReportsSuccess removes a follower with
// a request made on that follower: it forwards the change to the leader,
// whose answer must reach it although the change made it a non-member
// (the leader refuses only what the node sends after).
func TestRemovingAFollowerThroughItselfReportsSuccess(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	f := servers[(l+1)%3]
	require.True(t, servers[l].isMember("0"+f.cfg.ID), "member ids are numbers: 0%s is %s", f.cfg.ID, f.cfg.ID)
	require.NoError(t, f.RemoveMember(f.cfg.ID))
	members, err := servers[l].Members()
	require.NoError(t, err)
	require.Len(t, members, 2)
	require.False(t, servers[l].isMember(f.cfg.ID))
}

// raftKnowsLeader reports whether s's Raft names a leader (what its
// forwarder dials).
func raftKnowsLeader(s *Server) bool {
	_, id := s.node.r.LeaderWithID()
	return id != ""
}

// TestRemovedNodeStopsServingAtOnce: a follower that has its removal
// says it knows no leader while its Raft still names one, so it refuses
// new clients and drops its connections as a leaderless node does
// (handshake, quorumWatch) instead of serving its frozen state until Raft
// notices the leader's silence, a heartbeat timeout or two later.
func TestRemovedNodeStopsServingAtOnce(t *testing.T) {
	servers, _ := startHeldClusterWith(t, func(cfg *Config) {
		cfg.Raft.Heartbeat, cfg.Raft.Election, cfg.Raft.LeaderLease = time.Second, time.Second, time.Second
	})
	l := clusterLeader(t, servers)
	f := servers[(l+1)%3]
	require.NotEmpty(t, f.Leader())
	require.NoError(t, servers[l].RemoveMember(f.cfg.ID))
	require.Eventually(t, func() bool { return f.Leader() == "" }, 500*time.Millisecond, time.Millisecond,
		"the removed node still names a leader")
	require.True(t, raftKnowsLeader(f), "the removed node's Raft forgot its leader too soon for this test")
	require.NotEmpty(t, servers[(l+2)%3].Leader(), "a member still knows its leader")
}

// TestTransferLeadershipReadsIDsAsNumbers: 03 is member 3, as reconfig
// and RemoveMember read it.
func TestTransferLeadershipReadsIDsAsNumbers(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	to := servers[(l+1)%3]
	require.NoError(t, servers[l].TransferLeadership("0"+to.cfg.ID))
	require.Eventually(t, to.isLeader, 10*time.Second, time.Millisecond, "node %s does not lead", to.cfg.ID)
}

// A reconfig that removes the leader, sent through a follower, answers
// only once /zookeeper/config shows the change: the next leader publishes
// it after its first barrier, which may come after the follower's sync
// (test/cluster's TestReconfigRemovingTheLeaderThroughAFollowerAnswersOK
// read the old configuration after an OK now and then).
func TestReconfigRemovingTheLeaderWaitsForItsPublication(t *testing.T) {
	var slow atomic.Bool
	servers, _ := startHeldClusterWith(t, func(cfg *Config) {
		cfg.ReconfigEnabled = true
		cfg.hooks = &testHooks{beforeEnsureConfig: func() {
			if slow.Load() {
				time.Sleep(300 * time.Millisecond)
			}
		}}
	})
	l := clusterLeader(t, servers)
	leaderID := servers[l].cfg.ID
	f := servers[(l+1)%3]
	require.Eventually(t, func() bool { ok, err := f.configPublished(); return err == nil && ok },
		10*time.Second, 5*time.Millisecond, "the first leader's /zookeeper/config")
	slow.Store(true)
	require.NoError(t, f.runReconfig(&wire.ReconfigRequest{LeavingServers: leaderID, CurConfigID: -1}))
	members, _ := f.publishedConfig()
	require.NotContains(t, members, "server."+leaderID+"=", "the answer would show the old configuration")
	require.Contains(t, members, "server."+f.cfg.ID+"=")
}
