package server

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/wire"
)

// Order of forwarded writes. ZooKeeper applies a client's requests in the
// order the client sent them, pipelined or not. A connection's reader
// proposes its writes one after another without waiting for their
// results; through a follower they keep that order because:
//
//   - forwarder.start runs in the reader and queues the request on the
//     leader connection's frameWriter before it returns, and frameWriter
//     sends in the order of its calls;
//   - the leader proposes each forwarded write in serveForward's read loop
//     (startForward), in the order it arrived; only the wait for the
//     result runs in a goroutine of its own.
//
// A write whose fate became unknown (its leader connection broke, it
// timed out, a snapshot install swallowed its entry, the leader lost its
// leadership) might still be applied after later writes sent on another
// leader connection. So the client connection's lane breaks: each later
// write of that connection fails with ConnectionLoss, which closes it,
// as a ZooKeeper follower that loses its leader closes its clients'
// connections. For the same reason the lane keeps a connection's writes
// on one route while any is unanswered: one leader connection, or this
// node's own Raft while it leads in one term. A write for another route
// (the leader changed, this node became leader or stopped leading, or
// led again after losing its leadership, which may have refused the
// earlier writes) breaks it too.

// fwdLane is one client connection's writes in a cluster. Its fields are
// guarded by forwarder.mu.
type fwdLane struct {
	route    any  // of the writes in flight: a leader net.Conn, or a localRoute
	inflight int  // started and not yet answered
	broken   bool // a write's fate is unknown: refuse the rest
	// sendMu is held, apart from forwarder.mu, by whoever registers and
	// sends a write of the lane (the connection's reader in start, or a
	// resend, fwdretry.go), so that writes go out in the order they were
	// registered in.
	sendMu sync.Mutex
}

// localRoute is the route of writes this node proposes as leader of a
// term.
type localRoute struct{ term uint64 }

// enter records a write of lane on route, or breaks the lane if writes
// on another route are unanswered. It reports whether the write may go.
func (l *fwdLane) enter(route any) bool {
	if l.inflight > 0 && l.route != route {
		l.broken = true
	}
	if l.broken {
		return false
	}
	l.route = route
	l.inflight++
	return true
}

// leave records the answer to a write of lane; lost: its fate is unknown.
func (l *fwdLane) leave(lost bool) {
	l.inflight--
	if lost {
		l.broken = true
	}
}

// proposeLocal proposes a write of lane on this node's Raft, which leads
// in term (read after the node's state: see sameLeadership). A proposal
// refused before it reached Raft's log breaks the lane at once.
func (f *forwarder) proposeLocal(lane *fwdLane, term uint64, propose func() raft.ApplyFuture) raft.ApplyFuture {
	f.mu.Lock()
	ok := lane.enter(localRoute{term})
	f.mu.Unlock()
	if !ok {
		return errFuture{errLaneBroken}
	}
	lf := &laneFuture{ApplyFuture: propose(), f: f, lane: lane}
	if refusedAtOnce(lf.ApplyFuture) {
		_ = lf.Error()
		return lf.ApplyFuture
	}
	return lf
}

// laneFuture is a write proposed on this node's Raft for a lane; the
// first Error (the connection's writer asks it first) records the answer.
type laneFuture struct {
	raft.ApplyFuture
	f    *forwarder
	lane *fwdLane
	once sync.Once
}

func (l *laneFuture) Error() error {
	err := l.ApplyFuture.Error()
	l.once.Do(func() {
		l.f.mu.Lock()
		l.lane.leave(err != nil)
		l.f.mu.Unlock()
	})
	return err
}

// errLaneBroken refuses a write after an earlier one of the same client
// connection was lost; the client sees ConnectionLoss.
var errLaneBroken = errors.New("paddock: an earlier write of this connection was lost on the way to the leader")

// fwdCall is a call waiting for its answer.
type fwdCall struct {
	id     uint64
	ch     chan *fwdResponse // buffered: one answer
	tagged bool              // may be resolved by the local apply of its entry
	lane   *fwdLane          // a client connection's write, or nil
	conn   net.Conn          // the leader connection it was sent on
	term   uint64            // the Raft term conn was dialed in
	req    *fwdRequest       // a client connection's write, for a resend (fwdretry.go)
	// resends counts how often the write was sent again.
	resends int
	// outlives is set for a sync or a membership change: answered on
	// its connection after this node has moved on to a new leader
	// (forwarder.retireLocked), since it takes no part in the order of
	// a client's writes.
	outlives bool
}

