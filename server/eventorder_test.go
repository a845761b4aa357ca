package server

import (
	"bufio"
	dto "github.com/prometheus/client_model/go"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// heldConn is a server-side connection whose writes can be held, as a
// client that stops reading (a full TCP window) holds them.
type heldConn struct {
	net.Conn
	hold    atomic.Pointer[chan struct{}]
	waiting chan struct{} // a Write waits on hold
}

func (h *heldConn) Write(b []byte) (int, error) {
	if ch := h.hold.Load(); ch != nil {
		h.waiting <- struct{}{}
		<-*ch
	}
	return h.Conn.Write(b)
}

type heldListener struct {
	net.Listener
	mu    sync.Mutex
	conns []*heldConn
}

func (l *heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	h := &heldConn{Conn: c, waiting: make(chan struct{}, 1)}
	l.mu.Lock()
	l.conns = append(l.conns, h)
	l.mu.Unlock()
	return h, nil
}

// eventOrderSession starts a server whose connections' writes can be held,
// opens a session with /x created and an exists watch on it, and returns
// the session's server-side connection.
func eventOrderSession(t *testing.T) (*Server, *heldConn, net.Conn, *bufio.Reader, int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	hl := &heldListener{Listener: ln}
	srv := attachServer(t, func(cfg *Config) { cfg.Listener = hl })
	nc, br, cr := handshakeRaw(t, srv.Addr().String(), 0, nil)
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/x", Data: []byte("v0"), ACL: wire.OpenACLUnsafe})
	send(t, nc, &wire.RequestHeader{Xid: 2, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/x", Watch: true})
	for range 2 {
		var h wire.ReplyHeader
		readRecord(t, br, &h)
		require.Equal(t, wire.OK, h.Err)
	}
	hl.mu.Lock()
	sc := hl.conns[0]
	hl.mu.Unlock()
	return srv, sc, nc, br, cr.SessionID
}

// holdWrites holds sc's writes and makes its writer block in one: a ping
// whose reply it is writing.
func holdWrites(t *testing.T, srv *Server, sc *heldConn, nc net.Conn, session int64) (release func()) {
	t.Helper()
	ch := make(chan struct{})
	sc.hold.Store(&ch)
	send(t, nc, &wire.RequestHeader{Xid: wire.XidPing, Op: wire.OpPing})
	select {
	case <-sc.waiting: // the writer is in the ping reply's write
	case <-time.After(10 * time.Second):
		t.Fatal("the ping reply was never written")
	}
	require.NotNil(t, srv.connOf(session))
	return func() { sc.hold.Store(nil); close(ch) }
}

// xids reads n frames and returns their xids, and the data of a getData
// reply (xid 10).
func xids(t *testing.T, br *bufio.Reader, n int) ([]int32, string) {
	t.Helper()
	var out []int32
	var data string
	for range n {
		f, err := wire.ReadFrame(br, nil, 1<<20)
		require.NoError(t, err)
		d := wire.NewDecoder(f)
		var h wire.ReplyHeader
		require.NoError(t, h.Decode(d))
		out = append(out, h.Xid)
		if h.Xid == 10 {
			var r wire.GetDataResponse
			require.NoError(t, r.Decode(d))
			data = string(r.Data)
		}
	}
	return out, data
}

// A reply computed before a change goes out before the change's event,
// even when it waits behind a write to the socket: a client that drops a
// cached node on the event and fills it from the reply would otherwise
// keep the old data for good.
func TestEventDoesNotOvertakeAnOlderReply(t *testing.T) {
	eachReplyPath(t, func(t *testing.T, byWriter bool) {
		_, _, br, _ := answerThenChange(t, byWriter)
		got, data := xids(t, br, 3)
		require.Equal(t, "v0", data)
		require.Equal(t, []int32{wire.XidPing, 10, wire.XidNotification}, got,
			"the event for v1 reached the client before the reply showing v0")
	})
}

// answerThenChange opens a session watching /x (v0) with its writer
// blocked in a write, has a getData of /x answered from v0 (by the writer
// or by the reader), sets /x to v1, and lets the writer go on.
func answerThenChange(t *testing.T, byWriter bool) (*Server, net.Conn, *bufio.Reader, int64) {
	t.Helper()
	srv, sc, nc, br, session := eventOrderSession(t)
	release := holdWrites(t, srv, sc, nc, session)
	readAnswered(t, srv.connOf(session), byWriter, func() {
		send(t, nc, &wire.RequestHeader{Xid: 10, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/x"})
	})
	_, err := srv.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpSetData, Path: "/x", Data: []byte("v1"), Version: -1}}})
	require.NoError(t, err)
	release()
	return srv, nc, br, session
}

// eachReplyPath runs test with a read answered by the connection's writer
// goroutine and by its reader (replyNow).
func eachReplyPath(t *testing.T, test func(t *testing.T, byWriter bool)) {
	t.Run("writer", func(t *testing.T) { test(t, true) })
	t.Run("reader", func(t *testing.T) { test(t, false) })
}

// readAnswered runs send, which sends c's client one read answered at
// once while c's writer goroutine is blocked in a write, and waits until
// the read's reply waits for the writer (byWriter: replyNow was kept off
// by holding replyMu meanwhile) or is in the outbound buffer, put there
// by the reader.
func readAnswered(t *testing.T, c *conn, byWriter bool, send func()) {
	t.Helper()
	if byWriter {
		c.replyMu.Lock()
		defer c.replyMu.Unlock()
		send()
		require.Eventually(t, func() bool { return len(c.pending) == 1 }, 10*time.Second, time.Millisecond,
			"the read is answered and waits for the writer")
		return
	}
	read := c.repliesQueued.Load() + 1
	send()
	require.Eventually(t, func() bool {
		c.outMu.Lock()
		defer c.outMu.Unlock()
		return c.repliesQueued.Load() == read && c.repliesOut == read
	}, 10*time.Second, time.Millisecond, "the read is answered by its reader while the writer is blocked")
	require.Zero(t, len(c.pending))
}

// A write's own events go out just before its reply, after the replies
// to the requests before it, as in ZooKeeper.
func TestOwnWriteEventBetweenEarlierRepliesAndItsReply(t *testing.T) {
	srv, sc, nc, br, session := eventOrderSession(t)
	release := holdWrites(t, srv, sc, nc, session)
	send(t, nc, &wire.RequestHeader{Xid: 10, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/x"})
	send(t, nc, &wire.RequestHeader{Xid: 11, Op: wire.OpSetData}, &wire.SetDataRequest{Path: "/x", Data: []byte("v1"), Version: -1})
	require.Eventually(t, func() bool {
		st, ok := srv.FSM().Exists("/x")
		return ok && st.Version == 1
	}, 10*time.Second, time.Millisecond)
	release()
	got, data := xids(t, br, 4)
	require.Equal(t, "v0", data)
	require.Equal(t, []int32{wire.XidPing, 10, wire.XidNotification, 11}, got)
}

// A client that pipelines writes to a node it watches keeps getting its
// replies while it writes: letting a write's events out before its reply
// must not stop the writer from flushing every 64 KiB.
func TestPipelinedWatchedWritesAreFlushedAsTheyGo(t *testing.T) {
	srv := attachServer(t, nil)
	nc, br, _ := handshakeRaw(t, srv.Addr().String(), 0, nil)
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/x", ACL: wire.OpenACLUnsafe})
	send(t, nc, &wire.RequestHeader{Xid: 2, Op: wire.OpAddWatch},
		&wire.AddWatchRequest{Path: "/x", Mode: wire.AddWatchPersistent})
	for range 2 {
		var h wire.ReplyHeader
		readRecord(t, br, &h)
		require.Equal(t, wire.OK, h.Err)
	}
	const writes = 4000
	var burst []byte
	for i := range writes {
		burst = append(burst, frame(&wire.RequestHeader{Xid: int32(10 + i), Op: wire.OpSetData},
			&wire.SetDataRequest{Path: "/x", Data: []byte("v"), Version: -1})...)
	}
	go func() { _, _ = nc.Write(burst) }()
	var h wire.ReplyHeader
	readRecord(t, br, &h) // the first reply or event
	st, _ := srv.FSM().Exists("/x")
	require.Less(t, st.Version, int32(writes), "nothing reached the client until the last write was applied")
}

// The events setWatches raises for changes the client missed come before
// its reply, as in ZooKeeper, and count as notifications in
// paddock_watch_notifications_total, as in mntr's zk_notifications_sent
// (the replay's were left out).
func TestSetWatchesEventsComeBeforeItsReply(t *testing.T) {
	srv, _, nc, br, _ := eventOrderSession(t) // /x created, exists watch set
	st, ok := srv.FSM().Exists("/x")
	require.True(t, ok)
	_, err := srv.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpSetData, Path: "/x", Data: []byte("v1"), Version: -1}}})
	require.NoError(t, err)
	var h wire.ReplyHeader
	readRecord(t, br, &h) // the exists watch's own event
	require.Equal(t, wire.XidNotification, h.Xid)
	counted := func() float64 {
		var m dto.Metric
		require.NoError(t, srv.metrics.notifications.WithLabelValues(wire.EventNodeDataChanged.String()).Write(&m))
		return m.GetCounter().GetValue()
	}
	require.Equal(t, 1.0, counted())
	const xidSetWatches = -8
	send(t, nc, &wire.RequestHeader{Xid: xidSetWatches, Op: wire.OpSetWatches},
		&wire.SetWatches{RelativeZxid: st.Mzxid, DataWatches: []string{"/x"}})
	got, _ := xids(t, br, 2)
	require.Equal(t, []int32{wire.XidNotification, xidSetWatches}, got)
	require.Equal(t, 2.0, counted(), "the replayed NodeDataChanged was not counted")
	require.Equal(t, uint64(2), srv.Watches().Stats().Notifications)
}

