package server

import (
	"errors"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// A leader that removes itself hands its leadership over: the remaining
// members elect a successor at once, not after their heartbeat timeout.
// The timeouts are raised to a minute first, so without the hand-off no
// node would lead again within the test's wait.
func TestRemovedLeaderHandsItsLeadershipOver(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	for _, s := range servers {
		rc := s.node.r.ReloadableConfig()
		rc.HeartbeatTimeout, rc.ElectionTimeout = time.Minute, time.Minute
		require.NoError(t, s.node.r.ReloadConfig(rc))
	}
	old := servers[l]
	require.NoError(t, old.RemoveMember(old.cfg.ID))
	next := newLeader(t, servers, l)
	members, err := next.Members()
	require.NoError(t, err)
	require.Len(t, members, 2)
	for _, m := range members {
		require.NotEqual(t, old.cfg.ID, m.ID, "the successor leads the configuration without the old leader")
	}
}

// The successor is the remaining voter that last reported the longest
// log, of those that answered lately; among equals, or with no reports,
// the lowest id.
func TestSuccessorIsTheVoterWithTheLongestLog(t *testing.T) {
	ahead := &commitAheadTransport{}
	s := &Server{node: &raftNode{id: "2", trans: ahead}}
	conf := raft.Configuration{Servers: []raft.Server{
		{ID: "10", Suffrage: raft.Voter}, {ID: "2", Suffrage: raft.Voter},
		{ID: "3", Suffrage: raft.Voter}, {ID: "4", Suffrage: raft.Nonvoter}}}
	got, ok := s.successor(conf, time.Time{})
	require.True(t, ok)
	require.Equal(t, raft.ServerID("3"), got.ID, "no reports: the lowest id, as a number, other than this node")

	ahead.acks.Store(raft.ServerID("10"), peerAck{at: time.Now(), lastLog: 7})
	ahead.acks.Store(raft.ServerID("3"), peerAck{at: time.Now(), lastLog: 6})
	ahead.acks.Store(raft.ServerID("4"), peerAck{at: time.Now(), lastLog: 9})
	got, _ = s.successor(conf, time.Time{})
	require.Equal(t, raft.ServerID("10"), got.ID, "the longest log among voters")

	now := time.Now()
	ahead.acks.Store(raft.ServerID("10"), peerAck{at: now.Add(-time.Minute), lastLog: 7})
	got, _ = s.successor(conf, now.Add(-time.Second))
	require.Equal(t, raft.ServerID("3"), got.ID, "one that answered lately, before a longer log reported a minute ago")

	_, ok = s.successor(raft.Configuration{Servers: []raft.Server{{ID: "2", Suffrage: raft.Voter}}}, time.Time{})
	require.False(t, ok, "no voter but this node")
}

// A hand-off past its deadline sends nothing: the others may have
// elected a leader by then, which a TimeoutNow would unseat.
func TestLateHandOffSendsNothing(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	f := servers[(l+1)%3]
	require.ErrorIs(t, f.handOff(time.Now().Add(-time.Millisecond)), errHandoffLate)
	require.False(t, f.isLeader())
	require.True(t, servers[l].isLeader(), "the leader keeps leading")
}

// A hand-off to a member that does not answer does not hold up Close.
func TestCloseDoesNotWaitForAHandOff(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	f := servers[(l+1)%3]
	stuck := &stuckTimeoutNow{Transport: f.node.trans, release: make(chan struct{}), called: make(chan struct{})}
	defer close(stuck.release)
	f.node.trans = stuck
	f.handoffAt.Store(monoNow())
	f.handOffIfRemoved()
	select {
	case <-stuck.called:
	case <-time.After(10 * time.Second):
		t.Fatal("no TimeoutNow sent")
	}
	closed := make(chan error, 1)
	go func() { closed <- f.Close() }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waits for a TimeoutNow nobody answers")
	}
}

// stuckTimeoutNow is a transport whose TimeoutNow blocks until release.
type stuckTimeoutNow struct {
	raft.Transport
	release chan struct{}
	called  chan struct{}
}

func (s *stuckTimeoutNow) TimeoutNow(raft.ServerID, raft.ServerAddress, *raft.TimeoutNowRequest, *raft.TimeoutNowResponse) error {
	close(s.called)
	<-s.release
	return errors.New("released")
}

// A sync that reaches a node that no longer leads (or is stepping down)
// says so with errNoLeader, which a follower's caller retries at the next
// leader: it is not run. Raft's ErrNotLeader was passed on, and a
// reconfig answered through a follower right after removing the leader
// got ConnectionLoss.
func TestSyncOnANonLeaderIsErrNoLeader(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	_, err := servers[(l+1)%3].leaderSyncPoint()
	require.ErrorIs(t, err, errNoLeader)
}
