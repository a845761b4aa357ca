package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// Forwarding: a follower sends writes (and session creates/closes), its
// clients' session touches, sync barriers and session re-attachments to
// the leader over the cluster port. Messages are msgpack, framed by a
// 4-byte big-endian length.

type fwdKind uint8

const (
	fwdApply      fwdKind = 1 // propose Cmd; reply with its index and result
	fwdTouch      fwdKind = 2 // touch Sessions; no reply
	fwdSync       fwdKind = 3 // reply with the leader's commit index
	fwdAttach     fwdKind = 4 // Session is now served by the sender
	fwdMembership fwdKind = 5 // run a membership change on the leader

	// maxForwardFrame bounds one forwarding message.
	maxForwardFrame = 64 << 20
)

var (
	errNoLeader = errors.New("paddock: no leader")
	errFwdConn  = errors.New("paddock: connection to the leader lost")
)

type fwdRequest struct {
	ID         uint64        `msgpack:"i"`
	Kind       fwdKind       `msgpack:"k"`
	Cmd        []byte        `msgpack:"c,omitempty"`
	Session    int64         `msgpack:"s,omitempty"`
	Sessions   []int64       `msgpack:"ss,omitempty"`
	Membership *membershipOp `msgpack:"m,omitempty"`
	// Tag, on a write, asks the leader to propose it with this tag and
	// to answer only a failure: the sender resolves the call from its own
	// apply of the tagged entry (fwdlocal.go).
	Tag []byte `msgpack:"t,omitempty"`
}

type fwdResponse struct {
	ID     uint64      `msgpack:"i"`
	Index  uint64      `msgpack:"x"`
	Result *fsm.Result `msgpack:"r,omitempty"`
	Code   wire.Code   `msgpack:"c,omitempty"` // a protocol error, e.g. SessionMoved
	Err    string      `msgpack:"e,omitempty"` // any other failure
}

func readMsg(r io.Reader, v any) error {
	b, err := wire.ReadFrame(r, nil, maxForwardFrame)
	if err != nil {
		return err
	}
	if err := checkMsgpack(b); err != nil {
		return fmt.Errorf("forwarding message: %w", err)
	}
	return msgpack.Unmarshal(b, v)
}

// serveForward runs on the leader for one follower connection.
func (s *Server) serveForward(peer string, c net.Conn) {
	defer c.Close()
	select {
	case <-s.nodeReady:
	case <-s.ctx.Done():
		return
	}
	stop := s.closeOnShutdown(c)
	defer stop()
	fw := newFrameWriter(c, s.cfg.WriteTimeout)
	br := bufio.NewReaderSize(c, 64<<10)
	var term uint64 // the leadership the connection's writes go to
	var answering sync.WaitGroup
	for {
		var req fwdRequest
		if err := readMsg(br, &req); err != nil {
			return
		}
		if !s.isMember(peer) {
			// Removed (isMember): answer this one, let the others
			// settle (the answer to the request that removed it, made
			// through it), and close. Its writes, touches and syncs now
			// go nowhere, and its clients, whose writes fail, move on.
			s.log.Warn("refusing forwarded requests from a node that is not a member", "peer", peer)
			if req.Kind != fwdTouch {
				_ = fw.send(&fwdResponse{ID: req.ID, Err: errNoLeader.Error()})
			}
			answering.Wait()
			return
		}
		if req.Kind == fwdTouch {
			s.touchFromPeer(peer, req.Sessions)
			continue
		}
		if req.Kind == fwdApply {
			// After a transfer the write held: checked against the
			// leadership as the transfer left it.
			s.transferGate.wait(s.ctx.Done())
		}
		if req.Kind == fwdApply && !s.sameLeadership(&term) {
			// The follower pipelines a client's writes behind each other
			// and learns of a refusal only from its answer: once this
			// node has stopped leading, no later write of the connection
			// may be taken (it may lead again by then, and take it after
			// an earlier one it refused or whose entry a new leader
			// dropped). Answer this one, let the others settle, and close:
			// the follower fails what it had in flight and reconnects.
			_ = fw.send(&fwdResponse{ID: req.ID, Err: errNoLeader.Error()})
			answering.Wait()
			return
		}
		answer, refused := s.startForward(peer, &req)
		if refused {
			// As above: the follower may have pipelined more writes of
			// the same client behind this one.
			_ = fw.send(answer())
			answering.Wait()
			return
		}
		answering.Add(1)
		go func() {
			defer answering.Done()
			resp := answer()
			if resp == nil {
				return
			}
			if err := fw.send(resp); err != nil {
				_ = c.Close()
			}
			if req.Kind == fwdMembership {
				s.handOffIfRemoved() // its answer is sent (handoff.go)
			}
		}()
	}
}

