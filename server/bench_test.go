package server

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/watch"
)

// The request benchmarks drive one in-memory server over loopback with a
// raw client that sends a pre-encoded request and reads the reply into a
// reused buffer, so the allocations they report are the server's: its
// read, dispatch, Raft proposal (writes), apply and reply. They run one
// request at a time, so ns/op is a round trip, not a throughput.

// benchConn is a raw session on a fresh in-memory server.
type benchConn struct {
	nc  net.Conn
	br  *bufio.Reader
	buf []byte
}

func newBenchConn(b *testing.B) *benchConn {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	nc, br := dialRaw(b, srv.Addr().String())
	_ = nc.SetDeadline(time.Time{}) // a benchmark may run longer than dialRaw allows
	c := &benchConn{nc: nc, br: br}
	send(b, nc, &wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	var cr wire.ConnectResponse
	if err := cr.Decode(wire.NewDecoder(c.read(b))); err != nil || cr.SessionID == 0 {
		b.Fatalf("connect: %v (session %x)", err, cr.SessionID)
	}
	return c
}

// read reads one reply into the reused buffer (readRecord allocates).
func (c *benchConn) read(b *testing.B) []byte {
	f, err := wire.ReadFrame(c.br, c.buf, 1<<20)
	if err != nil {
		b.Fatal(err)
	}
	c.buf = f[:0]
	return f
}

// call sends a pre-encoded request and fails unless the reply is OK.
func (c *benchConn) call(b *testing.B, req []byte) {
	if _, err := c.nc.Write(req); err != nil {
		b.Fatal(err)
	}
	var h wire.ReplyHeader
	if err := h.Decode(wire.NewDecoder(c.read(b))); err != nil || h.Err != wire.OK {
		b.Fatalf("reply: %v, code %v", err, h.Err)
	}
}

func benchRequest(b *testing.B, setup []byte, req []byte) {
	c := newBenchConn(b)
	if setup != nil {
		c.call(b, setup)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c.call(b, req)
	}
}

var benchValue = make([]byte, 100)

func BenchmarkRequestGetData(b *testing.B) {
	benchRequest(b,
		frame(&wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
			&wire.CreateRequest{Path: "/n", Data: benchValue, ACL: wire.OpenACLUnsafe}),
		frame(&wire.RequestHeader{Xid: 2, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/n"}))
}

func BenchmarkRequestExists(b *testing.B) {
	benchRequest(b,
		frame(&wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
			&wire.CreateRequest{Path: "/n", Data: benchValue, ACL: wire.OpenACLUnsafe}),
		frame(&wire.RequestHeader{Xid: 2, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/n"}))
}

func BenchmarkRequestSetData(b *testing.B) {
	benchRequest(b,
		frame(&wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
			&wire.CreateRequest{Path: "/n", Data: benchValue, ACL: wire.OpenACLUnsafe}),
		frame(&wire.RequestHeader{Xid: 2, Op: wire.OpSetData},
			&wire.SetDataRequest{Path: "/n", Data: benchValue, Version: -1}))
}

// BenchmarkRequestCreate creates sequential nodes, so one pre-encoded
// request makes a new znode each time.
func BenchmarkRequestCreate(b *testing.B) {
	benchRequest(b, nil,
		frame(&wire.RequestHeader{Xid: 2, Op: wire.OpCreate},
			&wire.CreateRequest{Path: "/n-", Data: benchValue, ACL: wire.OpenACLUnsafe,
				Flags: wire.ModePersistentSequential}))
}

// BenchmarkQueueNotifications measures what Raft's apply goroutine does
// for one change watched by 1,000 connections, with the watch registry's
// lock released: "each" encodes and queues the event per connection
// (conn.Notify, the path for a watcher that is not the server's own);
// "deliver" encodes it once and hands the connections over in batches
// (Server.deliver). No notifier goroutine runs, so the sockets are not
// written: this is the part that holds the state lock.
func BenchmarkQueueNotifications(b *testing.B) {
	const n = 1000
	s := &Server{cfg: DefaultConfig()}
	s.notifier = newNotifier(make(chan struct{}))
	conns := make([]*conn, n)
	ws := make([]watch.Watcher, n)
	for i := range conns {
		conns[i] = newConn(s, nil, "127.0.0.1")
		ws[i] = conns[i]
	}
	ev := wire.WatcherEvent{Type: wire.EventNodeDataChanged, State: wire.StateSyncConnected, Path: "/bench/fanout/node"}
	reset := func() {
		for _, c := range conns {
			c.out = c.out[:0]
		}
		clear(s.notifier.queue)
		s.notifier.queue = s.notifier.queue[:0]
	}
	for name, queue := range map[string]func(zxid int64){
		"each": func(zxid int64) {
			for _, w := range ws {
				w.Notify(ev, zxid)
			}
		},
		"deliver": func(zxid int64) { s.deliver(ev, zxid, ws) },
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				queue(int64(i))
				b.StopTimer()
				reset()
				b.StartTimer()
			}
		})
	}
}
