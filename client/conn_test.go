package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
)

// Unit tests against fakeServer: no ZooKeeper needed.

func TestPipeliningRepliesInOrder(t *testing.T) {
	const n = 64
	s := newFakeServer(t)
	for i := range n {
		s.create(fmt.Sprintf("/p%d", i), []byte(fmt.Sprint(i)), ModePersistent)
	}
	// Hold every getData until all n are in flight, then answer them in
	// order: this only completes if the client pipelines.
	type held struct {
		xid  int32
		path string
	}
	var mu sync.Mutex
	var queue []held
	s.hook = func(fc *fakeConn, h wire.RequestHeader, body wire.Record) bool {
		if h.Op != wire.OpGetData {
			return false
		}
		mu.Lock()
		defer mu.Unlock()
		queue = append(queue, held{h.Xid, pathOf(body)})
		if len(queue) < n {
			return true
		}
		for _, q := range queue {
			code, resp := s.apply(wire.OpGetData, &wire.PathWatchRequest{Path: q.path})
			fc.reply(q.xid, code, resp)
		}
		queue = nil
		return true
	}
	c := connectTest(t, []string{s.addr()})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			data, _, err := c.Get(ctx, fmt.Sprintf("/p%d", i))
			if err == nil && string(data) != fmt.Sprint(i) {
				err = fmt.Errorf("got data %q", data)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "get %d", i)
	}
	assert.Equal(t, 1, s.numConns())
}

func TestCancelKeepsReplyOrder(t *testing.T) {
	s := newFakeServer(t)
	s.create("/slow", []byte("slow"), ModePersistent)
	s.create("/fast", []byte("fast"), ModePersistent)
	seen := make(chan struct{}, 1)
	release := make(chan struct{})
	s.hook = func(fc *fakeConn, h wire.RequestHeader, body wire.Record) bool {
		if h.Op == wire.OpGetData && pathOf(body) == "/slow" {
			seen <- struct{}{}
			select { // blocks this connection's reader: later requests wait
			case <-release:
			case <-t.Context().Done():
			}
			code, resp := s.apply(h.Op, body)
			fc.reply(h.Xid, code, resp)
			return true
		}
		return false
	}
	c := connectTest(t, []string{s.addr()})

	ctx, cancel := context.WithCancel(testCtx(t))
	slowErr := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "/slow")
		slowErr <- err
	}()
	recv(t, seen)
	start := time.Now()
	cancel()
	require.ErrorIs(t, recv(t, slowErr), context.Canceled)
	assert.Less(t, time.Since(start), time.Second, "cancel must return promptly")

	fast := make(chan []byte, 1)
	go func() {
		data, _, err := c.Get(testCtx(t), "/fast")
		assert.NoError(t, err)
		fast <- data
	}()
	close(release) // /slow's reply arrives first and is discarded
	assert.Equal(t, "fast", string(recv(t, fast)))
	assert.Equal(t, StateConnected, c.State())
	assert.Equal(t, 1, s.numConns())

	// A ctx that is already done never sends anything.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	_, _, err := c.Get(done, "/fast")
	require.ErrorIs(t, err, context.Canceled)
}

func TestOutOfOrderXidIsConnectionLoss(t *testing.T) {
	s := newFakeServer(t)
	s.create("/x", []byte("x"), ModePersistent)
	heldSeen := make(chan struct{}, 1)
	s.hook = func(fc *fakeConn, h wire.RequestHeader, body wire.Record) bool {
		switch pathOf(body) {
		case "/held":
			heldSeen <- struct{}{}
			return true // never answered
		case "/bad":
			fc.reply(h.Xid+1000, wire.OK, &wire.GetDataResponse{})
			return true
		}
		return false
	}
	c := connectTest(t, []string{s.addr()})
	drainStates(c)
	ctx := testCtx(t)
	heldErr := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "/held")
		heldErr <- err
	}()
	recv(t, heldSeen)
	_, _, err := c.Get(ctx, "/bad")
	require.ErrorIs(t, err, ErrConnectionLoss)
	require.ErrorIs(t, recv(t, heldErr), ErrConnectionLoss)

	waitFor(t, "reconnect", func() error {
		if s.numConns() < 2 || c.State() != StateConnected {
			return fmt.Errorf("conns %d state %v", s.numConns(), c.State())
		}
		return nil
	})
	data, _, err := c.Get(ctx, "/x")
	require.NoError(t, err)
	assert.Equal(t, "x", string(data))
	assert.Equal(t, []State{StateDisconnected, StateConnected}, drainStates(c))
	assert.Equal(t, s.connects[0].SessionID, int64(0))
	assert.Equal(t, c.SessionID(), s.connects[1].SessionID, "reconnect keeps the session")
}