// sameLeadership reports whether this node leads in *term, the term it
// led in when a forwarding connection's first write came (0: none yet,
// set now). The state is read before the term, which only grows: a
// leadership lost and won again between the two reads shows as a new
// term (read the other way round, a node that stepped down within its
// term and then won the next would pass with the old one).
func (s *Server) sameLeadership(term *uint64) bool {
	if s.node.r.State() != raft.Leader {
		return false
	}
	t := s.node.r.CurrentTerm()
	if *term != 0 && t != *term {
		return false
	}
	*term = t
	return true
}

// closeOnShutdown closes c when the server shuts down; call the returned
// function once c is no longer used.
func (s *Server) closeOnShutdown(c net.Conn) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-s.ctx.Done():
			_ = c.Close()
		case <-done:
		}
	}()
	return func() { close(done) }
}

// serveForwarded serves a forwarded request other than a write.
func (s *Server) serveForwarded(peer string, req *fwdRequest) *fwdResponse {
	resp := &fwdResponse{ID: req.ID}
	if s.node.r.State() != raft.Leader {
		resp.Err = errNoLeader.Error()
		return resp
	}
	switch req.Kind {
	case fwdSync:
		idx, err := s.leaderSyncPoint()
		if err != nil {
			resp.Err = err.Error()
			return resp
		}
		resp.Index = uint64(idx)
	case fwdMembership:
		if req.Membership == nil {
			resp.Err = "membership change missing"
		} else if err := s.applyMembership(req.Membership); err != nil {
			resp.Err = err.Error()
			var refused errReconfig // a reconfig's refusal travels as its code
			if errors.As(err, &refused) {
				resp.Code, resp.Err = refused.code, ""
			}
		}
	case fwdAttach:
		if err := s.attachHere(req.Session, peer); err != nil {
			resp.Code = wire.ErrSessionExpired
		}
	default:
		resp.Err = fmt.Sprintf("unknown forward kind %d", req.Kind)
	}
	return resp
}

// forwarder is a follower's connection to the leader.
type forwarder struct {
	s *Server

	dialMu sync.Mutex // held while dialing (connect)

	mu     sync.Mutex
	conn   net.Conn
	w      *frameWriter // conn's
	target string
	// term is the Raft term conn was dialed in: a leader takes a
	// connection's writes only within one leadership (serveForward), so
	// a connection from an earlier term, even to the same node leading
	// again, is replaced rather than refused.
	term    uint64
	nextID  uint64
	pending map[uint64]*fwdCall
	closed  bool // close was called: no more connections
	// epoch is in the tags of this forwarder's writes (fwdlocal.go).
	epoch uint64
}

func newForwarder(s *Server) *forwarder {
	return &forwarder{s: s, pending: make(map[uint64]*fwdCall), epoch: newFwdEpoch()}
}

