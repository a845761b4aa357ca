package client

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// readBufferSize is the size of the reader's bufio buffer; frame buffers
// up to this size are reused between replies.
const readBufferSize = 64 * 1024

// connState is the state of one TCP connection: the FIFO of requests
// waiting for replies (replies come back in request order), and the FIFO
// of auth requests (answered with xid -4, possibly ahead of earlier
// requests since the server handles auth inline).
type connState struct {
	nc          net.Conn
	addr        string
	readTimeout time.Duration
	pingEvery   time.Duration

	mu      sync.Mutex
	pending fifo
	authq   fifo
	closed  bool
	err     error

	dead       chan struct{}
	once       sync.Once
	readerDone chan struct{}
}

// fail marks the connection dead (the first cause wins) and closes it.
func (cs *connState) fail(err error) {
	cs.once.Do(func() {
		cs.mu.Lock()
		cs.closed = true
		cs.err = err
		cs.mu.Unlock()
		close(cs.dead)
		_ = cs.nc.Close()
	})
}

func (cs *connState) cause() error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.err
}

// enqueue appends a batch to the pending FIFOs; it must be called before
// the batch is written. It returns false if the connection is dead.
func (cs *connState) enqueue(batch []*request) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		return false
	}
	for _, r := range batch {
		if r.op == wire.OpAuth {
			cs.authq.push(r)
		} else {
			cs.pending.push(r)
		}
	}
	return true
}

func (cs *connState) popPending() *request {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.pending.pop()
}

func (cs *connState) popAuth() *request {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.authq.pop()
}

// drain empties both FIFOs of a dead connection.
func (cs *connState) drain() []*request {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append(cs.pending.takeAll(), cs.authq.takeAll()...)
}

// MaxPingInterval is the longest an idle connection goes without a ping,
// whatever the session timeout: the Java client's MAX_SEND_PING_INTERVAL,
// so that servers and the middleboxes between hear from the client at
// least this often.
const MaxPingInterval = 10 * time.Second

// pingInterval is how long an idle connection waits to ping: a third of
// the negotiated session timeout (half the read timeout, as the Java
// client), at most MaxPingInterval.
func pingInterval(timeout time.Duration) time.Duration {
	return min(timeout/3, MaxPingInterval)
}

// serve runs the connection until it breaks or the Conn closes. The reader
// runs in its own goroutine; the writer in the caller's. Every request
// still pending when the connection ends fails with ErrConnectionLoss
// (ErrClosed when closing).
func (c *Conn) serve(nc net.Conn, addr string, timeout time.Duration, readOnly bool) error {
	cs := &connState{
		nc:          nc,
		addr:        addr,
		readTimeout: timeout * 2 / 3,
		pingEvery:   pingInterval(timeout),
		dead:        make(chan struct{}),
		readerDone:  make(chan struct{}),
	}
	go c.readLoop(cs)
	if readOnly && len(c.hosts) > 1 {
		go c.seekReadWrite(cs) // rwprobe.go
	}
	cs.fail(c.writeLoop(cs))
	<-cs.readerDone
	code := c.lossErr()
	for _, r := range cs.drain() {
		r.complete(0, code)
	}
	return cs.cause()
}

// lossErr is the error of requests a lost connection leaves unanswered:
// ErrConnectionLoss, or ErrClosed once Close has sent closeSession (the
// server answers nothing after it, and closes the connection).
func (c *Conn) lossErr() error {
	if c.isClosing() || c.closeRequested.Load() {
		return ErrClosed
	}
	return ErrConnectionLoss
}

// writeLoop restores the watches, then writes queued requests (gathering
// everything queued into one write) and pings when idle for a third of
// the session timeout.
func (c *Conn) writeLoop(cs *connState) error {
	if err := c.restoreWatches(cs); err != nil {
		return err
	}
	ping := time.NewTimer(cs.pingEvery)
	defer ping.Stop()
	var batch []*request
	var buf []byte
	for {
		select {
		case r := <-c.sendq:
			batch, buf = c.gather(r, batch[:0], buf[:0])
			if err := c.writeBatch(cs, batch, buf); err != nil {
				return err
			}
			clear(batch)
		case <-ping.C:
			if err := c.writePing(cs); err != nil {
				return err
			}
		case <-cs.dead:
			return cs.cause()
		case <-c.closing:
			return ErrClosed
		}
		ping.Reset(cs.pingEvery)
	}
}

// gather assigns xids to first and to everything else already queued (up
// to maxBatchBytes) and concatenates their frames. Requests whose caller
// gave up before they were sent are dropped here.
func (c *Conn) gather(first *request, batch []*request, buf []byte) ([]*request, []byte) {
	add := func(r *request) {
		if r.canceled.Load() {
			r.complete(0, context.Canceled)
			return
		}
		if r.op == wire.OpAuth {
			r.setXid(wire.XidAuth)
		} else {
			r.setXid(c.nextXid())
		}
		batch = append(batch, r)
		buf = append(buf, r.frame...)
	}
	add(first)
	for len(buf) < maxBatchBytes {
		select {
		case r := <-c.sendq:
			add(r)
		default:
			return batch, buf
		}
	}
	return batch, buf
}

