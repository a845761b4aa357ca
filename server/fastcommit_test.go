package server

import (
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// voters is a configuration of voters with these IDs, then nonvoters.
func voters(ids []string, nonvoters ...string) raft.Configuration {
	var c raft.Configuration
	for _, id := range ids {
		c.Servers = append(c.Servers, raft.Server{ID: raft.ServerID(id), Suffrage: raft.Voter})
	}
	for _, id := range nonvoters {
		c.Servers = append(c.Servers, raft.Server{ID: raft.ServerID(id), Suffrage: raft.Nonvoter})
	}
	return c
}

func TestQuorumTrackerCommitsWhatAMajorityHolds(t *testing.T) {
	three := voters([]string{"1", "2", "3"}, "4")
	var q quorumTracker
	require.Zero(t, q.commit(5, three, "1", 0), "nothing known")

	q.sent(appendReq(5, 9, 10, 12, 9))
	require.Zero(t, q.commit(5, three, "1", 9), "sent, not acknowledged")
	q.acked("4", 5, 12)
	require.Zero(t, q.commit(5, three, "1", 9), "a nonvoter's copy does not count")
	q.acked("2", 5, 11)
	require.Equal(t, uint64(11), q.commit(5, three, "1", 9), "the leader and one follower of three")
	q.acked("3", 5, 12)
	require.Equal(t, uint64(12), q.commit(5, three, "1", 9))
	q.acked("3", 5, 10)
	require.Equal(t, uint64(12), q.commit(5, three, "1", 9), "a late, older answer does not move a match back")

	five := voters([]string{"1", "2", "3", "5", "6"}) // 4 is not in it
	require.Equal(t, uint64(11), q.commit(5, five, "1", 9), "five voters: the second-best follower")
	require.Zero(t, q.commit(5, voters([]string{"2", "3", "4"}), "1", 9), "the leader is not a voter")
	require.Zero(t, q.commit(4, three, "1", 9), "another term")
}

func TestQuorumTrackerCommitsOnlyFromTheTermsOwnEntries(t *testing.T) {
	three := voters([]string{"1", "2", "3"})
	var q quorumTracker
	// The new leader's first AppendEntries: an older term's entries, then its own.
	req := appendReq(7, 3, 4, 6, 3)
	req.Entries[0].Term, req.Entries[1].Term = 6, 6
	q.sent(req)
	q.acked("2", 7, 5)
	require.Zero(t, q.commit(7, three, "1", 3), "entry 5 is of term 6: Raft commits it only with one of term 7")
	q.acked("2", 7, 6)
	require.Equal(t, uint64(6), q.commit(7, three, "1", 3))

	// A new term starts over: the old term's answers do not count.
	q.sent(appendReq(8, 6, 7, 7, 6))
	require.Zero(t, q.commit(8, three, "1", 6))
	q.acked("3", 7, 9)
	require.Zero(t, q.commit(8, three, "1", 6), "an answer of the old term")
	q.sent(appendReq(7, 6, 7, 9, 6))
	q.acked("3", 8, 7)
	require.Equal(t, uint64(7), q.commit(8, three, "1", 6), "an old term's request changes nothing")
}

func TestQuorumTrackerStopsBeforeAnUncommittedConfiguration(t *testing.T) {
	three := voters([]string{"1", "2", "3"})
	var q quorumTracker
	req := appendReq(2, 0, 1, 6, 0)
	req.Entries[3].Type = raft.LogConfiguration // index 4
	q.sent(req)
	q.acked("2", 2, 6)
	require.Equal(t, uint64(3), q.commit(2, three, "1", 2), "Raft has not committed the configuration at 4")
	require.Equal(t, uint64(6), q.commit(2, three, "1", 4), "Raft has")

	// Stopping before it never goes below the term's first entry.
	var r quorumTracker
	req = appendReq(3, 0, 1, 2, 0)
	req.Entries[0].Type = raft.LogConfiguration
	r.sent(req)
	r.acked("3", 3, 2)
	require.Zero(t, r.commit(3, three, "1", 0))
}

func TestRaiseCommitNeverPassesTheRequestsLastEntry(t *testing.T) {
	req := appendReq(2, 10, 11, 13, 9)
	raised := raiseCommit(req, 12)
	require.Equal(t, uint64(12), raised.LeaderCommitIndex)
	require.Equal(t, uint64(9), req.LeaderCommitIndex, "Raft's request is not changed")
	require.Equal(t, uint64(13), raiseCommit(req, 20).LeaderCommitIndex, "at most the last entry it carries")
	require.Same(t, req, raiseCommit(req, 8), "never lowered")

	empty := appendReq(2, 10, 1, 0, 4)
	require.Equal(t, uint64(10), raiseCommit(empty, 30).LeaderCommitIndex, "no entries: up to the previous one")
	require.Same(t, req, raiseCommit(req, 9))
}

// The merging pipeline reports an answer before it sends what waited, so
// the commit that answer completes can ride on the next AppendEntries.
func TestMergingPipelineReportsAnAnswerBeforeTheNextSend(t *testing.T) {
	inner := newFakePipeline()
	var q quorumTracker
	three := voters([]string{"1", "2", "3"})
	prepare := func(r *raft.AppendEntriesRequest) *raft.AppendEntriesRequest {
		q.sent(r)
		return raiseCommit(r, q.commit(r.Term, three, "1", 0))
	}
	p := newMergingPipeline(inner, prepare, func(term, last uint64) { q.acked("2", term, last) })
	defer p.Close()
	_, err := p.AppendEntries(appendReq(2, 0, 1, 3, 0), new(raft.AppendEntriesResponse))
	require.NoError(t, err)
	recvSent(t, inner)
	_, err = p.AppendEntries(appendReq(2, 3, 4, 5, 0), new(raft.AppendEntriesResponse))
	require.NoError(t, err)
	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: true, LastLog: 3})
	next := recvSent(t, inner)
	require.Equal(t, []uint64{4, 5}, entryIndexes(next))
	require.Equal(t, uint64(3), next.LeaderCommitIndex, "the answer to 1..3 made 3 committed, and the next AppendEntries says so")

	// A refusal reports nothing.
	_, err = p.AppendEntries(appendReq(2, 5, 6, 6, 0), new(raft.AppendEntriesResponse))
	require.NoError(t, err)
	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: false})
	require.Equal(t, uint64(3), q.commit(2, three, "1", 0))
}