func TestSetWatchesBatching(t *testing.T) {
	const maxFrame = 300
	s := newFakeServer(t)
	c := connectTest(t, []string{s.addr()}, WithMaxFrame(maxFrame))
	ctx := testCtx(t)
	var want watchLists
	long := strings.Repeat("n", 30)
	for i := range 20 {
		p := fmt.Sprintf("/d-%s-%02d", long, i)
		s.create(p, nil, ModePersistent)
		_, _, _, err := c.GetW(ctx, p)
		require.NoError(t, err)
		want[watchData] = append(want[watchData], p)
	}
	for i := range 10 {
		p := fmt.Sprintf("/e-%s-%02d", long, i)
		_, ok, _, err := c.ExistsW(ctx, p)
		require.NoError(t, err)
		require.False(t, ok)
		want[watchExist] = append(want[watchExist], p)
	}
	for i := range 10 {
		p := fmt.Sprintf("/c-%s-%02d", long, i)
		s.create(p, nil, ModePersistent)
		_, _, _, err := c.ChildrenW(ctx, p)
		require.NoError(t, err)
		want[watchChild] = append(want[watchChild], p)
	}
	for i := range 4 {
		p := fmt.Sprintf("/p-%s-%02d", long, i)
		_, err := c.AddWatch(ctx, p, i%2 == 1)
		require.NoError(t, err)
		want[3+i%2] = append(want[3+i%2], p)
	}
	zxid := c.lastZxid.Load()
	s.dropAll()

	var got watchLists
	waitFor(t, "all watches restored", func() error {
		s.mu.Lock()
		defer s.mu.Unlock()
		got = watchLists{}
		for _, sw := range s.setWatches {
			for k := range sw.lists {
				got[k] = append(got[k], sw.lists[k]...)
			}
		}
		n := 0
		for k := range got {
			n += len(got[k])
		}
		if n < 44 {
			return fmt.Errorf("%d paths restored so far", n)
		}
		return nil
	})
	for k := range want {
		assert.ElementsMatch(t, want[k], got[k], "list %d", k)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Greater(t, len(s.setWatches), 5, "must be split into several frames")
	for i, sw := range s.setWatches {
		assert.LessOrEqual(t, sw.frameSize, maxFrame, "frame %d", i)
		assert.Equal(t, zxid, sw.rel, "relativeZxid")
		hasPersistent := len(sw.lists[3])+len(sw.lists[4]) > 0
		if hasPersistent {
			assert.Equal(t, wire.OpSetWatches2, sw.op)
		} else {
			assert.Equal(t, wire.OpSetWatches, sw.op)
		}
	}
	// SetWatches frames come before any other request on the new conn.
	var afterReconnect []wire.OpCode
	for _, o := range s.ops {
		if o.conn == 1 && o.op != wire.OpPing {
			afterReconnect = append(afterReconnect, o.op)
		}
	}
	for _, op := range afterReconnect[:len(s.setWatches)] {
		assert.Contains(t, []wire.OpCode{wire.OpSetWatches, wire.OpSetWatches2}, op)
	}
}

func TestExpiryReportedOnce(t *testing.T) {
	s := newFakeServer(t)
	s.create("/w", nil, ModePersistent)
	c := connectTest(t, []string{s.addr()})
	ctx := testCtx(t)
	_, _, watch, err := c.GetW(ctx, "/w")
	require.NoError(t, err)
	pw, err := c.AddWatch(ctx, "/w", true)
	require.NoError(t, err)
	drainStates(c)

	s.expireSessions()
	s.dropAll()
	waitFor(t, "loop to stop", func() error {
		if !isLoopDone(c) {
			return errors.New("still running")
		}
		return nil
	})
	assert.Equal(t, StateExpired, c.State())
	assert.Equal(t, []State{StateDisconnected, StateExpired}, drainStates(c))
	assert.Equal(t, 2, s.numConns(), "no reconnect after expiry")

	ev := recv(t, watch)
	assert.Equal(t, EventNone, ev.Type)
	assert.ErrorIs(t, ev.Err, ErrSessionExpired)
	expectClosed(t, watch)

	assert.Equal(t, State(StateDisconnected), recv(t, pw.Events()).State)
	ev = recv(t, pw.Events())
	assert.ErrorIs(t, ev.Err, ErrSessionExpired)
	expectClosed(t, pw.Events())

	_, _, err = c.Get(ctx, "/w")
	assert.ErrorIs(t, err, ErrSessionExpired)
	require.NoError(t, c.Close())
	assert.Equal(t, []State{StateClosed}, drainStates(c))
	_, _, err = c.Get(ctx, "/w")
	assert.ErrorIs(t, err, ErrSessionExpired, "the cause stays the expiry")
}

func TestNewSessionOnExpiry(t *testing.T) {
	s := newFakeServer(t)
	s.create("/w", []byte("w"), ModePersistent)
	c := connectTest(t, []string{s.addr()}, WithNewSessionOnExpiry(true))
	ctx := testCtx(t)
	first := c.SessionID()
	_, _, watch, err := c.GetW(ctx, "/w")
	require.NoError(t, err)
	drainStates(c)

	s.expireSessions()
	s.dropAll()
	ev := recv(t, watch)
	assert.ErrorIs(t, ev.Err, ErrSessionExpired)
	waitFor(t, "new session", func() error {
		if c.State() != StateConnected || c.SessionID() == first || c.SessionID() == 0 {
			return fmt.Errorf("state %v session %#x", c.State(), c.SessionID())
		}
		return nil
	})
	assert.Equal(t, []State{StateDisconnected, StateExpired, StateConnected}, drainStates(c))
	data, _, err := c.Get(ctx, "/w")
	require.NoError(t, err)
	assert.Equal(t, "w", string(data))
}

func TestChrootPaths(t *testing.T) {
	s := newFakeServer(t)
	s.create("/app", nil, ModePersistent)
	c := connectTest(t, []string{s.addr()}, WithChroot("/app"))
	ctx := testCtx(t)

	p, _, err := c.Create(ctx, "/x", []byte("x"), ModePersistent, nil)
	require.NoError(t, err)
	assert.Equal(t, "/x", p)
	assert.Equal(t, "/app/x", s.opsOf(wire.OpCreate2)[0].path)

	p, _, err = c.Create(ctx, "/q-", nil, ModePersistentSequential, nil)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(p, "/q-"), p)
	assert.Equal(t, "/app/q-", s.opsOf(wire.OpCreate2)[1].path)

	children, _, err := c.Children(ctx, "/")
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"x", wire.BaseName(p)}, children)
	assert.Equal(t, "/app", s.opsOf(wire.OpGetChildren2)[0].path)

	_, _, watch, err := c.GetW(ctx, "/x")
	require.NoError(t, err)
	s.latestConn().notify(wire.EventNodeDataChanged, "/app/x")
	ev := recv(t, watch)
	assert.Equal(t, Event{Type: EventNodeDataChanged, State: StateConnected, Path: "/x"}, ev)

	_, _, watch, err = c.GetW(ctx, "/")
	require.NoError(t, err)
	s.latestConn().notify(wire.EventNodeDataChanged, "/app")
	assert.Equal(t, "/", recv(t, watch).Path)

	_, err = Connect(ctx, []string{s.addr()}, WithChroot("bad"))
	assert.ErrorIs(t, err, ErrBadArguments)
}