func (c *Conn) writeBatch(cs *connState, batch []*request, buf []byte) error {
	if len(batch) == 0 {
		return nil
	}
	if !cs.enqueue(batch) {
		code := c.lossErr()
		for _, r := range batch {
			r.complete(0, code)
		}
		return cs.cause()
	}
	return cs.write(buf)
}

func (cs *connState) write(buf []byte) error {
	if err := cs.nc.SetWriteDeadline(time.Now().Add(cs.readTimeout)); err != nil {
		return err
	}
	_, err := cs.nc.Write(buf)
	return err
}

// pingFrame is a complete ping request: length 8, xid -2, op 11.
var pingFrame = func() []byte {
	r := newRequest(wire.OpPing, nil, nil)
	r.setXid(wire.XidPing)
	return r.frame
}()

func (c *Conn) writePing(cs *connState) error { return cs.write(pingFrame) }

// nextXid returns the next xid, skipping 0 and negative values. Only the
// writer calls it.
func (c *Conn) nextXid() int32 {
	c.xid++
	if c.xid <= 0 {
		c.xid = 1
	}
	return c.xid
}

// readLoop reads replies until the connection breaks. A connection silent
// for the read timeout (2/3 of the session timeout) is declared dead.
func (c *Conn) readLoop(cs *connState) {
	defer close(cs.readerDone)
	br := bufio.NewReaderSize(cs.nc, readBufferSize)
	var buf []byte
	for {
		now := time.Now() // just after the handshake, or the last frame
		c.lastHeard.Store(monoNow())
		if err := cs.nc.SetReadDeadline(now.Add(cs.readTimeout)); err != nil {
			cs.fail(err)
			return
		}
		frame, err := wire.ReadFrame(br, buf, c.opts.maxReplyFrame)
		if err != nil {
			cs.fail(err)
			return
		}
		if err := c.handleReply(cs, frame); err != nil {
			cs.fail(err)
			return
		}
		if cap(frame) <= readBufferSize {
			buf = frame[:0]
		}
	}
}

// handleReply processes one reply frame in the reader goroutine.
func (c *Conn) handleReply(cs *connState, frame []byte) error {
	d := wire.NewDecoder(frame)
	var h wire.ReplyHeader
	if err := d.Record(&h); err != nil {
		return err
	}
	switch h.Xid {
	case wire.XidPing:
		return nil
	case wire.XidNotification:
		return c.handleNotification(d)
	case wire.XidAuth:
		c.handleAuthReply(cs, h)
		return nil
	}
	if h.Zxid > 0 {
		c.updateZxid(h.Zxid)
	}
	r := cs.popPending()
	if r == nil {
		return fmt.Errorf("%w: reply with xid %d but no request pending", errProtocol, h.Xid)
	}
	if r.xid != h.Xid {
		r.complete(h.Zxid, ErrConnectionLoss)
		return fmt.Errorf("%w: xid out of order: got %d, expected %d", errProtocol, h.Xid, r.xid)
	}
	if h.Err == wire.OK && r.resp != nil {
		if err := d.Record(r.resp); err != nil {
			r.complete(h.Zxid, ErrConnectionLoss)
			return fmt.Errorf("decoding %v reply: %w", r.op, err)
		}
	}
	if r.onReply != nil {
		r.onReply(h.Err)
	}
	r.complete(h.Zxid, h.Err.Err())
	return nil
}

func (c *Conn) handleNotification(d *wire.Decoder) error {
	var ev wire.WatcherEvent
	if err := d.Record(&ev); err != nil {
		return err
	}
	// The header's zxid is not "seen" (lastZxid): one transaction fires
	// several watches with one zxid, and a connection lost between two of
	// its notifications must restore the watches relative to an earlier
	// zxid, or the server would not fire the one whose event was lost. As
	// the Java client's ClientCnxn, only replies advance lastZxid.
	c.watches.dispatch(ev)
	return nil
}

// handleAuthReply answers an AddAuth. A rejected credential is forgotten
// and reported as StateAuthFailed; the server then closes the connection,
// and the client reconnects without it.
func (c *Conn) handleAuthReply(cs *connState, h wire.ReplyHeader) {
	r := cs.popAuth()
	if r == nil {
		c.log.Warn("zk: unexpected auth reply", "err", h.Err)
		return
	}
	switch h.Err {
	case wire.OK:
		r.complete(0, nil) // AddAuth remembered the credential
	case wire.ErrAuthFailed:
		c.forgetAuth(r)
		c.emit(StateAuthFailed, cs.addr, ErrAuthFailed)
		r.complete(0, ErrAuthFailed)
	default:
		c.forgetAuth(r)
		r.complete(0, h.Err)
	}
}
