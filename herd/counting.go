package herd

import (
	"context"
	"encoding/binary"
	"net"
	"sync/atomic"

	"github.com/paddockzk/paddock/internal/wire"
)

// wireCounters count ZooKeeper frames on the contenders' TCP connections,
// on the client side: it works against any server (Paddock, Apache
// ZooKeeper), and it is what the contenders' connections really received.
type wireCounters struct {
	notifications atomic.Int64 // frames received with xid -1 (watch events)
	requests      atomic.Int64 // frames sent, except ConnectRequest and pings
	pings         atomic.Int64 // pings sent (xid -2)
	connects      atomic.Int64 // TCP connections opened (one handshake each)
	// departing counts notifications received by sessions that are
	// closing (a killed election leader's own watch on its node fires as
	// its session closes its ephemeral node); they are not in
	// notifications.
	departing atomic.Int64
}

// session tags the connections of one client session, so that the
// contender can say when it is leaving.
type session struct {
	leaving atomic.Bool
}

// wireCount is a snapshot of wireCounters.
type wireCount struct {
	Notifications, Requests, Pings, Connects, Departing int64
}

func (w *wireCounters) snapshot() wireCount {
	return wireCount{w.notifications.Load(), w.requests.Load(), w.pings.Load(), w.connects.Load(), w.departing.Load()}
}

func (a wireCount) sub(b wireCount) wireCount {
	return wireCount{a.Notifications - b.Notifications, a.Requests - b.Requests, a.Pings - b.Pings,
		a.Connects - b.Connects, a.Departing - b.Departing}
}

// dialer returns a dialer for client.WithDialer whose connections count
// their frames into w; sess tags them.
func (w *wireCounters) dialer(sess *session) func(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		w.connects.Add(1)
		received := func(first bool, xid int32) {
			switch {
			case first || xid != wire.XidNotification:
			case sess.leaving.Load():
				w.departing.Add(1)
			default:
				w.notifications.Add(1)
			}
		}
		return &countingConn{Conn: nc, in: frameScanner{onFrame: received}, out: frameScanner{onFrame: w.sent}}, nil
	}
}

// sent classifies a frame to the server by its request header's xid.
func (w *wireCounters) sent(first bool, xid int32) {
	switch {
	case first: // ConnectRequest
	case xid == wire.XidPing:
		w.pings.Add(1)
	default:
		w.requests.Add(1)
	}
}

// countingConn passes bytes through and feeds both directions to frame
// scanners. Reads and writes each happen on one goroutine of the client
// (its reader and its writer), so each scanner is used by one goroutine.
type countingConn struct {
	net.Conn
	in, out frameScanner
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.in.feed(p[:n])
	return n, err
}

func (c *countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.out.feed(p[:n])
	return n, err
}

// frameScanner follows a stream of length-prefixed frames and reports the
// first 4 bytes of each frame's body (the xid of a request or reply
// header); the connection's first frame is the handshake.
type frameScanner struct {
	onFrame func(first bool, xid int32)
	frames  int64
	hdr     [8]byte // length prefix, then xid
	have    int     // bytes of hdr filled
	skip    int64   // body bytes left to skip in the current frame
	broken  bool
}

func (s *frameScanner) feed(p []byte) {
	for len(p) > 0 && !s.broken {
		if s.skip > 0 {
			n := int64(len(p))
			if n > s.skip {
				n = s.skip
			}
			s.skip -= n
			p = p[n:]
			continue
		}
		n := copy(s.hdr[s.have:], p)
		s.have += n
		p = p[n:]
		if s.have < 4 {
			return
		}
		size := int64(int32(binary.BigEndian.Uint32(s.hdr[:4])))
		if size < 4 {
			// No sane peer sends a frame without an xid: stop counting
			// rather than misread the rest of the stream.
			s.broken = true
			return
		}
		if s.have < 8 {
			return
		}
		s.onFrame(s.frames == 0, int32(binary.BigEndian.Uint32(s.hdr[4:8])))
		s.frames++
		s.skip = size - 4
		s.have = 0
	}
}
