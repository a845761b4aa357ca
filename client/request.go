package client

import (
	"context"
	"encoding/binary"
	"sync/atomic"

	"github.com/paddockzk/paddock/internal/wire"
)

// request is one request on its way to the server and back.
//
// The caller encodes the whole frame (length, header with a placeholder
// xid, body) in its own goroutine; the writer patches in the xid, appends
// the request to the connection's pending FIFO and writes the frame; the
// reader pops it when the reply arrives, decodes the body into resp, runs
// onReply and completes it. A request is owned by exactly one queue at a
// time, so it completes exactly once.
type request struct {
	op    wire.OpCode
	xid   int32
	frame []byte
	resp  wire.Record
	// onReply runs in the reader goroutine, before the request completes,
	// with the reply's error code (used to register watches).
	onReply func(code wire.Code)
	// auth is the credential of an auth request (xid -4); authAdded
	// tells that its AddAuth added it to the Conn's credentials (it was
	// not there already), so that a rejection removes it.
	auth      *authInfo
	authAdded bool

	done     chan struct{}
	err      error
	zxid     int64
	canceled atomic.Bool
	// registered (under the watch registry's lock) is set once the reply
	// armed the request's watch; cancel then leaves the request be.
	registered bool
}

// newRequest encodes op and body into a frame. body may be nil.
func newRequest(op wire.OpCode, body wire.Record, resp wire.Record) *request {
	e := wire.NewEncoder(make([]byte, 0, 64))
	start := e.BeginFrame()
	hdr := wire.RequestHeader{Xid: 0, Op: op}
	hdr.Encode(e)
	if body != nil {
		body.Encode(e)
	}
	e.EndFrame(start)
	return &request{op: op, frame: e.Bytes(), resp: resp, done: make(chan struct{})}
}

// setXid patches the xid into the encoded header.
func (r *request) setXid(xid int32) {
	r.xid = xid
	binary.BigEndian.PutUint32(r.frame[4:8], uint32(xid))
}

// complete records the outcome and wakes the waiter.
func (r *request) complete(zxid int64, err error) {
	r.zxid = zxid
	r.err = err
	close(r.done)
}

// fifo is a queue of requests.
type fifo struct {
	q    []*request
	head int
}

func (f *fifo) push(r *request) { f.q = append(f.q, r) }

func (f *fifo) pop() *request {
	if f.head == len(f.q) {
		return nil
	}
	r := f.q[f.head]
	f.q[f.head] = nil
	f.head++
	if f.head == len(f.q) {
		f.q, f.head = f.q[:0], 0
	} else if f.head > 1024 && f.head*2 > len(f.q) {
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q, f.head = f.q[:n], 0
	}
	return r
}

// takeAll empties the queue and returns its requests.
func (f *fifo) takeAll() []*request {
	all := append([]*request(nil), f.q[f.head:]...)
	f.q, f.head = nil, 0
	return all
}

// call sends a request and waits for its reply, decoded into resp.
func (c *Conn) call(ctx context.Context, op wire.OpCode, body, resp wire.Record, onReply func(wire.Code)) error {
	r := newRequest(op, body, resp)
	r.onReply = onReply
	return c.roundTrip(ctx, r)
}

// roundTrip submits r and waits for it.
func (c *Conn) roundTrip(ctx context.Context, r *request) error {
	if len(r.frame)-4 > c.opts.maxFrame {
		return errOversized(len(r.frame)-4, c.opts.maxFrame)
	}
	if err := c.submit(ctx, r); err != nil {
		return err
	}
	return c.wait(ctx, r)
}

// submit queues r for the writer. Requests queued while disconnected are
// sent after the next successful handshake.
func (c *Conn) submit(ctx context.Context, r *request) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case <-c.loopDone:
		return c.terminalErr()
	default:
	}
	select {
	case c.sendq <- r:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.loopDone:
		return c.terminalErr()
	}
}

// wait waits for r's reply. When ctx ends first, r stays queued (its reply
// is discarded when it arrives) so that the connection's reply order is
// never disturbed.
func (c *Conn) wait(ctx context.Context, r *request) error {
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		if c.watches.cancel(r) {
			// Its reply came and armed a watch: report that answer, or
			// the caller would never see the watch it now holds.
			<-r.done
			return r.err
		}
		return ctx.Err()
	case <-c.loopDone:
		select {
		case <-r.done:
			return r.err
		default:
			return c.terminalErr()
		}
	}
}
