package server

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestReattachWaitsForOlderReaders: a create read from a connection that
// then drops is applied before anything the session sends on its next
// connection (ZooKeeper's per-session order). The old connection's reader
// is held between reading the create and handling it until the re-attach
// is waiting for it; without that wait the new connection's exists would
// run first and find nothing.
func TestReattachWaitsForOlderReaders(t *testing.T) {
	held := make(chan struct{})
	release := make(chan struct{})
	var holdOnce, releaseOnce sync.Once
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.hooks = &testHooks{
		beforeHandle: func(frame []byte) {
			var h wire.RequestHeader
			if h.Decode(wire.NewDecoder(frame)) == nil && h.Op == wire.OpCreate {
				holdOnce.Do(func() { close(held) })
				<-release
			}
		},
		awaitedReaders: func() { releaseOnce.Do(func() { close(release) }) },
	}
	srv, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		releaseOnce.Do(func() { close(release) })
		srv.Close()
	})
	addr := srv.Addr().String()

	a, ra := dialRaw(t, addr)
	send(t, a, &wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	var cr wire.ConnectResponse
	readRecord(t, ra, &cr)
	if cr.SessionID == 0 {
		t.Fatal("no session")
	}
	send(t, a, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/ordered", ACL: wire.OpenACLUnsafe})
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the create never reached the server")
	}
	a.Close()

	b, rb := dialRaw(t, addr)
	send(t, b, &wire.ConnectRequest{TimeOut: 30000, SessionID: cr.SessionID, Passwd: cr.Passwd})
	send(t, b, &wire.RequestHeader{Xid: 1, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/ordered"})
	var cr2 wire.ConnectResponse
	readRecord(t, rb, &cr2)
	if cr2.SessionID != cr.SessionID || cr2.TimeOut <= 0 {
		t.Fatalf("re-attach refused: %+v", cr2)
	}
	var h wire.ReplyHeader
	readRecord(t, rb, &h)
	if h.Err != wire.OK {
		t.Fatalf("exists on the new connection: %v; the old connection's create was applied after it", h.Err)
	}
}

func dialRaw(t testing.TB, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	_ = nc.SetDeadline(time.Now().Add(20 * time.Second))
	return nc, bufio.NewReader(nc)
}

func send(t testing.TB, nc net.Conn, parts ...wire.Record) {
	t.Helper()
	if _, err := nc.Write(frame(parts...)); err != nil {
		t.Fatal(err)
	}
}

// readRecord reads one frame and decodes its start into r.
func readRecord(t *testing.T, br *bufio.Reader, r interface{ Decode(*wire.Decoder) error }) {
	t.Helper()
	f, err := wire.ReadFrame(br, nil, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Decode(wire.NewDecoder(f)); err != nil {
		t.Fatal(err)
	}
}
