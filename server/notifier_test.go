package server

import (
	"bytes"
	"encoding/binary"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/watch"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		assert.NoError(t, err)
		accepted <- c
	}()
	cc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	sc := <-accepted
	require.NotNil(t, sc)
	t.Cleanup(func() {
		_ = sc.Close()
		_ = cc.Close()
	})
	return sc.(*net.TCPConn), cc.(*net.TCPConn)
}

// notifyConn is a connection of a bare server, set up as serve does, with
// no reader or writer goroutine running.
func notifyConn(t *testing.T) (*conn, *net.TCPConn) {
	t.Helper()
	s := &Server{cfg: DefaultConfig()}
	sc, cc := tcpPair(t)
	c := newConn(s, sc, "127.0.0.1")
	c.raw = rawConnOf(sc)
	require.NotNil(t, c.raw)
	return c, cc
}

func signalled(c *conn) bool {
	select {
	case <-c.outSignal:
		return true
	default:
		return false
	}
}

func readN(t *testing.T, cc net.Conn, n int) []byte {
	t.Helper()
	require.NoError(t, cc.SetReadDeadline(time.Now().Add(10*time.Second)))
	buf := make([]byte, n)
	_, err := io.ReadFull(cc, buf)
	require.NoError(t, err)
	return buf
}

func TestTryFlushWritesWithoutTheWriter(t *testing.T) {
	c, cc := notifyConn(t)
	require.True(t, c.queue([]byte("first ")))
	require.True(t, c.queue([]byte("second")))
	c.tryFlush()
	assert.Equal(t, "first second", string(readN(t, cc, 12)))
	assert.False(t, signalled(c), "the writer goroutine was woken")
	assert.Empty(t, c.out)
}

// An idle connection's last write deadline has long passed; Go refuses any
// write then, raw ones included, unless the deadline is cleared.
func TestTryFlushAfterTheWriteDeadlinePassed(t *testing.T) {
	c, cc := notifyConn(t)
	require.NoError(t, c.nc.SetWriteDeadline(time.Now().Add(-time.Second)))
	require.True(t, c.queue([]byte("late")))
	c.tryFlush()
	assert.Equal(t, "late", string(readN(t, cc, 4)))
	assert.False(t, signalled(c))
}

// A connection the notifier must not write itself goes back to its writer
// goroutine, with the frame still queued.
func TestTryFlushHandsBackToTheWriter(t *testing.T) {
	for name, setup := range map[string]func(c *conn) (undo func()){
		"writer busy": func(c *conn) func() {
			c.wmu.Lock()
			return c.wmu.Unlock
		},
		"clients paused": func(c *conn) func() {
			c.s.gate.pause()
			return c.s.gate.resume
		},
		"no raw connection (TLS)": func(c *conn) func() {
			c.raw = nil
			return func() {}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, _ := notifyConn(t)
			undo := setup(c)
			require.True(t, c.queue([]byte("event")))
			c.tryFlush()
			undo()
			assert.True(t, signalled(c), "the writer goroutine was not woken")
			assert.Equal(t, "event", string(c.out))
		})
	}
}

// A socket that takes only part of the buffer: the rest goes back in front
// of anything queued since, and the writer sends it all in order.
func TestTryFlushPartialWriteKeepsTheOrder(t *testing.T) {
	c, cc := notifyConn(t)
	require.NoError(t, c.nc.(*net.TCPConn).SetWriteBuffer(4<<10))
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB: more than the socket buffers hold
	c.s.cfg.MaxOutboundBytes = 2 * len(big)
	require.True(t, c.queue(big))
	c.tryFlush()
	require.True(t, signalled(c), "a partial write must wake the writer")
	require.NotEmpty(t, c.out, "the socket took 1 MiB at once")
	require.Less(t, len(c.out), len(big), "the socket took none of it")
	require.True(t, c.queue([]byte("tail")))

	got := make(chan []byte, 1)
	go func() {
		buf := make([]byte, len(big)+4)
		_ = cc.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.ReadFull(cc, buf)
		assert.NoError(t, err)
		got <- buf
	}()
	require.NoError(t, c.flush())
	want := append(append([]byte{}, big...), "tail"...)
	assert.True(t, bytes.Equal(want, <-got), "bytes out of order")
}