func TestProtectedCreateRecoversNode(t *testing.T) {
	for _, created := range []bool{true, false} {
		t.Run(fmt.Sprintf("created=%v", created), func(t *testing.T) {
			s := newFakeServer(t)
			s.create("/locks", nil, ModePersistent)
			var once sync.Once
			s.hook = func(fc *fakeConn, h wire.RequestHeader, body wire.Record) bool {
				if h.Op != wire.OpCreate2 {
					return false
				}
				handled := false
				once.Do(func() {
					r := body.(*wire.CreateRequest)
					if created {
						s.create(r.Path, r.Data, r.Flags)
					}
					_ = fc.nc.Close() // the reply is lost
					handled = true
				})
				return handled
			}
			c := connectTest(t, []string{s.addr()})
			p, err := c.CreateProtectedEphemeralSequential(testCtx(t), "/locks/lock-", []byte("me"), nil)
			require.NoError(t, err)
			children := s.children("/locks")
			require.Len(t, children, 1, "exactly one node")
			assert.Equal(t, "/locks/"+children[0], p)
			assert.Regexp(t, `^_c_[0-9a-f]{32}-lock-\d{10}$`, children[0])
			assert.Equal(t, 2, s.numConns())
			wantCreates := 1
			if !created {
				wantCreates = 2
			}
			assert.Len(t, s.opsOf(wire.OpCreate2), wantCreates)
		})
	}
}

