package server

import (
	"errors"
	"slices"
	"time"

	"github.com/hashicorp/raft"
)

// A leader that removes itself hands its leadership over.
//
// hashicorp/raft's leader steps down once the configuration without it is
// committed, and nothing more: the remaining voters keep naming it leader
// until their heartbeat timeout, refuse each other's (pre-)votes while they
// do, and elect a successor only one or two election timeouts later. For
// that while no node has a leader, so every node refuses writes and, after
// two heartbeats, drops its clients (quorumWatch); a reconfig answered
// through a follower lost its connection now and then. ZooKeeper's leader
// names a designated leader in the reconfig's commit (COMMITANDACTIVATE,
// Leader.getDesignatedLeader): the others follow it without an election.
//
// Here the removed leader sends Raft's TimeoutNow, the message that ends a
// leadership transfer, to the remaining voter that last reported the
// longest log (of those that answered within a heartbeat timeout): it
// starts an election at once, and the others grant it their vote although
// they still name the old leader (the transfer flag).
// A TimeoutNow only starts an election, which Raft's rules keep safe: a
// voter whose log is behind loses it, and the cluster elects as before.
//
// The hand-off starts once the removal's answer is on its way (answer
// forwarded to the follower that sent it, or returned here): a follower
// that learns of the new leader first could lose that answer. It is sent
// only within half a heartbeat timeout of the removal's commit: the
// others start their own election a heartbeat timeout after they last
// heard from this node at the earliest, and a TimeoutNow that came after
// they had elected someone would unseat that leader (an answer whose send
// stalled on a slow follower could delay it that long).

var (
	errHandoffStillLeader = errors.New("paddock: Raft did not step down after the removal")
	errHandoffNoVoter     = errors.New("paddock: no voter left to hand over to")
	errHandoffLate        = errors.New("paddock: too late for a hand-off (the others may have elected a leader)")
)

// handOffIfRemoved starts the hand-off if this node has just removed
// itself as leader (applyMembership marks it), once.
func (s *Server) handOffIfRemoved() {
	at := s.handoffAt.Swap(0)
	if at == 0 || s.ctx.Err() != nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := s.handOff(monoTime(at).Add(s.cfg.Raft.Heartbeat / 2))
		if err != nil && s.ctx.Err() == nil {
			s.log.Warn("removed leader: no hand-off, the remaining members elect a leader when they time out",
				"id", s.cfg.ID, "err", err)
		}
	}()
}

// handOff waits until Raft has stepped down, then sends TimeoutNow to
// the successor, unless it is past deadline.
func (s *Server) handOff(deadline time.Time) error {
	r := s.node.r
	for r.State() == raft.Leader {
		if time.Now().After(deadline) {
			return errHandoffStillLeader
		}
		select {
		case <-s.ctx.Done():
			return s.ctx.Err()
		case <-time.After(time.Millisecond): // Raft steps down right after answering the removal
		}
	}
	f := r.GetConfiguration()
	if err := f.Error(); err != nil {
		return err
	}
	to, ok := s.successor(f.Configuration(), time.Now().Add(-s.cfg.Raft.Heartbeat))
	if !ok {
		return errHandoffNoVoter
	}
	if time.Now().After(deadline) {
		return errHandoffLate
	}
	t := s.node.trans
	req := &raft.TimeoutNowRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(s.node.id),
			Addr: t.EncodePeer(s.node.id, t.LocalAddr())},
	}
	// Not waited for past a shutdown: a target that is down holds the
	// call up to the transport's timeout, and Close waits for this
	// goroutine.
	sent := make(chan error, 1)
	go func() { sent <- t.TimeoutNow(to.ID, to.Address, req, &raft.TimeoutNowResponse{}) }()
	select {
	case err := <-sent:
		if err != nil {
			return err
		}
	case <-s.ctx.Done():
		return s.ctx.Err()
	}
	s.log.Info("removed leader handed its leadership to a remaining member", "id", s.cfg.ID, "to", string(to.ID))
	return nil
}

// successor picks the voter of conf, other than this node, that last
// reported the longest log among those that answered since recent (all,
// if none did); the lowest id among equals.
func (s *Server) successor(conf raft.Configuration, recent time.Time) (raft.Server, bool) {
	var voters []raft.Server
	for _, srv := range conf.Servers {
		if srv.Suffrage == raft.Voter && srv.ID != s.node.id {
			voters = append(voters, srv)
		}
	}
	if len(voters) == 0 {
		return raft.Server{}, false
	}
	slices.SortFunc(voters, func(a, b raft.Server) int {
		if idLess(string(a.ID), string(b.ID)) {
			return -1
		}
		if idLess(string(b.ID), string(a.ID)) {
			return 1
		}
		return 0
	})
	ahead, ok := s.node.trans.(*commitAheadTransport)
	if !ok {
		return voters[0], true
	}
	live := slices.DeleteFunc(slices.Clone(voters), func(v raft.Server) bool { return !ahead.answeredSince(v.ID, recent) })
	if len(live) > 0 {
		voters = live
	}
	best := voters[0]
	bestLog, _ := ahead.lastLogOf(best.ID)
	for _, v := range voters[1:] {
		if l, _ := ahead.lastLogOf(v.ID); l > bestLog {
			best, bestLog = v, l
		}
	}
	return best, true
}
