package server

import (
	"fmt"
	"time"

	"github.com/hashicorp/raft"
)

// leaderValues are the keys a ZooKeeper leader adds to mntr, which quorum
// checks and exporters read (zk_synced_followers against the ensemble
// size, zk_learners to tell a leader): learners are the other members, and
// a follower or observer is synced when it answered the leader's
// heartbeat within the Raft heartbeat timeout, after which it would call
// an election itself. Paddock has no pending syncs (ZooKeeper's
// followers catching up by DIFF/SNAP).
func (s *Server) leaderValues() [][2]string {
	ahead, ok := s.node.trans.(*commitAheadTransport)
	if !s.cfg.clustered() || !s.isLeader() || !ok {
		return nil
	}
	cf := s.node.r.GetConfiguration()
	if cf.Error() != nil {
		return nil
	}
	since := time.Now().Add(-s.cfg.Raft.Heartbeat)
	var learners, voters, synced, syncedObservers int
	for _, srv := range cf.Configuration().Servers {
		if srv.Suffrage == raft.Voter {
			voters++
		}
		if srv.ID == s.node.id {
			continue
		}
		learners++
		if !ahead.answeredSince(srv.ID, since) {
			continue
		}
		if srv.Suffrage == raft.Voter {
			synced++
		} else {
			syncedObservers++
		}
	}
	return [][2]string{
		{"zk_learners", fmt.Sprint(learners)},
		{"zk_synced_followers", fmt.Sprint(synced)},
		{"zk_synced_non_voting_followers", "0"},
		{"zk_synced_observers", fmt.Sprint(syncedObservers)},
		{"zk_pending_syncs", "0"},
		{"zk_quorum_size", fmt.Sprint(voters)},
	}
}