func TestNoConnectReplyTriesNextServer(t *testing.T) {
	bad := newFakeServer(t)
	bad.dropConnect = true
	good := newFakeServer(t)
	c := connectTest(t, []string{bad.addr(), good.addr()}, WithShuffleHosts(false))
	assert.Equal(t, StateConnected, c.State())
	assert.Equal(t, 1, bad.numConns())
	assert.Equal(t, 1, good.numConns())
}

func TestHandshakeBytes(t *testing.T) {
	s := newFakeServer(t)
	connectTest(t, []string{s.addr()}, WithSessionTimeout(4*time.Second))
	connectTest(t, []string{s.addr()}, WithReadOnly(true))
	s.mu.Lock()
	defer s.mu.Unlock()
	require.Len(t, s.connects, 2)
	assert.True(t, s.connects[0].HasReadOnly, "45-byte ConnectRequest")
	assert.False(t, s.connects[0].ReadOnly)
	assert.Equal(t, int32(4000), s.connects[0].TimeOut)
	assert.Len(t, s.connects[0].Passwd, 16)
	assert.True(t, s.connects[1].ReadOnly)
}

func TestConnectContextTimeout(t *testing.T) {
	s := newFakeServer(t)
	s.silent = true
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Connect(ctx, []string{s.addr()})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 3*time.Second)
}

// An idle connection pings every third of the session timeout, but at
// least every 10 s, as the Java client (it used to wait 13 s with a 40 s
// timeout).
func TestPingInterval(t *testing.T) {
	require.Equal(t, 2*time.Second, pingInterval(6*time.Second))
	require.Equal(t, 10*time.Second, pingInterval(30*time.Second))
	require.Equal(t, MaxPingInterval, pingInterval(40*time.Second))
}

func TestPingsAndReadTimeout(t *testing.T) {
	s := newFakeServer(t)
	s.timeout = 600 // pings every 200ms, read timeout 400ms
	c := connectTest(t, []string{s.addr()})
	waitFor(t, "pings", func() error {
		if n := len(s.opsOf(wire.OpPing)); n < 3 {
			return fmt.Errorf("%d pings", n)
		}
		return nil
	})
	assert.Equal(t, 1, s.numConns())
	assert.Equal(t, StateConnected, c.State())

	// A server that stops answering is declared dead after the read
	// timeout, and the client reconnects.
	s.with(func(s *fakeServer) { s.swallowPings = true })
	waitFor(t, "reconnect after read timeout", func() error {
		if s.numConns() < 2 {
			return errors.New("still on the first connection")
		}
		return nil
	})
	s.with(func(s *fakeServer) { s.swallowPings = false })
	waitState(t, c, StateConnected)
}

