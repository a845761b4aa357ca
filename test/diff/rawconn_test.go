package diff_test

import (
	"bufio"
	"errors"
	"net"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// waitTimeout bounds every network wait of the suite.
const waitTimeout = 10 * time.Second

// sessionTimeout is what every connection asks for: long enough that a
// raw client, which never pings, keeps its session for a whole scenario
// on both servers (ZooKeeper's default maximum is 20 ticks of 2 s).
const sessionTimeout = 30000

// errClosed stands for "the server closed the connection instead of
// answering"; it is rendered as "closed" in transcripts.
const errClosed wire.Code = -1 << 30

// conn is a raw-frame ZooKeeper client: every request of the protocol can
// be sent on it, replies are read strictly in order, and watch
// notifications read while waiting for a reply are kept in events. Every
// read and write has a deadline, so nothing can hang.
type conn struct {
	r      *run
	name   string
	nc     net.Conn
	br     *bufio.Reader
	xid    int32
	sid    int64
	passwd []byte
	events []notification
	closed bool
}

// notification is a watch event with the zxid of its reply header.
type notification struct {
	zxid int64
	ev   wire.WatcherEvent
}

// dial opens a TCP connection to addr and establishes a new session.
func dial(r *run, name, addr string) (*conn, error) {
	return dialSession(r, name, addr, 0, make([]byte, wire.PasswordSize))
}

// dialSession opens a TCP connection to addr and attaches it to session
// sid with passwd (sid 0: a new session).
func dialSession(r *run, name, addr string, sid int64, passwd []byte) (*conn, error) {
	nc, err := net.DialTimeout("tcp", addr, waitTimeout)
	if err != nil {
		return nil, err
	}
	c := &conn{r: r, name: name, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
	req := wire.ConnectRequest{TimeOut: sessionTimeout, SessionID: sid, Passwd: passwd}
	if err := c.write(frame(nil, &req)); err != nil {
		nc.Close()
		return nil, err
	}
	b, err := c.readFrame()
	if err != nil {
		nc.Close()
		return nil, err
	}
	var resp wire.ConnectResponse
	if err := resp.Decode(wire.NewDecoder(b)); err != nil {
		nc.Close()
		return nil, err
	}
	if resp.TimeOut <= 0 || resp.SessionID == 0 {
		nc.Close()
		return nil, errors.New("session refused")
	}
	c.sid, c.passwd = resp.SessionID, resp.Passwd
	return c, nil
}

// frame returns a length-prefixed frame of hdr (if any) and rec (if any).
func frame(hdr *wire.RequestHeader, rec wire.Record) []byte {
	var e wire.Encoder
	start := e.BeginFrame()
	if hdr != nil {
		hdr.Encode(&e)
	}
	if rec != nil {
		rec.Encode(&e)
	}
	e.EndFrame(start)
	return append([]byte(nil), e.Bytes()...)
}

func (c *conn) write(b []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(waitTimeout))
	_, err := c.nc.Write(b)
	return err
}

func (c *conn) readFrame() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(waitTimeout))
	return wire.ReadFrame(c.br, nil, 64<<20)
}

// send writes a request with the next xid (or with xid, if not 0) and
// returns the xid used.
func (c *conn) send(xid int32, op wire.OpCode, rec wire.Record) (int32, error) {
	if xid == 0 {
		c.xid++
		xid = c.xid
	}
	return xid, c.write(frame(&wire.RequestHeader{Xid: xid, Op: op}, rec))
}

// reply reads frames until the reply to xid, keeping notifications. It
// returns io.EOF-like errors when the server closes the connection, and
// fails the test on a timeout or a reply out of order.
func (c *conn) reply(xid int32) (wire.ReplyHeader, *wire.Decoder, error) {
	for {
		b, err := c.readFrame()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.r.t.Fatalf("%s: no reply to xid %d within %v", c.name, xid, waitTimeout)
			}
			c.closed = true
			return wire.ReplyHeader{}, nil, err
		}
		d := wire.NewDecoder(b)
		var h wire.ReplyHeader
		if err := h.Decode(d); err != nil {
			c.r.t.Fatalf("%s: bad reply header: %v", c.name, err)
		}
		if h.Xid == wire.XidNotification {
			var ev wire.WatcherEvent
			if err := ev.Decode(d); err != nil {
				c.r.t.Fatalf("%s: bad notification: %v", c.name, err)
			}
			c.events = append(c.events, notification{zxid: h.Zxid, ev: ev})
			continue
		}
		if h.Xid != xid {
			c.r.t.Fatalf("%s: reply to xid %d while waiting for %d", c.name, h.Xid, xid)
		}
		return h, d, nil
	}
}