// A reply that shows a change goes out after the change's event: here a
// getData waits behind an exists (which arms a watch, so the writer
// answers it); both are read before /x changes and answered after, so
// the event goes first (ZooKeeper's guarantee: a client sees the event
// before the new data).
func TestReplyShowingAChangeFollowsItsEvent(t *testing.T) {
	srv, sc, nc, br, session := eventOrderSession(t) // /x exists, exists watch on it
	release := holdWrites(t, srv, sc, nc, session)
	c := srv.connOf(session)
	send(t, nc, &wire.RequestHeader{Xid: 9, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/y", Watch: true})
	send(t, nc, &wire.RequestHeader{Xid: 10, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/x"})
	require.Eventually(t, func() bool { return len(c.pending) == 2 }, 10*time.Second, time.Millisecond)
	_, err := srv.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpSetData, Path: "/x", Data: []byte("v1"), Version: -1}}})
	require.NoError(t, err)
	release()
	got, data := xids(t, br, 4)
	require.Equal(t, "v1", data, "the deferred getData is answered after the change")
	require.Equal(t, []int32{wire.XidPing, wire.XidNotification, 9, 10}, got,
		"a reply computed after the change reached the client before its event")
}

// A client that pipelines a write and more requests gets the write's own
// event before the write's reply, as when it waits for each reply
// (ZooKeeper sends the event first either way).
func TestPipelinedWriteEventBeforeItsReply(t *testing.T) {
	srv, _, nc, br, _ := eventOrderSession(t) // exists watch on /x
	_ = srv
	burst := append(frame(&wire.RequestHeader{Xid: 20, Op: wire.OpSetData},
		&wire.SetDataRequest{Path: "/x", Data: []byte("v1"), Version: -1}),
		frame(&wire.RequestHeader{Xid: 21, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/x"})...)
	_, err := nc.Write(burst)
	require.NoError(t, err)
	got, _ := xids(t, br, 3)
	require.Equal(t, []int32{wire.XidNotification, 20, 21}, got)
}

// A reply's header never carries a zxid ahead of the events sent after
// it: a client keeps the header's zxid and, after a reconnect, presents
// it as setWatches' relativeZxid, so an event not yet received would be
// lost for good. Here the getData is answered from v0 while the change
// to v1 waits behind it; the client loses the connection right after the
// reply and re-arms its watch from the reply's zxid: it must hear of v1.
func TestReplyZxidNotAheadOfLaterEvents(t *testing.T) {
	eachReplyPath(t, func(t *testing.T, byWriter bool) {
		srv, nc, br, session := answerThenChange(t, byWriter) // exists watch on /x
		passwd := srv.fsm.Password(session)
		var seen int64
		for range 2 { // the ping's reply, then the getData's
			var h wire.ReplyHeader
			readRecord(t, br, &h)
			seen = max(seen, h.Zxid)
		}
		nc.Close() // lost before the event arrived
		nc2, br2, cr := handshakeRaw(t, srv.Addr().String(), session, passwd)
		require.Equal(t, session, cr.SessionID)
		const xidSetWatches = -8
		send(t, nc2, &wire.RequestHeader{Xid: xidSetWatches, Op: wire.OpSetWatches},
			&wire.SetWatches{RelativeZxid: seen, DataWatches: []string{"/x"}})
		var h wire.ReplyHeader
		readRecord(t, br2, &h)
		require.Equal(t, wire.XidNotification, h.Xid, "the change to v1 was never reported")
	})
}

// checkWatches answers from the state it sees: a NoWatcher for a watch
// that fired comes after the event that fired it.
func TestCheckWatchesAfterTheEventThatFiredIt(t *testing.T) {
	srv, sc, nc, br, session := eventOrderSession(t) // exists watch on /x
	release := holdWrites(t, srv, sc, nc, session)
	c := srv.connOf(session)
	send(t, nc, &wire.RequestHeader{Xid: 11, Op: wire.OpCreate}, &wire.CreateRequest{Path: "/w", ACL: wire.OpenACLUnsafe})
	send(t, nc, &wire.RequestHeader{Xid: 12, Op: wire.OpCheckWatches}, &wire.WatchesRequest{Path: "/x", Type: wire.WatcherData})
	require.Eventually(t, func() bool { return len(c.pending) == 2 }, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { _, ok := srv.FSM().Exists("/w"); return ok }, 10*time.Second, time.Millisecond)
	_, err := srv.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpSetData, Path: "/x", Data: []byte("v1"), Version: -1}}})
	require.NoError(t, err)
	release()
	var got []int32
	for range 4 {
		var h wire.ReplyHeader
		readRecord(t, br, &h)
		got = append(got, h.Xid)
		if h.Xid == 12 {
			require.Equal(t, wire.ErrNoWatcher, h.Err)
		}
	}
	require.Equal(t, []int32{wire.XidPing, 11, wire.XidNotification, 12}, got)
}