func TestAddAuth(t *testing.T) {
	s := newFakeServer(t)
	c := connectTest(t, []string{s.addr()}, WithAuth("digest", []byte("a:b")))
	ctx := testCtx(t)
	require.NoError(t, c.AddAuth(ctx, "ip", []byte("x")))
	drainStates(c)

	err := c.AddAuth(ctx, "bad", []byte("x"))
	require.ErrorIs(t, err, ErrAuthFailed)
	waitFor(t, "reconnect", func() error {
		if s.numConns() < 2 || c.State() != StateConnected {
			return errors.New("not reconnected")
		}
		return nil
	})
	assert.Equal(t, []State{StateAuthFailed, StateDisconnected, StateConnected}, drainStates(c))

	// The accepted credentials are re-sent first on the new connection;
	// the rejected one is not.
	var second []string
	for _, o := range s.opsOf(wire.OpAuth) {
		if o.conn == 1 {
			second = append(second, o.path)
		}
	}
	assert.Equal(t, []string{"digest", "ip"}, second)
}

// TestAddAuthInFlightOnConnectionLoss: as the Java client's addAuthInfo,
// AddAuth remembers the credential when it is called, so one whose reply
// was lost with the connection is sent again on the next one (the call
// returns ErrConnectionLoss, as any request in flight). Calling it again
// adds no second copy.
func TestAddAuthInFlightOnConnectionLoss(t *testing.T) {
	s := newFakeServer(t)
	s.with(func(s *fakeServer) {
		s.hook = func(fc *fakeConn, h wire.RequestHeader, req wire.Record) bool {
			if h.Op == wire.OpAuth && fc.id == 0 {
				_ = fc.nc.Close() // lost before the reply
				return true
			}
			return false
		}
	})
	c := connectTest(t, []string{s.addr()})
	ctx := testCtx(t)
	require.ErrorIs(t, c.AddAuth(ctx, "digest", []byte("a:b")), ErrConnectionLoss)
	waitFor(t, "reconnect", func() error {
		if s.numConns() < 2 || c.State() != StateConnected {
			return errors.New("not reconnected")
		}
		return nil
	})
	authsOn := func(conn int) (out []string) {
		for _, o := range s.opsOf(wire.OpAuth) {
			if o.conn == conn {
				out = append(out, o.path)
			}
		}
		return out
	}
	assert.Equal(t, []string{"digest"}, authsOn(1), "the credential is sent on the new connection")

	require.NoError(t, c.AddAuth(ctx, "digest", []byte("a:b")))
	s.dropAll()
	waitFor(t, "second reconnect", func() error {
		if s.numConns() < 3 || c.State() != StateConnected {
			return errors.New("not reconnected")
		}
		return nil
	})
	assert.Equal(t, []string{"digest"}, authsOn(2), "one copy of a credential added twice")
}

func TestWithAuthRejected(t *testing.T) {
	s := newFakeServer(t)
	_, err := Connect(testCtx(t), []string{s.addr()}, WithAuth("bad", nil))
	require.ErrorIs(t, err, ErrAuthFailed)
}

func TestCloseSemantics(t *testing.T) {
	s := newFakeServer(t)
	s.create("/w", nil, ModePersistent)
	c := connectTest(t, []string{s.addr()})
	ctx := testCtx(t)
	_, _, watch, err := c.GetW(ctx, "/w")
	require.NoError(t, err)
	drainStates(c)

	require.NoError(t, c.Close())
	require.NoError(t, c.Close())
	assert.Len(t, s.opsOf(wire.OpCloseSession), 1)
	assert.Equal(t, StateClosed, c.State())
	ev := recv(t, watch)
	assert.Equal(t, EventNone, ev.Type)
	assert.ErrorIs(t, ev.Err, ErrClosed)
	assert.Equal(t, StateClosed, recv(t, c.Events()).State)
	expectClosed(t, c.Events())
	_, _, err = c.Get(ctx, "/w")
	assert.ErrorIs(t, err, ErrClosed)
	assert.Equal(t, 1, s.numConns(), "no reconnect after closeSession")
}

