package server

import (
	"bufio"
	"errors"
	"io"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// conn is one client connection. These goroutines touch it:
//   - the reader (serve) decodes requests in order, runs reads whose
//     predecessors are all answered, proposes writes, and queues one
//     pending reply per request;
//   - the writer waits for each pending reply in order, encodes it and
//     flushes the outbound buffer to the socket;
//   - Raft's apply goroutine appends watch notifications to the outbound
//     buffer (Notify) while the new state is not yet readable, so a client
//     always sees the event before any reply that shows the new data;
//   - a notifier goroutine then writes the buffer without blocking, or
//     leaves it to the writer (notifier.go).
type conn struct {
	s  *Server
	nc net.Conn
	ip string
	id uint64

	sessionID atomic.Int64
	timeout   int32
	// readOnly marks a read-only session served while this node has no
	// quorum (set during the handshake, before any request is read).
	readOnly atomic.Bool
	created  time.Time

	authMu sync.Mutex                // serialises addIdentity
	auth   atomic.Pointer[[]wire.Id] // read without locking

	pending chan *pendingReply
	// deferred counts replies not yet resolved: writes in Raft and reads
	// waiting behind them.
	deferred atomic.Int32
	// deferredReads counts the reads among them. A write is not proposed
	// while any is unanswered (readsDone signals each answer), so that a
	// deferred read never observes a write sent after it.
	deferredReads atomic.Int32
	readsDone     chan struct{}

	outMu sync.Mutex
	out   []byte
	// repliesQueued counts the requests read (one reply each, counted
	// before the request is handled); repliesOut (under outMu) the replies
	// appended to out; held (under outMu) the events waiting for earlier
	// replies (eventorder.go).
	repliesQueued atomic.Uint64
	repliesOut    uint64
	held          []heldEvent
	heldBytes     int
	// heldN is len(held), readable without outMu (eventorder.go).
	heldN atomic.Int32
	// replyMu is held while replies are encoded and appended to out: by
	// the writer goroutine for each batch, or by the reader answering a
	// read at once (replyNow, replynow.go). lastAt and fast are under it.
	replyMu sync.Mutex
	fast    replyBatch
	// wmu is held while writing to the socket: by the writer goroutine
	// (flush) or by a notifier goroutine (tryFlush, see notifier.go).
	wmu sync.Mutex
	// raw writes notifications without blocking; nil for TLS.
	raw       syscall.RawConn
	outSignal chan struct{}
	// spare is the buffer of the last flush, kept for the next replies
	// (when at most maxSpareOut bytes) so that a busy connection appends
	// into the same two buffers instead of allocating one per flush.
	spare []byte

	// lane keeps this connection's writes in order through a follower
	// (fwdorder.go).
	lane fwdLane
	// lastAt is the zxid of the newest state a reply on this connection
	// reflected (headerZxid), starting at the handshake's (under replyMu
	// once the connection serves requests).
	lastAt int64
	// lastWrite is the future of the last write this connection proposed
	// (reader goroutine only): a reconfig waits for it (reconfig.go).
	lastWrite raft.ApplyFuture
	// reconfiguring is a reconfig in progress (reader goroutine only): the
	// connection's later writes wait for it.
	reconfiguring *fwdFuture

	closing atomic.Bool
	// closingSession is set when this connection sent closeSession: the
	// reply to it closes the connection, so sessionGone must not close it
	// first (Apply may run before that reply is even queued).
	closingSession atomic.Bool
	// goneAt is the zxid at which this connection's session expired or was
	// closed by another connection (0: alive): a read answered from that
	// state or a later one gets SESSIONEXPIRED (sessionGone).
	goneAt     atomic.Int64
	closeOnce  sync.Once
	done       chan struct{}
	readerDone chan struct{} // closed when serve returns (sessionorder.go)

	stats connStats
}

// connReadBuffer is each connection's read buffer: small, since most
// requests are; a larger frame is read straight into its frame buffer.
// (64 KiB made idle watcher connections cost ~3× ZooKeeper's memory.)
const connReadBuffer = 4 << 10

// maxSpareOut is the largest outbound buffer a connection keeps between
// flushes (see conn.spare); a larger one is left to the GC, so that an
// idle connection holds at most this much.
const maxSpareOut = 4 << 10

// pendingReply is the answer to one request, ready or to be computed by
// the writer in request order.
type pendingReply struct {
	xid     int32
	op      wire.OpCode
	start   time.Time
	future  raft.ApplyFuture                           // a write in Raft
	finish  func(*fsm.Result) (wire.Code, wire.Record) // turns its result into a reply
	deferFn reply                                      // a read that waited for earlier writes
	// viewFn is a read that arms a watch: the writer answers it and queues
	// its reply inside one fsm.View (see watchingRead).
	viewFn func(fsm.Reader) (wire.Code, wire.Record)
	code   wire.Code
	resp   wire.Record
	// at is the zxid of the state a read's answer reflects (0: none); the
	// events of changes up to it go out first (eventorder.go).
	at int64
	// closeAfter closes the connection once this reply is flushed.
	closeAfter bool
	// noReply sends nothing (a connection closed without answer).
	noReply bool
}

func newConn(s *Server, nc net.Conn, ip string) *conn {
	c := &conn{s: s, nc: nc, ip: ip, id: s.nextConnID.Add(1), created: time.Now(),
		pending:   make(chan *pendingReply, s.cfg.MaxOutstanding),
		outSignal: make(chan struct{}, 1), readsDone: make(chan struct{}, 1), done: make(chan struct{}),
		readerDone: make(chan struct{})}
	c.auth.Store(&[]wire.Id{{Scheme: "ip", ID: ip}})
	c.stats.lastOp.Store(opNone)
	c.stats.lastZxid.Store(-1)
	return c
}

func remoteIP(nc net.Conn) string {
	if a, ok := nc.RemoteAddr().(*net.TCPAddr); ok {
		return a.IP.String()
	}
	host, _, err := net.SplitHostPort(nc.RemoteAddr().String())
	if err != nil {
		return nc.RemoteAddr().String()
	}
	return host
}

// SessionID implements watch.Watcher.
func (c *conn) SessionID() int64 { return c.sessionID.Load() }

// Closed lets the watch registry ignore registrations of a dead connection.
func (c *conn) Closed() bool { return c.closing.Load() }

// Notify implements watch.Watcher: it queues a notification (xid -1)
// without blocking.
func (c *conn) Notify(ev wire.WatcherEvent, zxid int64) {
	if c.queueNotification(encodeNotification(ev, zxid), zxid) {
		c.s.notifier.add(c)
	}
}

// encodeNotification returns ev's frame: the same bytes for every
// watcher of one change (a chroot is the client's business).
func encodeNotification(ev wire.WatcherEvent, zxid int64) []byte {
	// length, reply header (xid, zxid, err), event (type, state, path)
	e := wire.NewEncoder(make([]byte, 0, 4+16+12+len(ev.Path)))
	start := e.BeginFrame()
	(&wire.ReplyHeader{Xid: wire.XidNotification, Zxid: zxid, Err: wire.OK}).Encode(e)
	ev.Encode(e)
	e.EndFrame(start)
	return e.Bytes()
}

// queueNotification queues an encoded notification (frame is shared and
// never modified) and reports whether c's buffer is now for a notifier
// goroutine to write.
func (c *conn) queueNotification(frame []byte, zxid int64) bool {
	c.stats.notifications.Add(1)
	return c.queueEvent(frame, zxid)
}

// enqueue appends an encoded frame to the outbound buffer and wakes the
// writer goroutine.
func (c *conn) enqueue(frame []byte) {
	if c.queue(frame) {
		c.signal()
	}
}

// queue appends an encoded frame to the outbound buffer. A client that
// lets more than MaxOutboundBytes pile up is disconnected (and queue
// reports false).
func (c *conn) queue(frame []byte) bool {
	c.outMu.Lock()
	over := c.overLocked(len(frame))
	if !over {
		c.appendOutLocked(frame)
	}
	c.outMu.Unlock()
	if over {
		c.slowConsumer()
		return false
	}
	return true
}

// overLocked reports whether n more bytes would exceed MaxOutboundBytes,
// counting held events.
func (c *conn) overLocked(n int) bool {
	return len(c.out)+c.heldBytes+n > c.s.cfg.MaxOutboundBytes
}

// appendOutLocked appends frames to the outbound buffer.
func (c *conn) appendOutLocked(frames []byte) {
	if len(frames) == 0 {
		return
	}
	if c.out == nil {
		c.out, c.spare = c.spare, nil
	}
	c.out = append(c.out, frames...)
}

// slowConsumer closes a connection whose client lets more than
// MaxOutboundBytes pile up.
func (c *conn) slowConsumer() {
	c.s.log.Warn("closing slow consumer", "conn", c.id, "session", hexID(c.SessionID()),
		"max_outbound_bytes", c.s.cfg.MaxOutboundBytes)
	c.s.stats.slowConsumers.Add(1)
	go c.close()
}

// signal wakes the writer goroutine.
func (c *conn) signal() {
	select {
	case c.outSignal <- struct{}{}:
	default:
	}
}

// flush writes everything queued to the socket.
func (c *conn) flush() error {
	c.s.gate.wait(c.done)
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.outMu.Lock()
	buf := c.out
	c.out = nil
	c.outMu.Unlock()
	if len(buf) == 0 {
		return nil
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	_, err := c.nc.Write(buf)
	c.keepSpare(buf)
	return err
}

// keepSpare keeps a written buffer for the next frames (see conn.spare).
func (c *conn) keepSpare(buf []byte) {
	if cap(buf) <= maxSpareOut {
		c.outMu.Lock()
		c.spare = buf[:0]
		c.outMu.Unlock()
	}
}

// close tears the connection down; the session lives on until it expires
// or is closed.
func (c *conn) close() {
	c.closeOnce.Do(func() {
		c.closing.Store(true)
		close(c.done)
		_ = c.nc.Close()
		c.s.watches.RemoveWatcher(c)
		c.s.forget(c)
	})
}

// sessionGone is called (from Apply, before the state at zxid is
// readable) when this connection's session was closed or expired: the
// connection is closed once queued replies drain, and a read answered from
// the state at zxid or later gets SESSIONEXPIRED meanwhile, as ZooKeeper's
// checkSession answers a read of a session that is gone (goneRead).
func (c *conn) sessionGone(zxid int64) {
	if c.closingSession.Load() {
		return
	}
	c.goneAt.Store(zxid)
	c.repliesQueued.Add(1)
	go func() {
		if h := c.s.cfg.hooks; h != nil && h.beforeGoneClose != nil {
			h.beforeGoneClose()
		}
		select {
		case c.pending <- &pendingReply{noReply: true, closeAfter: true}:
		case <-c.done:
		}
	}()
}

// serve runs the connection: handshake, then the request loop.
func (c *conn) serve() {
	defer c.readerStopped() // after close: see sessionorder.go
	defer c.close()
	// A paused server reads nothing, not even a handshake: the kernel
	// accepted the connection, the process is frozen.
	c.s.gate.wait(c.done)
	if !c.tlsHandshake() {
		return
	}
	c.raw = rawConnOf(c.nc)
	br := bufio.NewReaderSize(c.nc, connReadBuffer)
	_ = c.nc.SetReadDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	if word, ok := c.peekFourLetterWord(br); ok {
		c.fourLetterWord(word)
		return
	}
	frame, err := wire.ReadFrame(br, nil, c.s.cfg.MaxFrame)
	if err != nil {
		c.logDrop("handshake", err)
		return
	}
	// The ConnectRequest is a packet received, as in ZooKeeper's counts
	// (cons, stat, mntr); its response is counted sent in connectReply.
	c.stats.received.Add(1)
	c.s.stats.received.Add(1)
	if !c.handshake(frame) {
		return
	}
	_ = c.nc.SetReadDeadline(time.Time{})
	go c.writeLoop()
	c.readLoop(br)
}

func (c *conn) peekFourLetterWord(br *bufio.Reader) (string, bool) {
	b, err := br.Peek(4)
	if err != nil {
		return "", false
	}
	n := int32(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	return wire.FourLetterWord(n)
}

func (c *conn) logDrop(stage string, err error) {
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || c.closing.Load() {
		return
	}
	c.s.log.Info("closing connection", "stage", stage, "remote", c.nc.RemoteAddr().String(), "err", err)
}

func (c *conn) readLoop(br *bufio.Reader) {
	var buf []byte
	for {
		frame, err := wire.ReadFrame(br, buf, c.s.cfg.MaxFrame)
		if err != nil {
			c.logDrop("read", err)
			return
		}
		buf = frame[:0]
		c.s.gate.wait(c.done)
		if h := c.s.cfg.hooks; h != nil && h.beforeHandle != nil {
			h.beforeHandle(frame)
		}
		c.stats.received.Add(1)
		c.s.stats.received.Add(1)
		c.repliesQueued.Add(1) // before the request is answered (eventorder.go)
		p, stop := c.handle(frame)
		if p == nil && stop {
			// A request that cannot be answered (malformed): close now,
			// as ZooKeeper does, rather than leave the connection open
			// and unread until its session expires.
			return
		}
		if p == nil {
			p = &pendingReply{noReply: true} // counted above: the writer counts it out
		}
		// With more requests already read, the writer answers them in one
		// write(2); otherwise this one is answered here if it can be.
		if !stop && br.Buffered() == 0 && c.replyNow(p) {
			continue
		}
		select {
		case c.pending <- p:
		case <-c.done:
			return
		}
		if stop {
			// Keep the writer running until it flushed the last reply.
			<-c.done
			return
		}
	}
}

func (c *conn) writeLoop() {
	defer c.close()
	var b replyBatch
	for {
		select {
		case <-c.done:
			return
		case <-c.outSignal:
		case p := <-c.pending:
			c.replyMu.Lock()
			closeAfter := c.reply(&b, p)
			// Batch replies that are already queued into one write, up
			// to 64 KiB including what the batch already put in the
			// outbound buffer (events let out before a write's reply,
			// replies before a watching read).
			for !closeAfter && len(c.pending) > 0 && b.e.Len()+b.queued < 64<<10 {
				closeAfter = c.reply(&b, <-c.pending)
			}
			b.enqueue(c)
			b.queued = 0
			c.replyMu.Unlock()
			if closeAfter {
				_ = c.flush()
				return
			}
		}
		if err := c.flush(); err != nil {
			c.logDrop("write", err)
			return
		}
	}
}

// replyBatch is replies encoded and not yet in the outbound buffer.
type replyBatch struct {
	e      wire.Encoder
	n      int // replies in e, counting those without a frame
	queued int // bytes this batch moved to the outbound buffer so far
}

// enqueue moves the batch to the outbound buffer.
func (b *replyBatch) enqueue(c *conn) {
	b.queued += b.e.Len()
	c.enqueueReplies(b.e.Bytes(), b.n)
	b.e.Reset()
	b.n = 0
}

// reply resolves p and encodes its frame into b. It reports whether the
// connection must close after it.
func (c *conn) reply(b *replyBatch, p *pendingReply) bool {
	e := &b.e
	b.n++
	code, resp := p.code, p.resp
	switch {
	case p.future != nil:
		res, err := resultOf(p.future)
		if err != nil {
			// The write's fate is unknown here (no leader, leader lost):
			// close, so the client reconnects and sees ConnectionLoss, as
			// ZooKeeper does. SessionMoved is not answered either: the
			// session lives on another node's connection now, and
			// ZooKeeper's FinalRequestProcessor closes this one without a
			// reply (ZOOKEEPER-710).
			c.s.log.Info("write not applied", "session", hexID(c.SessionID()), "err", err)
			code, resp = wire.CodeOf(err), nil
			switch code {
			case wire.ErrSystemError:
				code = wire.ErrConnectionLoss
			case wire.ErrSessionMoved:
				p.noReply = true
			}
			p.closeAfter = true
		} else {
			c.s.metrics.commit.Observe(time.Since(p.start).Seconds())
			p.at = res.Zxid
			code, resp = p.finish(res)
		}
	case p.deferFn != nil:
		code, resp, p.at = p.deferFn()
		c.readAnswered()
	case p.viewFn != nil:
		// Queue every earlier reply, then answer p and queue its reply
		// within one View: no Apply, and so no notification, can come
		// between arming the watch and queueing the reply.
		var zxid int64
		b.n--
		b.enqueue(c)
		c.s.fsm.View(func(v fsm.Reader) {
			vcode, vresp := p.viewFn(v)
			if c.goneRead(v.LastZxid()) {
				vcode, vresp = wire.ErrSessionExpired, nil
			}
			c.releaseHeld(v.LastZxid())
			zxid = c.headerZxid(v.LastZxid())
			encodeReply(e, p.xid, zxid, vcode, vresp, c.s.cfg.maxReadReply())
			b.n++
			b.enqueue(c)
		})
		c.readAnswered()
		c.deferred.Add(-1)
		c.replySent(p, zxid)
		return p.closeAfter
	}
	if p.future != nil || p.deferFn != nil {
		c.deferred.Add(-1)
	}
	if p.future == nil && c.goneRead(p.at) {
		code, resp = wire.ErrSessionExpired, nil
	}
	if p.noReply {
		return p.closeAfter
	}
	if p.at > 0 {
		c.releaseBefore(b, p.at)
	}
	zxid := c.headerZxid(p.at)
	limit := c.s.cfg.maxReadReply()
	if p.future != nil {
		// A write's reply goes whatever its size (a multi of many ops):
		// it was applied, and an error would say it was not.
		limit = math.MaxInt
	}
	encodeReply(e, p.xid, zxid, code, resp, limit)
	c.replySent(p, zxid)
	return p.closeAfter
}

// goneRead reports whether a read answered from the state at zxid comes
// after this connection's session ended (goneAt).
func (c *conn) goneRead(zxid int64) bool {
	g := c.goneAt.Load()
	return g != 0 && zxid >= g
}

// headerZxid is the zxid a reply's header carries: that of the state the
// reply reflects (at), or for a reply that reflects none the highest sent
// on the connection so far. Never one ahead of the events sent after it:
// a client keeps the header's zxid, presents it as setWatches'
// relativeZxid after a reconnect, and would never hear of a change whose
// event it had not received yet (ZooKeeper's header is the last zxid
// processed when the reply was made, with every event up to it queued).
// Under replyMu.
func (c *conn) headerZxid(at int64) int64 {
	c.lastAt = max(c.lastAt, at)
	return c.lastAt
}

// readAnswered counts down a deferred read and wakes a write waiting for
// deferred reads (awaitDeferredReads).
func (c *conn) readAnswered() {
	if c.deferredReads.Add(-1) == 0 {
		select {
		case c.readsDone <- struct{}{}:
		default:
		}
	}
}

// encodeReply appends a reply frame: header, and body if code is OK. A
// reply whose body would exceed limit (Config.MaxReplyFrame for reads:
// what clients accept; the Java client drops the connection on a larger
// frame and retries it for ever, e.g. on getChildren of a node with very
// many children) is replaced by a MarshallingError reply, so the client
// gets a defined error instead.
func encodeReply(e *wire.Encoder, xid int32, zxid int64, code wire.Code, resp wire.Record, limit int) {
	start := e.BeginFrame()
	(&wire.ReplyHeader{Xid: xid, Zxid: zxid, Err: code}).Encode(e)
	if code == wire.OK && resp != nil {
		resp.Encode(e)
		if e.Len()-start-4 > limit {
			e.Truncate(start)
			encodeReply(e, xid, zxid, wire.ErrMarshallingError, nil, limit)
			return
		}
	}
	e.EndFrame(start)
}

// replySent updates the statistics for a reply sent with zxid in its
// header.
func (c *conn) replySent(p *pendingReply, zxid int64) {
	c.stats.sent.Add(1)
	c.s.stats.sent.Add(1)
	if !p.start.IsZero() {
		now := time.Now()
		c.s.stats.latency.observe(p.start, now)
		c.stats.responded(p.start, now, zxid)
	}
}