// connect returns a connection to the current leader and its writer,
// dialing if needed. It dials without f.mu (dialMu keeps it to one dial at
// a time): the FSM goroutine takes f.mu to resolve this node's forwarded
// writes (resolveLocal), and a dial may take seconds. With await, a node
// that knows no leader waits for one (awaitLeader).
func (f *forwarder) connect(await bool) (net.Conn, *frameWriter, error) {
	addr, id := f.s.node.r.LeaderWithID()
	if addr == "" && await {
		addr, id = f.awaitLeader()
	}
	if addr == "" {
		return nil, nil, errNoLeader
	}
	term := f.s.node.r.CurrentTerm()
	if a, ok := f.s.cfg.peerAddr(string(id)); ok {
		addr = raft.ServerAddress(a) // not the address it advertises (peerAddr)
	}
	if c, w := f.current(string(addr), term); c != nil {
		return c, w, nil
	}
	f.dialMu.Lock()
	defer f.dialMu.Unlock()
	f.mu.Lock()
	if f.conn != nil && f.target == string(addr) && f.term == term {
		defer f.mu.Unlock()
		return f.conn, f.w, nil // another caller dialed meanwhile
	}
	if f.conn != nil {
		f.retireLocked(f.conn) // to the previous leadership: send nothing more there
	}
	closed := f.closed
	f.mu.Unlock()
	if closed {
		return nil, nil, errFwdConn
	}
	c, err := f.s.mux.dial(streamForward, string(addr), 2*time.Second)
	if err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		_ = c.Close()
		return nil, nil, errFwdConn
	}
	f.conn, f.w, f.target, f.term = c, newFrameWriter(c, f.s.cfg.WriteTimeout), string(addr), term
	go f.readLoop(c)
	return c, f.w, nil
}

// awaitLeader waits for Raft to know a leader, for a request that came
// while it knew none: leadership is moving (a transfer, which takes
// milliseconds, or an election). It waits at most the propose timeout, as
// a write waits for room in Raft's queue, and returns "" if no leader
// came (or the server is stopping). Nothing of the caller's has been sent
// yet, so a request that waits here keeps its place in its connection's
// order.
func (f *forwarder) awaitLeader() (addr raft.ServerAddress, id raft.ServerID) {
	f.pollRaft(func() bool {
		addr, id = f.s.node.r.LeaderWithID()
		return addr != ""
	})
	return addr, id
}

// pollRaft polls cond, backing off from 1 to 20 ms (Raft gives no notice
// of a follower learning its leader or a new term), until it holds, the
// propose timeout passes, or the server stops; it reports whether cond
// held.
func (f *forwarder) pollRaft(cond func() bool) bool {
	deadline := time.Now().Add(f.s.proposeTimeout())
	for wait := time.Millisecond; !cond(); wait = min(2*wait, 20*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-f.s.ctx.Done():
			return false
		case <-time.After(wait):
		}
	}
	return true
}

// current returns the leader connection if it goes to addr and was
// dialed in term.
func (f *forwarder) current(addr string, term uint64) (net.Conn, *frameWriter) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.conn != nil && f.target == addr && f.term == term {
		return f.conn, f.w
	}
	return nil, nil
}

func (f *forwarder) readLoop(c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		var resp fwdResponse
		if err := readMsg(br, &resp); err != nil {
			f.mu.Lock()
			f.failLocked(c)
			f.mu.Unlock()
			return
		}
		f.mu.Lock()
		call, ok := f.pending[resp.ID]
		delete(f.pending, resp.ID)
		if f.conn != c && f.waitingOn(c) == 0 {
			_ = c.Close() // retired, and its last call answered
		}
		f.mu.Unlock()
		if ok {
			call.ch <- &resp
		}
	}
}

// failLocked closes c and fails every pending call made on it.
func (f *forwarder) failLocked(c net.Conn) {
	_ = c.Close()
	if f.conn == c {
		f.conn, f.w = nil, nil
	}
	for id, call := range f.pending {
		if call.conn != c {
			continue
		}
		delete(f.pending, id)
		if call.lane != nil {
			call.lane.broken = true
		}
		call.ch <- &fwdResponse{ID: id, Err: errFwdConn.Error()}
	}
}

// retiredAnswerTimeout bounds how long a connection to a former leader
// stays open for the answers of its syncs and membership changes: those
// already sent arrive within milliseconds, and one a former leader that
// is cut off never sends fails after this wait instead of at once.
const retiredAnswerTimeout = time.Second