func TestUnshiftPutsTheRestFirst(t *testing.T) {
	c, _ := notifyConn(t)
	require.True(t, c.queue([]byte("queued meanwhile")))
	c.unshift([]byte("rest, "))
	assert.Equal(t, "rest, queued meanwhile", string(c.out))
}

func TestNotifierWritesEveryQueuedConnection(t *testing.T) {
	done := make(chan struct{})
	n := newNotifier(done)
	var mu sync.Mutex
	written := map[*conn]int{}
	n.writer = func(c *conn) {
		mu.Lock()
		written[c]++
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range notifyWriters() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n.run()
		}()
	}
	conns := make([]*conn, 3000)
	for i := range conns {
		conns[i] = &conn{}
		n.add(conns[i])
	}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(written) == len(conns)
	}, 10*time.Second, time.Millisecond)
	close(done)
	wg.Wait()
	for _, c := range conns {
		assert.Equal(t, 1, written[c])
	}
}

// A server that fails to start stops its notifier goroutines.
func TestFailedStartStopsTheNotifier(t *testing.T) {
	file := t.TempDir() + "/file"
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.DataDir = file + "/data" // under a file: Raft's stores cannot open
	before := notifierGoroutines()
	_, err := New(cfg)
	require.Error(t, err)
	require.Eventually(t, func() bool { return notifierGoroutines() <= before },
		10*time.Second, time.Millisecond, "notifier goroutines left running")
}

func notifierGoroutines() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "(*notifier).run(")
}

// recordingWatcher is a watch.Watcher that is not a connection.
type recordingWatcher struct{ got []wire.WatcherEvent }

func (r *recordingWatcher) Notify(ev wire.WatcherEvent, _ int64) { r.got = append(r.got, ev) }
func (r *recordingWatcher) SessionID() int64                     { return 1 }

// deliver queues the one encoded event on every watcher's connection and
// hands each connection to the notifier once, in order, across batches;
// a connection owing an earlier reply holds the event instead (it goes
// out after that reply), and a watcher that is not a connection is
// notified directly.
func TestDeliverQueuesTheEventOnEveryConnection(t *testing.T) {
	s := &Server{cfg: DefaultConfig()}
	s.notifier = newNotifier(make(chan struct{})) // no goroutines: the queue stays
	ev := wire.WatcherEvent{Type: wire.EventNodeDataChanged, State: wire.StateSyncConnected, Path: "/herd/node"}
	const zxid = 0x100000007
	frame := encodeNotification(ev, zxid)
	d := wire.NewDecoder(frame[4:])
	var h wire.ReplyHeader
	var got wire.WatcherEvent
	require.NoError(t, h.Decode(d))
	require.NoError(t, got.Decode(d))
	require.Equal(t, wire.ReplyHeader{Xid: wire.XidNotification, Zxid: zxid, Err: wire.OK}, h)
	require.Equal(t, ev, got)
	require.Equal(t, len(frame)-4, int(binary.BigEndian.Uint32(frame)), "the frame's length prefix")
	require.Zero(t, d.Remaining(), "trailing bytes after the event")

	conns := make([]*conn, 3*notifyBatch+5)
	ws := make([]watch.Watcher, 0, len(conns)+1)
	for i := range conns {
		conns[i] = newConn(s, nil, "127.0.0.1")
		ws = append(ws, conns[i])
	}
	busy := conns[7]
	busy.repliesQueued.Add(1) // a request read, its reply not queued yet
	other := &recordingWatcher{}
	ws = append(ws[:3], append([]watch.Watcher{other}, ws[3:]...)...)

	s.deliver(ev, zxid, ws)

	var want []*conn
	for _, c := range conns {
		if c == busy {
			assert.Empty(t, c.out)
			require.Len(t, c.held, 1)
			assert.Equal(t, frame, c.held[0].frame)
			continue
		}
		assert.Equal(t, frame, c.out)
		assert.Equal(t, int64(1), c.stats.notifications.Load())
		want = append(want, c)
	}
	assert.Equal(t, want, s.notifier.queue)
	assert.Equal(t, []wire.WatcherEvent{ev}, other.got)

	// The frame is what Notify queues for one connection.
	c := newConn(s, nil, "127.0.0.1")
	c.Notify(ev, zxid)
	assert.Equal(t, frame, c.out)
}
