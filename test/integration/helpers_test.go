// Package integration_test is the standalone server's integration suite:
// go-zookeeper/zk as an independent client, and raw frames built with
// internal/wire for what go-zookeeper cannot send.
package integration_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// waitTimeout bounds every wait in this package.
const waitTimeout = 10 * time.Second

// startServer starts an in-process server whose session timeouts go up to
// 30s (zktest clamps to 2s by default), so that raw clients, which never
// ping, keep their sessions however slow the test machine is. Later
// options override.
func startServer(t testing.TB, opts ...zktest.Option) *zktest.Server {
	t.Helper()
	return zktest.Start(t, append([]zktest.Option{zktest.WithSessionTimeouts(200*time.Millisecond, 30*time.Second)}, opts...)...)
}

// eventually polls cond until it holds or timeout passes.
func eventually(t testing.TB, timeout time.Duration, cond func() bool, msgAndArgs ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			require.Fail(t, "condition not met in time", msgAndArgs...)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

var openACL = zk.WorldACL(zk.PermAll)

// sizeFromEnv returns the number in the environment variable name, or def
// when it is unset (a test's size, larger on demand).
func sizeFromEnv(t testing.TB, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	require.NoError(t, err, name)
	return n
}

// nopLogger silences go-zookeeper.
type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// recorder collects every watch event a go-zookeeper connection receives,
// through its event callback (which, unlike the event channel, never drops).
type recorder struct {
	mu     sync.Mutex
	events []zk.Event
}

func (r *recorder) record(e zk.Event) {
	if e.Type == zk.EventSession {
		return
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

// count returns how many events of typ on path were received.
func (r *recorder) count(typ zk.EventType, path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if e.Type == typ && e.Path == path {
			n++
		}
	}
	return n
}

func (r *recorder) all() []zk.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]zk.Event(nil), r.events...)
}

// client is a go-zookeeper connection with its session events and a
// recorder of its watch events.
type client struct {
	*zk.Conn
	ev  <-chan zk.Event
	rec *recorder
}

// connect dials srv with go-zookeeper and waits for a session.
func connect(t testing.TB, srv *zktest.Server) *client {
	t.Helper()
	return connectWith(t, srv, 5*time.Second, nil)
}

// connectWith is connect with a session timeout and, if not nil, a dialer.
func connectWith(t testing.TB, srv *zktest.Server, timeout time.Duration, dialer zk.Dialer) *client {
	t.Helper()
	rec := &recorder{}
	loop := newLoopTracker()
	c, ev, err := zk.Connect(srv.Servers(), timeout, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}),
		zk.WithEventCallback(rec.record), zk.WithDialer(loop.dialer(dialer)))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	waitState(t, ev, zk.StateHasSession)
	loop.waitSettled(t) // see zkloop_test.go
	return &client{Conn: c, ev: ev, rec: rec}
}

// waitState waits for a session state on a go-zookeeper event channel.
func waitState(t testing.TB, ev <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(waitTimeout)
	for {
		select {
		case e, ok := <-ev:
			require.True(t, ok, "event channel closed while waiting for %v", want)
			if e.Type == zk.EventSession && e.State == want {
				return
			}
		case <-deadline:
			require.FailNow(t, "timed out waiting for state", "%v", want)
		}
	}
}

// waitEvent waits for one event on a watch channel.
func waitEvent(t testing.TB, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case e := <-ch:
		return e
	case <-time.After(waitTimeout):
		require.FailNow(t, "no watch event")
	}
	return zk.Event{}
}

// mustCreate creates a persistent node with go-zookeeper.
func mustCreate(t testing.TB, c *client, path string, data []byte) {
	t.Helper()
	_, err := c.Create(path, data, zk.FlagPersistent, openACL)
	require.NoError(t, err, "create %s", path)
}

// ---- raw client ----

// rawConn is a minimal ZooKeeper client speaking frames built with
// internal/wire. Every read has a deadline, so no test can hang on it.
type rawConn struct {
	t      testing.TB
	nc     net.Conn
	br     *bufio.Reader
	xid    int32
	resp   wire.ConnectResponse
	events []wire.WatcherEvent // notifications read while waiting for replies
}

// dialRaw opens a TCP connection without a handshake.
func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, waitTimeout)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReaderSize(nc, 64<<10)}
}