// retireLocked stops sending on c, the connection to a leader this node
// has moved on from. Its writes fail at once, as on a broken connection
// (a client's later writes go to the new leader, and may not be applied
// while an earlier one could still be), but for a client connection's
// only write in flight, which waits for its answer like a sync: its
// client's next write takes another route, so it breaks the lane (and
// fails) while that one is unanswered, and a refusal of it unproposed is
// sent again (fwdretry.go). Its syncs and membership changes keep
// waiting for their answers, which the former leader sends as it
// would have (a sync it refuses is tried at the next leader): a reconfig
// that removed the leader, forwarded from here, was answered ConnectionLoss
// when the new leader, which the removed one hands over to at once
// (handoff.go), became known before its answer was read. c closes once
// they are answered, or after retiredAnswerTimeout.
func (f *forwarder) retireLocked(c net.Conn) {
	if f.conn == c && f.w != nil {
		f.w.retire() // a call registered on c, not sent yet, is not sent
	}
	f.conn, f.w = nil, nil
	for id, call := range f.pending {
		if call.conn != c || call.outlives || call.lone() {
			continue
		}
		delete(f.pending, id)
		if call.lane != nil {
			call.lane.broken = true
		}
		call.ch <- &fwdResponse{ID: id, Err: errFwdConn.Error()}
	}
	if f.waitingOn(c) == 0 {
		_ = c.Close()
		return
	}
	time.AfterFunc(retiredAnswerTimeout, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.failLocked(c)
	})
}

// abandonLocked fails call, which was not sent, if it still waits.
func (f *forwarder) abandonLocked(call *fwdCall) {
	if _, ok := f.pending[call.id]; !ok {
		return
	}
	delete(f.pending, call.id)
	if call.lane != nil {
		call.lane.broken = true
	}
	call.ch <- &fwdResponse{ID: call.id, Err: errFwdConn.Error()}
}

// waitingOn counts the pending calls sent on c.
func (f *forwarder) waitingOn(c net.Conn) int {
	n := 0
	for _, call := range f.pending {
		if call.conn == c {
			n++
		}
	}
	return n
}

// touch sends a batch of session touches (best effort).
func (f *forwarder) touch(ids []int64) {
	c, w, err := f.connect(false) // best effort: the next batch goes to the next leader
	if err != nil {
		return
	}
	if err := w.send(&fwdRequest{Kind: fwdTouch, Sessions: ids}); err != nil {
		f.mu.Lock()
		f.failLocked(c)
		f.mu.Unlock()
	}
}

func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if f.conn != nil {
		f.failLocked(f.conn)
	}
	for _, call := range f.pending {
		if call.conn != nil {
			f.failLocked(call.conn) // a retired connection's
		}
	}
}

// fwdFuture is a raft.ApplyFuture for a write forwarded to the leader. It
// resolves once the local FSM has applied the write, so the reply (and
// any read after it) reflects it, and local watches have fired.
type fwdFuture struct {
	done  chan struct{}
	index uint64
	res   *fsm.Result
	err   error
}

func (f *fwdFuture) Error() error          { <-f.done; return f.err }
func (f *fwdFuture) Response() interface{} { <-f.done; return f.res }
func (f *fwdFuture) Index() uint64         { <-f.done; return f.index }

// forward sends a write to the leader, before it returns, so that the
// writes of a client connection (lane) reach the leader in the order it
// proposes them (fwdorder.go); the future waits for the result. owner is
// the session whose ownership the leader checks (0: none, see
// ownerChecked). tagged: resolve it from the local apply of its entry
// (fwdlocal.go).
func (s *Server) forward(cmd []byte, owner int64, tagged bool, lane *fwdLane) *fwdFuture {
	ff := &fwdFuture{done: make(chan struct{})}
	call, err := s.fwd.start(&fwdRequest{Kind: fwdApply, Cmd: cmd, Session: owner}, tagged, lane)
	if err != nil {
		ff.err = err
		close(ff.done)
		return ff
	}
	go func() {
		defer close(ff.done)
		resp, err := s.fwd.wait(call, DefaultProposeTimeout)
		if err != nil {
			ff.err = err
			return
		}
		if err := s.waitApplied(int64(resp.Index), DefaultProposeTimeout); err != nil {
			ff.err = err
			return
		}
		ff.index, ff.res = resp.Index, resp.Result
	}()
	return ff
}