func TestQuorumTrackerStartsOverAtEachConfiguration(t *testing.T) {
	three := voters([]string{"1", "2", "3"})
	var q quorumTracker
	q.sent(appendReq(2, 0, 1, 4, 0))
	q.acked("2", 2, 4)
	require.Equal(t, uint64(4), q.commit(2, three, "1", 4))
	// Server 2 removed (entry 5) and, once that committed, added again
	// (entry 6) with an empty log: what it held before does not count.
	req := appendReq(2, 4, 5, 6, 4)
	req.Entries[0].Type, req.Entries[1].Type = raft.LogConfiguration, raft.LogConfiguration
	q.sent(req)
	require.Equal(t, uint64(0), q.commit(2, three, "1", 6))
	q.acked("3", 2, 6)
	require.Equal(t, uint64(6), q.commit(2, three, "1", 6))
}

// fakeRaft is a raftView.
type fakeRaft struct {
	commit, term uint64
	cfg          raft.Configuration
}

func (f fakeRaft) CommitIndex() uint64 { return f.commit }
func (f fakeRaft) CurrentTerm() uint64 { return f.term }
func (f fakeRaft) GetConfiguration() raft.ConfigurationFuture {
	return fakeConfigFuture{f.cfg}
}

type fakeConfigFuture struct{ cfg raft.Configuration }

func (f fakeConfigFuture) Error() error                      { return nil }
func (f fakeConfigFuture) Index() uint64                     { return 0 }
func (f fakeConfigFuture) Configuration() raft.Configuration { return f.cfg }

func TestKnownCommitIsNothingOnceRaftMovedToANewerTerm(t *testing.T) {
	c := &commitAheadTransport{self: "1"}
	three := voters([]string{"1", "2", "3"})
	c.quorum.sent(appendReq(5, 100, 101, 110, 100))
	c.quorum.acked("2", 5, 108)
	require.Equal(t, uint64(108), c.knownCommitOf(fakeRaft{commit: 100, term: 5, cfg: three}, 5))
	require.Equal(t, uint64(112), c.knownCommitOf(fakeRaft{commit: 112, term: 5, cfg: three}, 5), "Raft's own, if higher")
	// Deposed: Raft took a new leader's commit index in term 6, while an
	// old request of term 5 still waits to be sent.
	require.Zero(t, c.knownCommitOf(fakeRaft{commit: 120, term: 6, cfg: three}, 5))
}