// connectRaw dials srv and establishes a new session.
func connectRaw(t testing.TB, srv *zktest.Server) *rawConn {
	t.Helper()
	c := dialRaw(t, srv.Addr())
	resp, err := c.handshake(wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
	require.NoError(t, err)
	require.NotZero(t, resp.SessionID)
	require.Positive(t, resp.TimeOut)
	return c
}

// handshake sends req and reads the ConnectResponse.
func (c *rawConn) handshake(req wire.ConnectRequest) (wire.ConnectResponse, error) {
	c.write(encodeFrame(nil, &req))
	frame, err := c.readFrame()
	if err != nil {
		return wire.ConnectResponse{}, err
	}
	var resp wire.ConnectResponse
	if err := resp.Decode(wire.NewDecoder(frame)); err != nil {
		return resp, err
	}
	c.resp = resp
	return resp, nil
}

// encodeFrame returns a length-prefixed frame of hdr (if any) and rec.
func encodeFrame(hdr *wire.RequestHeader, rec wire.Record) []byte {
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

// requestFrame returns the frame of a request.
func requestFrame(xid int32, op wire.OpCode, rec wire.Record) []byte {
	return encodeFrame(&wire.RequestHeader{Xid: xid, Op: op}, rec)
}

func (c *rawConn) write(b []byte) {
	c.t.Helper()
	_ = c.nc.SetWriteDeadline(time.Now().Add(waitTimeout))
	_, err := c.nc.Write(b)
	require.NoError(c.t, err)
}

// send writes a request with the next xid and returns the xid.
func (c *rawConn) send(op wire.OpCode, rec wire.Record) int32 {
	c.t.Helper()
	c.xid++
	c.write(requestFrame(c.xid, op, rec))
	return c.xid
}

func (c *rawConn) readFrame() ([]byte, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(waitTimeout))
	return wire.ReadFrame(c.br, nil, 64<<20)
}

// next reads the next frame of any kind and decodes its header.
func (c *rawConn) next() (wire.ReplyHeader, *wire.Decoder) {
	c.t.Helper()
	frame, err := c.readFrame()
	require.NoError(c.t, err, "reading a reply")
	d := wire.NewDecoder(frame)
	var h wire.ReplyHeader
	require.NoError(c.t, h.Decode(d))
	return h, d
}

// reply reads frames until a non-notification one, which must answer
// xid. Notifications read on the way are kept in c.events.
func (c *rawConn) reply(xid int32) (wire.ReplyHeader, *wire.Decoder) {
	c.t.Helper()
	for {
		h, d := c.next()
		if h.Xid == wire.XidNotification {
			c.events = append(c.events, decodeEvent(c.t, d))
			continue
		}
		require.Equal(c.t, xid, h.Xid, "replies must come in request order")
		return h, d
	}
}

func decodeEvent(t testing.TB, d *wire.Decoder) wire.WatcherEvent {
	t.Helper()
	var ev wire.WatcherEvent
	require.NoError(t, ev.Decode(d))
	require.NoError(t, d.Finish())
	return ev
}

// call sends a request and waits for its reply; when the reply is OK and
// resp is not nil, its body is decoded into resp.
func (c *rawConn) call(op wire.OpCode, req, resp wire.Record) wire.Code {
	c.t.Helper()
	h, d := c.reply(c.send(op, req))
	if h.Err == wire.OK && resp != nil {
		require.NoError(c.t, resp.Decode(d), "decoding %v reply", op)
		require.NoError(c.t, d.Finish(), "decoding %v reply", op)
	}
	return h.Err
}

// barrier round-trips a request and returns every notification received
// before its reply (and kept earlier), emptying the kept list. A
// notification triggered by a change that completed before the barrier is
// sent is always among them.
func (c *rawConn) barrier() []wire.WatcherEvent {
	c.t.Helper()
	require.Equal(c.t, wire.OK, c.call(wire.OpExists, &wire.PathWatchRequest{Path: "/"}, &wire.StatResponse{}))
	evs := c.events
	c.events = nil
	return evs
}

// expectClosed reads until the server closes the connection and returns
// the bytes received before the close. It fails if the connection is
// still open after waitTimeout.
func (c *rawConn) expectClosed() []byte {
	c.t.Helper()
	_ = c.nc.SetReadDeadline(time.Now().Add(waitTimeout))
	b, err := io.ReadAll(c.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		require.FailNow(c.t, "the server did not close the connection")
	}
	// A reset (the server closed with unread input) counts as closed.
	return b
}

// expectClosedWithReplies is expectClosed, parsing what was received as
// reply frames.
func (c *rawConn) expectClosedWithReplies() []wire.ReplyHeader {
	c.t.Helper()
	b := c.expectClosed()
	var out []wire.ReplyHeader
	for len(b) >= 4 {
		n := int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3])
		require.LessOrEqual(c.t, 4+n, len(b), "truncated frame before close")
		var h wire.ReplyHeader
		require.NoError(c.t, h.Decode(wire.NewDecoder(b[4:4+n])))
		out = append(out, h)
		b = b[4+n:]
	}
	require.Empty(c.t, b, "partial frame before close")
	return out
}

var healthSeq atomic.Int64

// requireHealthy checks that a new client can still use srv normally.
func requireHealthy(t testing.TB, srv *zktest.Server) {
	t.Helper()
	c := connectRaw(t, srv)
	path := fmt.Sprintf("/health-%d", healthSeq.Add(1))
	require.Equal(t, wire.OK, c.call(wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte("ok"),
		ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeral}, &wire.CreateResponse{}))
	var got wire.GetDataResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: path}, &got))
	require.Equal(t, []byte("ok"), got.Data)
	require.Equal(t, wire.OK, c.call(wire.OpDelete, &wire.DeleteRequest{Path: path, Version: -1}, nil))
	c.send(wire.OpCloseSession, nil)
	hs := c.expectClosedWithReplies()
	require.Len(t, hs, 1)
	require.Equal(t, wire.OK, hs[0].Err)
}

// mntr returns the server's mntr values as a map.
func mntr(srv *zktest.Server) map[string]string {
	out := map[string]string{}
	for _, kv := range srv.Server().MonitorValues() {
		out[kv[0]] = kv[1]
	}
	return out
}
