package server

import (
	"slices"
	"sync"

	"github.com/hashicorp/raft"
)

// quorumTracker lets the leader's transport know what is committed as
// soon as an answer makes it so, before Raft's own bookkeeping does.
//
// Raft counts an answer towards a commit in its replication goroutine and
// publishes the new commit index from its main loop, a goroutine hand-off
// or two later. The merging pipeline sends the next AppendEntries to a
// follower right after handing Raft the answer (aemerge.go), so the
// commit index it can read from Raft then is the one before that answer,
// and the follower would learn of the commit the answer completed only
// with the AppendEntries after, a round trip later, and apply it (answer
// its clients' writes, fire their watches) that much later.
//
// The tracker computes the commit index the way Raft's leader does
// (hashicorp/raft commitment.go): the highest index that a majority of
// the voters of the latest configuration hold, counting the leader, and
// only from an index of the leader's own term on (Raft commits an older
// term's entries only by committing one of its own after them). It learns
// the followers' match indexes from their successful answers, as Raft
// does; the leader's own copy is accounted for by the transport's cap
// (leaderLog.commitCap: never past an entry the leader has not made
// durable). Its answer is only ever sent as a commit index, which a
// follower applies only up to entries it holds and has checked against
// the leader's log.
//
// Two rules make it stricter than Raft, never looser:
//   - it uses the configuration Raft reports when it is asked, which may
//     lag a configuration entry Raft has just appended, so a commit index
//     it computes never reaches a configuration entry Raft has not
//     committed yet (sentConfig): the entries before it are held by a
//     majority of the old configuration, and one server changes at a
//     time, so every majority of the new one includes one of them, as
//     Raft's single-server membership changes require;
//   - the first entry of the term is the first one it saw sent, which is
//     never earlier than the true first.
type quorumTracker struct {
	mu       sync.Mutex
	term     uint64
	firstOwn uint64                   // first index of the term seen sent (0: none yet)
	config   uint64                   // the last configuration entry seen sent, this term
	match    map[raft.ServerID]uint64 // per follower, the last entry it acknowledged this term
}

// sent records an AppendEntries the leader sends: the term it is for and
// the entries it carries.
func (q *quorumTracker) sent(req *raft.AppendEntriesRequest) {
	if len(req.Entries) == 0 {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.at(req.Term) {
		return
	}
	for _, e := range req.Entries {
		if e.Term == req.Term && (q.firstOwn == 0 || e.Index < q.firstOwn) {
			q.firstOwn = e.Index
		}
		if e.Type == raft.LogConfiguration {
			// Matches start over with each configuration, as Raft's do
			// (commitment.setConfiguration): a server removed and added
			// again must not count with what it held before.
			q.config = max(q.config, e.Index)
			clear(q.match)
		}
	}
}

// acked records that follower id answered an AppendEntries of term with
// success: its log matches the leader's up to last.
func (q *quorumTracker) acked(id raft.ServerID, term, last uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.at(term) {
		return
	}
	if q.match == nil {
		q.match = map[raft.ServerID]uint64{}
	}
	q.match[id] = max(q.match[id], last)
}

// at moves the tracker to term if it is newer and reports whether term
// is the tracker's (an older term's traffic is ignored).
func (q *quorumTracker) at(term uint64) bool {
	if term > q.term {
		q.term, q.firstOwn, q.config = term, 0, 0
		clear(q.match)
	}
	return term == q.term
}

// commit is the highest index known committed in term, given the latest
// configuration, Raft's own commit index and self, the leader's ID; 0
// when none is known (also when the leader is not a voter of cfg: Raft
// then counts only the followers).
func (q *quorumTracker) commit(term uint64, cfg raft.Configuration, self raft.ServerID, raftCommit uint64) uint64 {
	var buf [8]uint64
	others, voters, selfVotes := buf[:0], 0, false
	q.mu.Lock()
	defer q.mu.Unlock()
	if term != q.term || q.firstOwn == 0 {
		return 0
	}
	for _, s := range cfg.Servers {
		if s.Suffrage != raft.Voter {
			continue
		}
		voters++
		if s.ID == self {
			selfVotes = true
			continue
		}
		others = append(others, q.match[s.ID])
	}
	need := voters / 2 // followers needed besides the leader
	if !selfVotes || need == 0 || need > len(others) {
		return 0
	}
	slices.Sort(others)
	c := others[len(others)-need]
	if q.config > raftCommit && c >= q.config {
		c = q.config - 1
	}
	if c < q.firstOwn {
		return 0
	}
	return c
}
