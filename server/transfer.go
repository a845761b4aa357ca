package server

import (
	"errors"
	"time"

	"github.com/hashicorp/raft"
)

// A leadership transfer without gaps in a client's writes.
//
// While a transfer runs, hashicorp/raft refuses every proposal with
// ErrLeadershipTransferInProgress, without appending it; when the transfer
// fails (the target did not win within an election timeout) the node
// goes on leading and appends what comes next. A client that pipelines
// writes would then have some refused and later ones applied: a gap,
// which ZooKeeper never allows (a client's writes apply in the order sent,
// and none after one that failed). So the leader holds new proposals
// (transferGate: client writes proposed here, and writes followers
// forward) for the transfer's duration, lets Raft take everything already
// queued first (a barrier), and reopens only once Raft accepts proposals
// again: a proposal is then either taken before the transfer or after it,
// never refused by it. After a transfer that succeeded, the held writes
// find this node a follower and go to the new leader (or fail, breaking
// their connection's lane, see fwdorder.go).

// transferSettle bounds how long a failed transfer may keep Raft refusing
// proposals after its future returned (hashicorp/raft clears the flag
// just after answering).
const transferSettle = 5 * time.Second

// transferLeadership runs start (a LeadershipTransfer call) with this
// node's proposals held.
func (s *Server) transferLeadership(start func() raft.Future) error {
	r := s.node.r
	s.transferGate.pause()
	defer s.transferGate.resume()
	if err := settled(s.node, r.Barrier(DefaultProposeTimeout)).Error(); err != nil {
		return err
	}
	err := settled(s.node, start()).Error()
	if r.State() == raft.Leader {
		s.awaitTransferEnd(r)
	}
	return err
}

// awaitTransferEnd waits until Raft takes proposals again after a
// transfer left this node leading: a barrier goes through the same queue
// as proposals and is refused while the transfer flag is still set.
func (s *Server) awaitTransferEnd(r *raft.Raft) {
	deadline := time.Now().Add(transferSettle)
	for wait := time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
		err := settled(s.node, r.Barrier(time.Until(deadline))).Error()
		if !errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return
		}
		time.Sleep(wait) // a retry interval: nothing to wait on but Raft's flag
	}
}

// StepDown hands this node's leadership to the most up-to-date follower
// before a planned shutdown (paddock server does it on SIGTERM), so that
// the cluster has a leader again at once instead of after an election
// timeout; nil on a standalone server or a follower. Its writes are held
// meanwhile, as in any transfer.
func (s *Server) StepDown() error {
	if !s.cfg.clustered() || !s.isLeader() {
		return nil
	}
	// On this node only: TransferLeadership would forward the transfer
	// to the next leader if this one lost its leadership meanwhile, and
	// that one would hand its own over (and wait up to membershipTimeout
	// for a leader, past paddock server's shutdown timeout).
	return s.applyMembership(&membershipOp{Kind: "transfer"})
}