// result is the outcome of one request.
type result struct {
	code     wire.Code
	zxid     int64       // reply header zxid
	resp     wire.Record // decoded body when code is OK and the op has one
	trailing int         // body bytes left after decoding resp
}

// callXid sends op with xid (0: the next one) and reads its reply,
// decoding the body into a record of wire.NewResponse(op). A connection
// the server closes instead of answering yields code errClosed.
func (c *conn) callXid(xid int32, op wire.OpCode, req wire.Record) result {
	c.r.t.Helper()
	if c.closed {
		return result{code: errClosed}
	}
	xid, err := c.send(xid, op, req)
	if err != nil {
		c.closed = true
		return result{code: errClosed}
	}
	return c.answer(xid, op)
}

// answer reads and decodes the reply to the request op sent with xid.
func (c *conn) answer(xid int32, op wire.OpCode) result {
	c.r.t.Helper()
	if c.closed {
		return result{code: errClosed}
	}
	h, d, err := c.reply(xid)
	if err != nil {
		return result{code: errClosed}
	}
	res := result{code: h.Err, zxid: h.Zxid}
	if h.Err != wire.OK {
		res.trailing = d.Remaining()
		return res
	}
	if resp := wire.NewResponse(op); resp != nil && d.Remaining() > 0 {
		if err := resp.Decode(d); err != nil {
			c.r.t.Fatalf("%s: decoding the %v reply: %v", c.name, op, err)
		}
		res.resp = resp
	}
	res.trailing = d.Remaining()
	return res
}

// call is callXid with the next xid.
func (c *conn) call(op wire.OpCode, req wire.Record) result {
	c.r.t.Helper()
	return c.callXid(0, op, req)
}

// barrier round-trips exists("/") and returns every notification
// received before its reply (and kept earlier), emptying the kept list.
// Both servers send the notifications of a change before any later
// reply, so an event caused by a change that completed before the
// barrier was sent is always among them, and an event missing here will
// never come.
func (c *conn) barrier() []notification {
	c.r.t.Helper()
	if res := c.call(wire.OpExists, &wire.PathWatchRequest{Path: "/"}); res.code != wire.OK {
		c.r.t.Fatalf("%s: barrier: exists(/) answered %v", c.name, res.code)
	}
	evs := c.events
	c.events = nil
	return evs
}

// closeWait is how long stillOpen waits for a server to close a
// connection after its reply.
const closeWait = time.Second

// stillOpen reports whether the server leaves the connection open after
// its last reply: it reads until the server closes it (false) or
// closeWait passes in silence (true). A ping (alive) would race a close
// that follows the reply, as ZooKeeper's after UNIMPLEMENTED does.
func (c *conn) stillOpen() bool {
	if c.closed {
		return false
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(closeWait))
	defer func() { _ = c.nc.SetReadDeadline(time.Time{}) }()
	for {
		if _, err := wire.ReadFrame(c.br, nil, 1<<20); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return true
			}
			c.closed = true
			return false
		}
	}
}

// alive reports whether the connection still answers a ping.
func (c *conn) alive() bool {
	if c.closed {
		return false
	}
	if _, err := c.send(wire.XidPing, wire.OpPing, nil); err != nil {
		c.closed = true
		return false
	}
	_, _, err := c.reply(wire.XidPing)
	return err == nil
}

// close ends the session (best effort) and the connection.
func (c *conn) close() {
	if !c.closed {
		if xid, err := c.send(0, wire.OpCloseSession, nil); err == nil {
			_ = c.nc.SetReadDeadline(time.Now().Add(waitTimeout))
			for {
				b, err := wire.ReadFrame(c.br, nil, 64<<20)
				if err != nil {
					break
				}
				var h wire.ReplyHeader
				if h.Decode(wire.NewDecoder(b)) != nil || h.Xid == xid {
					break
				}
			}
		}
		c.closed = true
	}
	_ = c.nc.Close()
}