// start sends req to the leader and returns the call to wait for. Calls
// started one after another are sent in that order. A tagged call (a
// write) is answered by this node's apply of its entry, or by the leader
// if it fails.
func (f *forwarder) start(req *fwdRequest, tagged bool, lane *fwdLane) (call *fwdCall, err error) {
	if lane != nil {
		lane.sendMu.Lock()
		defer lane.sendMu.Unlock()
		defer func() {
			if err != nil {
				// Not sent (no leader known yet, the leader connection
				// broke): the write fails, and so must every later one
				// of its connection, which the reader goes on proposing
				// meanwhile; one sent once a leader is known would be
				// applied after this one was not (a gap).
				f.mu.Lock()
				lane.broken = true
				f.mu.Unlock()
			}
		}()
	}
	for attempt := 0; ; attempt++ {
		c, w, err := f.connect(true)
		if err != nil {
			return nil, err
		}
		call, err := f.register(c, req, tagged, lane)
		if errors.Is(err, errFwdConn) && attempt == 0 {
			continue // c broke since connect: once more, on a new one
		}
		if err != nil {
			return nil, err
		}
		if err := w.send(req); err != nil {
			f.mu.Lock()
			if errors.Is(err, errFwdRetired) {
				f.abandonLocked(call) // c waits for others' answers
			} else {
				f.failLocked(c) // and call with it, unless that happened already
			}
			f.mu.Unlock()
		}
		return call, nil
	}
}

// register numbers req and records its call, if c is still the leader
// connection and lane may use it.
func (f *forwarder) register(c net.Conn, req *fwdRequest, tagged bool, lane *fwdLane) (*fwdCall, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != c {
		return nil, errFwdConn
	}
	if lane != nil && !lane.enter(c) {
		return nil, errLaneBroken
	}
	f.nextID++
	req.ID = f.nextID
	if tagged {
		req.Tag = fwdTag(f.epoch, req.ID)
	}
	call := &fwdCall{id: req.ID, ch: make(chan *fwdResponse, 1), tagged: tagged, lane: lane, conn: c, term: f.term,
		outlives: req.Kind == fwdSync || req.Kind == fwdMembership}
	if lane != nil {
		call.req = req
	}
	f.pending[req.ID] = call
	return call, nil
}

// wait waits at most timeout for call's answer.
func (f *forwarder) wait(call *fwdCall, timeout time.Duration) (*fwdResponse, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var resp *fwdResponse
	select {
	case resp = <-call.ch:
	case <-timer.C:
		f.mu.Lock()
		_, waiting := f.pending[call.id]
		delete(f.pending, call.id)
		f.mu.Unlock()
		if !waiting {
			resp = <-call.ch // answered meanwhile: its sender is on its way
		}
	}
	if call.lane != nil {
		f.mu.Lock()
		resend := call.mayResend(resp)
		if !resend {
			call.lane.leave(resp == nil || resp.Err != "")
		}
		f.mu.Unlock()
		if resend {
			return f.resend(call, timeout)
		}
	}
	switch {
	case resp == nil:
		return nil, fmt.Errorf("paddock: leader did not answer within %v", timeout)
	case resp.Code != wire.OK:
		return nil, resp.Code
	case resp.Err != "":
		return nil, errors.New(resp.Err)
	}
	return resp, nil
}

// call sends req to the leader and waits for the answer.
func (f *forwarder) call(req *fwdRequest, timeout time.Duration, tagged bool) (*fwdResponse, error) {
	call, err := f.start(req, tagged, nil)
	if err != nil {
		return nil, err
	}
	return f.wait(call, timeout)
}

// startForward begins serving a forwarded request on the leader. A write
// is proposed at once, so that the writes read from one follower
// connection enter the log in the order they arrived; the returned
// function waits for its result and builds the answer (nil: none, a
// tagged write that succeeded). refused reports a write Raft did not
// take (see enqueue): the connection must take nothing after it.
func (s *Server) startForward(peer string, req *fwdRequest) (answer func() *fwdResponse, refused bool) {
	if req.Kind != fwdApply {
		return func() *fwdResponse { return s.serveForwarded(peer, req) }, false
	}
	resp := &fwdResponse{ID: req.ID}
	answer = func() *fwdResponse { return resp }
	s.transferGate.wait(s.ctx.Done())
	switch {
	case s.node.r.State() != raft.Leader:
		resp.Err = errNoLeader.Error()
		return answer, false
	case req.Session != 0 && !s.ownedBy(req.Session, peer):
		resp.Code = wire.ErrSessionMoved
		return answer, false
	}
	f := s.enqueue(raft.Log{Data: req.Cmd, Extensions: req.Tag})
	if refusedAtOnce(f) {
		// Raft did not take it: nothing later on this connection may be
		// taken either (serveForward closes it after the answers).
		resp.Err = f.Error().Error()
		return answer, true
	}
	return func() *fwdResponse {
		r, err := resultOf(f)
		if err != nil {
			resp.Err = err.Error()
			return resp
		}
		if r.Session != 0 {
			s.setOwner(r.Session, peer)
		}
		if len(req.Tag) > 0 {
			return nil
		}
		res := *r
		res.Events = nil
		resp.Index, resp.Result = f.Index(), &res
		return resp
	}, false
}

// handleForward serves one forwarded request; nil means no answer.
func (s *Server) handleForward(peer string, req *fwdRequest) *fwdResponse {
	answer, _ := s.startForward(peer, req)
	return answer()
}
