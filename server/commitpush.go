package server

import "context"

// Followers learn that an entry is committed from the leader's next
// AppendEntries: the next batch of entries, or, with none, Raft's commit
// timer (Config.Raft.Commit, 1–2× that long). A follower answers a
// forwarded write, and fires the watches of any write, only once it has
// applied it, so on a lightly loaded cluster that timer is latency on every
// write through a follower and on every notification (a lock hand-off
// waits for it twice). ZooKeeper's leader sends COMMIT at once.
//
// pushCommits does the same with Raft's means: when the leader has applied
// an entry and nothing newer is in its log, it appends a barrier (a no-op
// entry that never reaches the FSM), whose replication carries the new
// commit index to every follower at once. Under load newer entries are
// always in flight and carry it; no barrier is added.
func (s *Server) pushCommits(ctx context.Context) {
	if !s.cfg.clustered() {
		return
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.commitNudge:
		}
		s.appliedMu.Lock()
		applied := s.appliedIdx
		s.appliedMu.Unlock()
		if s.node.r.LastIndex() > uint64(applied) {
			continue // a newer entry is on its way to the followers
		}
		s.node.r.Barrier(0) // not waited for: only its replication matters
	}
}

// nudgeCommitPush tells pushCommits that an entry was applied. It never
// blocks (it runs inside Apply).
func (s *Server) nudgeCommitPush() {
	select {
	case s.commitNudge <- struct{}{}:
	default:
	}
}
