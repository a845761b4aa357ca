package diff_test

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// pipeline writes reqs in one TCP write and records the next n frames
// (replies and events) in the order they arrive.
func (r *run) pipeline(c *conn, n int, reqs ...wire.MultiOp) {
	r.t.Helper()
	var buf []byte
	first := c.xid + 1
	var descs []string
	for _, q := range reqs {
		c.xid++
		buf = append(buf, frame(&wire.RequestHeader{Xid: c.xid, Op: q.Op}, q.Req)...)
		descs = append(descs, r.desc(q.Op, q.Req))
	}
	if err := c.write(buf); err != nil {
		r.t.Fatalf("write: %v", err)
	}
	var got []string
	for i := 0; i < n; i++ {
		b, err := c.readFrame()
		if err != nil {
			got = append(got, "EOF")
			c.closed = true
			break
		}
		d := wire.NewDecoder(b)
		var h wire.ReplyHeader
		_ = h.Decode(d)
		if h.Xid == wire.XidNotification {
			var ev wire.WatcherEvent
			_ = ev.Decode(d)
			got = append(got, fmt.Sprintf("event %v %s", ev.Type, r.rel(ev.Path)))
			continue
		}
		got = append(got, fmt.Sprintf("reply#%d %s", h.Xid-first, codeName(h.Err)))
	}
	line := fmt.Sprintf("%s: pipelined [%s] -> frames [%s]", c.name, strings.Join(descs, "; "), strings.Join(got, ", "))
	r.line(func(*norm) string { return line })
}

// TestPipelinedEventOrder: a client that sends a write and more requests
// without waiting gets the write's own events before the write's reply,
// as when it waits (ZooKeeper queues a change's events as it applies it,
// before the reply): a reply never shows a change before its event.
func TestPipelinedEventOrder(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/x", "", wire.ModePersistent)
		r.create(c, "/y", "", wire.ModePersistent)
		r.get(c, "/x", true)
		r.pipeline(c, 3,
			wire.MultiOp{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: r.p("/x"), Data: []byte("1"), Version: -1}},
			wire.MultiOp{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: r.p("/x")}})
		r.addWatch(c, "/y", wire.AddWatchPersistent)
		r.pipeline(c, 4,
			wire.MultiOp{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: r.p("/y"), Data: []byte("1"), Version: -1}},
			wire.MultiOp{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: r.p("/y"), Data: []byte("2"), Version: -1}})
		r.pipeline(c, 3,
			wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: r.p("/y/k"), ACL: openACL}},
			wire.MultiOp{Op: wire.OpGetChildren, Req: &wire.PathWatchRequest{Path: r.p("/y"), Watch: true}})

		r.note("setWatches behind a write: the events it raises come before its reply")
		rel := c.call(wire.OpExists, &wire.PathWatchRequest{Path: r.p("/x")}).zxid
		r.setData(c, "/x", "changed", -1)
		w := r.conn("w")
		r.pipeline(w, 4,
			wire.MultiOp{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: r.p("/y"), Data: []byte("3"), Version: -1}},
			wire.MultiOp{Op: wire.OpSetWatches, Req: &wire.SetWatches{RelativeZxid: rel, DataWatches: []string{r.p("/x")},
				ExistWatches: []string{}, ChildWatches: []string{}}},
			wire.MultiOp{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: r.p("/x")}})
	})
}

// TestPingXidAndHandshakeTail: a ping is answered with xid -2 whatever
// xid it was sent with, and a ConnectRequest with more than one byte after
// the password has its first read as the readOnly flag (the answer then
// carries the flag: 37 bytes, not 36).
func TestPingXidAndHandshakeTail(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		k := r.conn("k")
		_, _ = k.send(55, wire.OpPing, nil)
		_, _ = k.send(56, wire.OpExists, &wire.PathWatchRequest{Path: "/"})
		var xids []string
		for range 2 {
			b, err := k.readFrame()
			if err != nil {
				r.t.Fatalf("k: %v", err)
			}
			var h wire.ReplyHeader
			_ = h.Decode(wire.NewDecoder(b))
			xids = append(xids, fmt.Sprint(h.Xid))
		}
		r.note("ping sent with xid 55, then exists with 56: replies %s", strings.Join(xids, ", "))

		nc, err := net.DialTimeout("tcp", r.addr, waitTimeout)
		if err != nil {
			r.t.Fatal(err)
		}
		defer nc.Close()
		var e wire.Encoder
		start := e.BeginFrame()
		(&wire.ConnectRequest{TimeOut: sessionTimeout, Passwd: make([]byte, wire.PasswordSize),
			HasReadOnly: true, ReadOnly: true}).Encode(&e)
		e.Bool(false)
		e.EndFrame(start)
		if _, err := nc.Write(e.Bytes()); err != nil {
			r.t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(waitTimeout))
		b, err := wire.ReadFrame(bufio.NewReader(nc), nil, 1<<20)
		var resp wire.ConnectResponse
		if err == nil {
			err = resp.Decode(wire.NewDecoder(b))
		}
		r.note("handshake with two bytes after the password: %d-byte answer, err %v, session granted %v",
			len(b), err, resp.TimeOut > 0 && resp.SessionID != 0)
	})
}
