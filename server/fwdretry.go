package server

import (
	"errors"
	"time"
)

// Sending again a write the old leader refused. Right after a change of
// leader (a transfer takes milliseconds) a follower that has not heard
// of the new leader yet forwards a client's write to the old one, which
// refuses it unproposed (errNoLeader: it no longer leads, or leads a
// newer term than the connection's, serveForward and startForward). When
// that write is the only one of its client connection in flight, nothing
// of the connection can have been taken after it, so the follower sends
// it again, once it knows a newer term, instead of failing it
// (ConnectionLoss). A later write of the connection started meanwhile
// breaks the lane as before (it would take another route while this one
// is unanswered), and this one then fails too. lane.sendMu keeps the
// resend and the reader's next write in the order they register in.

// maxResends bounds how often one write is sent again.
const maxResends = 3

// lone reports, with forwarder.mu held, whether call is the only write of
// its client connection in flight, nothing lost before it.
func (call *fwdCall) lone() bool {
	return call.req != nil && call.lane != nil && call.lane.inflight == 1 && !call.lane.broken
}

// mayResend reports, with forwarder.mu held, whether resp, call's answer,
// refuses an unproposed write that may go again: its lane's only write in
// flight, on the route it went.
func (call *fwdCall) mayResend(resp *fwdResponse) bool {
	return resp != nil && resp.Err == errNoLeader.Error() && call.resends < maxResends &&
		call.lone() && call.lane.route == call.conn
}

// resend sends call's write again once this node knows a term after the
// one it went in, and waits for the answer. The write is still its
// lane's one in flight (mayResend left it counted).
func (f *forwarder) resend(call *fwdCall, timeout time.Duration) (*fwdResponse, error) {
	if !f.awaitNewerTerm(call.term) {
		return f.dropResend(call)
	}
	next, err := f.registerResend(call)
	if err != nil {
		return f.dropResend(call)
	}
	return f.wait(next, timeout)
}

// registerResend registers and sends call's write on the current leader
// connection, unless the lane took another write meanwhile.
func (f *forwarder) registerResend(call *fwdCall) (*fwdCall, error) {
	lane := call.lane
	lane.sendMu.Lock()
	defer lane.sendMu.Unlock()
	c, w, err := f.connect(true)
	if err != nil {
		return nil, err
	}
	f.mu.Lock()
	if c == call.conn || f.conn != c || !call.lone() {
		f.mu.Unlock()
		return nil, errLaneBroken
	}
	req := *call.req
	f.nextID++
	req.ID = f.nextID
	if call.tagged {
		req.Tag = fwdTag(f.epoch, req.ID)
	}
	next := &fwdCall{id: req.ID, ch: make(chan *fwdResponse, 1), tagged: call.tagged, lane: lane, conn: c,
		term: f.term, req: &req, resends: call.resends + 1}
	f.pending[req.ID] = next
	lane.route = c
	f.mu.Unlock()
	if err := w.send(&req); err != nil {
		f.mu.Lock()
		if errors.Is(err, errFwdRetired) {
			f.abandonLocked(next)
		} else {
			f.failLocked(c)
		}
		f.mu.Unlock()
	}
	return next, nil
}

// dropResend fails call's write as refused, breaking its lane.
func (f *forwarder) dropResend(call *fwdCall) (*fwdResponse, error) {
	f.mu.Lock()
	call.lane.leave(true)
	f.mu.Unlock()
	return nil, errNoLeader
}

// awaitNewerTerm waits, at most the propose timeout, until this node's
// Raft is in a term after term; false if it is not (or the server stops).
func (f *forwarder) awaitNewerTerm(term uint64) bool {
	return f.pollRaft(func() bool { return f.s.node.r.CurrentTerm() > term })
}