func TestOversizedRequest(t *testing.T) {
	s := newFakeServer(t)
	c := connectTest(t, []string{s.addr()}, WithMaxFrame(1024))
	_, _, err := c.Create(testCtx(t), "/big", make([]byte, 2048), ModePersistent, nil)
	assert.ErrorIs(t, err, ErrBadArguments)
	_, _, err = c.Get(testCtx(t), "bad-path")
	assert.ErrorIs(t, err, ErrBadArguments)
}

func TestStateCallbackAndEventsDropOldest(t *testing.T) {
	s := newFakeServer(t)
	var mu sync.Mutex
	var seen []State
	c := connectTest(t, []string{s.addr()}, WithStateCallback(func(st State) {
		mu.Lock()
		seen = append(seen, st)
		mu.Unlock()
	}))
	// Never read Events(): flapping the connection must not block.
	for i := range EventBufferSize {
		s.dropAll()
		waitFor(t, "reconnect", func() error {
			if s.numConns() < i+2 || c.State() != StateConnected {
				return errors.New("not yet")
			}
			return nil
		})
	}
	assert.Len(t, c.Events(), EventBufferSize)
	waitFor(t, "callbacks", func() error {
		mu.Lock()
		defer mu.Unlock()
		if len(seen) < 2+2*EventBufferSize {
			return fmt.Errorf("%d callbacks", len(seen))
		}
		return nil
	})
	mu.Lock()
	assert.Equal(t, []State{StateConnecting, StateConnected, StateDisconnected}, seen[:3])
	mu.Unlock()
}

// A protected create whose caller gives up while the create may have
// happened leaves no node behind: the node is found and deleted in the
// background, as Curator's FindAndDeleteProtectedNodeInBackground does.
func TestProtectedCreateGivenUpDeletesItsNode(t *testing.T) {
	s := newFakeServer(t)
	s.create("/locks", nil, ModePersistent)
	release := make(chan struct{})
	s.hook = func(fc *fakeConn, h wire.RequestHeader, body wire.Record) bool {
		if h.Op != wire.OpCreate2 {
			return false
		}
		r := body.(*wire.CreateRequest)
		p := s.create(r.Path, r.Data, r.Flags) // applied, answered late
		select {
		case <-release:
		case <-t.Context().Done():
		}
		fc.reply(h.Xid, wire.OK, &wire.Create2Response{Path: p})
		return true
	}
	c := connectTest(t, []string{s.addr()})
	ctx, cancel := context.WithTimeout(testCtx(t), 100*time.Millisecond)
	defer cancel()
	_, err := c.CreateProtectedEphemeralSequential(ctx, "/locks/lock-", nil, nil)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	close(release)
	waitFor(t, "the orphan deleted", func() error {
		if kids := s.children("/locks"); len(kids) != 0 {
			return fmt.Errorf("children %v", kids)
		}
		return nil
	})
}

// A server list may end with a chroot, as the Java client's connect
// string: "host:port/app" is host:port with WithChroot("/app").
func TestChrootInServerList(t *testing.T) {
	s := newFakeServer(t)
	s.create("/app", nil, ModePersistent)
	c := connectTest(t, []string{s.addr() + "/app"})
	p, _, err := c.Create(testCtx(t), "/x", nil, ModePersistent, nil)
	require.NoError(t, err)
	assert.Equal(t, "/x", p)
	assert.Equal(t, []string{"x"}, s.children("/app"))

	_, err = Connect(testCtx(t), []string{s.addr() + "/app"}, WithChroot("/other"))
	assert.ErrorIs(t, err, ErrBadArguments)
	_, err = Connect(testCtx(t), []string{s.addr() + "/a", s.addr() + "/b"})
	assert.ErrorIs(t, err, ErrBadArguments)
}
