package integration_test

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/session"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// Section 4: sessions.

func TestAbandonedSessionExpires(t *testing.T) {
	t.Parallel()
	clock := session.NewManualClock(time.Now())
	srv := startServer(t, zktest.WithManualClock(clock), zktest.WithSessionTimeouts(200*time.Millisecond, time.Minute))
	// The watcher's session is long; the abandoned one is 2s.
	w := connectWith(t, srv, 30*time.Second, nil)

	c := dialRaw(t, srv.Addr())
	resp, err := c.handshake(wire.ConnectRequest{TimeOut: 2000, Passwd: make([]byte, wire.PasswordSize)})
	require.NoError(t, err)
	require.EqualValues(t, 2000, resp.TimeOut)
	c.create("/eph", nil, wire.ModeEphemeral)
	require.NoError(t, c.nc.Close()) // abandoned: no closeSession

	_, _, ch, err := w.GetW("/eph")
	require.NoError(t, err)
	srv.Advance(1500 * time.Millisecond)
	require.Len(t, srv.Sessions(), 2, "within its timeout the session lives on")
	srv.Advance(time.Second)
	e := waitEvent(t, ch)
	require.Equal(t, zk.EventNodeDeleted, e.Type)
	require.Equal(t, "/eph", e.Path)
	eventually(t, waitTimeout, func() bool { return len(srv.Sessions()) == 1 })
	require.Equal(t, w.SessionID(), srv.Sessions()[0].ID)

	// Its id and password are now refused.
	r := dialRaw(t, srv.Addr())
	resp2, err := r.handshake(wire.ConnectRequest{TimeOut: 2000, SessionID: resp.SessionID, Passwd: resp.Passwd})
	require.NoError(t, err)
	require.Zero(t, resp2.TimeOut)
	require.Zero(t, resp2.SessionID)
}

func TestReconnectKeepsSessionGoZookeeper(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	id := c.SessionID()
	_, err := c.Create("/eph", []byte("mine"), zk.FlagEphemeral, openACL)
	require.NoError(t, err)
	srv.DropConnections()
	waitState(t, c.ev, zk.StateDisconnected)
	waitState(t, c.ev, zk.StateHasSession)
	require.Equal(t, id, c.SessionID())
	data, st, err := c.Get("/eph")
	require.NoError(t, err)
	require.Equal(t, []byte("mine"), data)
	require.Equal(t, id, st.EphemeralOwner)
}

func TestReconnectSameSessionRaw(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := connectRaw(t, srv)
	a.create("/eph", nil, wire.ModeEphemeral)

	b := dialRaw(t, srv.Addr())
	resp, err := b.handshake(wire.ConnectRequest{TimeOut: 10000, SessionID: a.resp.SessionID, Passwd: a.resp.Passwd})
	require.NoError(t, err)
	require.Equal(t, a.resp.SessionID, resp.SessionID)
	require.Equal(t, a.resp.Passwd, resp.Passwd)
	require.Equal(t, a.resp.TimeOut, resp.TimeOut)
	a.expectClosed() // the older connection of the session is closed

	var st wire.StatResponse
	require.Equal(t, wire.OK, b.call(wire.OpExists, &wire.PathWatchRequest{Path: "/eph"}, &st))
	require.Equal(t, a.resp.SessionID, st.Stat.EphemeralOwner)
}

func TestWrongPasswordAnswersExpired(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	a := connectRaw(t, srv)
	bad := append([]byte(nil), a.resp.Passwd...)
	bad[0] ^= 0xff
	cases := []struct {
		name     string
		id       int64
		passwd   []byte
		readOnly bool // send the readOnly byte: the answer has it too
	}{
		{"wrong password", a.resp.SessionID, bad, false},
		{"wrong password, readOnly byte", a.resp.SessionID, bad, true},
		{"empty password", a.resp.SessionID, make([]byte, wire.PasswordSize), false},
		{"unknown session", a.resp.SessionID + 1000, a.resp.Passwd, false},
	}
	for _, tc := range cases {
		c := dialRaw(t, srv.Addr())
		c.write(encodeFrame(nil, &wire.ConnectRequest{TimeOut: 10000, SessionID: tc.id, Passwd: tc.passwd,
			HasReadOnly: tc.readOnly}))
		frame, err := c.readFrame()
		require.NoError(t, err, tc.name)
		var resp wire.ConnectResponse
		require.NoError(t, resp.Decode(wire.NewDecoder(frame)), tc.name)
		require.Equal(t, tc.readOnly, resp.HasReadOnly, tc.name)
		require.Zero(t, resp.TimeOut, tc.name)
		require.Zero(t, resp.SessionID, tc.name)
		require.Equal(t, make([]byte, wire.PasswordSize), resp.Passwd, tc.name)
		require.Empty(t, c.expectClosed(), "%s: closed after the answer", tc.name)
	}
	// The real owner was not disturbed.
	a.create("/still-mine", nil, wire.ModeEphemeral)
}

func TestClientAheadOfServerIsClosedWithoutReply(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	last := srv.Server().FSM().LastZxid()
	c := dialRaw(t, srv.Addr())
	c.write(encodeFrame(nil, &wire.ConnectRequest{LastZxidSeen: last + 1000, TimeOut: 10000,
		Passwd: make([]byte, wire.PasswordSize)}))
	require.Empty(t, c.expectClosed(), "no ConnectResponse")
	require.Empty(t, srv.Sessions(), "no session was created")

	// A client exactly up to date is accepted.
	c = dialRaw(t, srv.Addr())
	resp, err := c.handshake(wire.ConnectRequest{LastZxidSeen: srv.Server().FSM().LastZxid(), TimeOut: 10000,
		Passwd: make([]byte, wire.PasswordSize)})
	require.NoError(t, err)
	require.NotZero(t, resp.SessionID)
}

// gatedDialer lets a go-zookeeper client connect only while the gate is
// open, so a test can make changes while the client is surely away.
type gatedDialer struct {
	open chan struct{} // one token per allowed dial
	ctx  context.Context
}

func newGatedDialer(t *testing.T) *gatedDialer {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	g := &gatedDialer{open: make(chan struct{}, 1), ctx: ctx}
	g.allow()
	return g
}

func (g *gatedDialer) allow() { g.open <- struct{}{} }

func (g *gatedDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	select {
	case <-g.open:
		return net.DialTimeout(network, addr, timeout)
	case <-g.ctx.Done():
		return nil, g.ctx.Err()
	}
}

// TestSetWatchesRestoreRules: watches set before a disconnect are restored
// with SetWatches on reconnect; changes made while away fire at once
// (reference §2.4 restore rules).
func TestSetWatchesRestoreRules(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	other := connect(t, srv)
	for _, p := range []string{"/changed", "/deleted", "/unchanged", "/kids", "/kids/a"} {
		mustCreate(t, other, p, nil)
	}

	gate := newGatedDialer(t)
	c := connectWith(t, srv, 10*time.Second, gate.dial)
	id := c.SessionID()
	_, _, changed, err := c.GetW("/changed")
	require.NoError(t, err)
	_, _, deleted, err := c.GetW("/deleted")
	require.NoError(t, err)
	_, _, unchanged, err := c.GetW("/unchanged")
	require.NoError(t, err)
	_, _, created, err := c.ExistsW("/created")
	require.NoError(t, err)
	_, _, kids, err := c.ChildrenW("/kids")
	require.NoError(t, err)
	_, _, stillMissing, err := c.ExistsW("/still-missing")
	require.NoError(t, err)

	srv.DropSession(id) // only this client's connection; other stays
	waitState(t, c.ev, zk.StateDisconnected)
	_, err = other.Set("/changed", []byte("new"), -1)
	require.NoError(t, err)
	require.NoError(t, other.Delete("/deleted", -1))
	mustCreate(t, other, "/created", nil)
	mustCreate(t, other, "/kids/b", nil)
	gate.allow()
	waitState(t, c.ev, zk.StateHasSession)
	require.Equal(t, id, c.SessionID())

	require.Equal(t, zk.EventNodeDataChanged, waitEvent(t, changed).Type)
	require.Equal(t, zk.EventNodeDeleted, waitEvent(t, deleted).Type)
	require.Equal(t, zk.EventNodeCreated, waitEvent(t, created).Type)
	require.Equal(t, zk.EventNodeChildrenChanged, waitEvent(t, kids).Type)

	// Watches on untouched nodes were re-registered, not fired.
	settle(t, c)
	select {
	case e := <-unchanged:
		require.FailNow(t, "unchanged node fired", "%+v", e)
	case e := <-stillMissing:
		require.FailNow(t, "missing node fired", "%+v", e)
	default:
	}
	_, err = other.Set("/unchanged", []byte("now"), -1)
	require.NoError(t, err)
	require.Equal(t, zk.EventNodeDataChanged, waitEvent(t, unchanged).Type)
	mustCreate(t, other, "/still-missing", nil)
	require.Equal(t, zk.EventNodeCreated, waitEvent(t, stillMissing).Type)
}

// TestSetWatchesRaw sends SetWatches and SetWatches2 by hand: the
// immediate events, and persistent watches restored unconditionally.
func TestSetWatchesRaw(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w := connectRaw(t, srv)
	w.create("/d", nil, wire.ModePersistent)
	w.create("/p", nil, wire.ModePersistent)
	rel := srv.Server().FSM().LastZxid()
	w.setData("/d", []byte("changed after rel"))

	r := connectRaw(t, srv)
	code := r.call(wire.OpSetWatches2, &wire.SetWatches2{RelativeZxid: rel,
		DataWatches:                []string{"/d", "/gone"},
		ExistWatches:               []string{"/p", "/nope"},
		ChildWatches:               []string{"/p"},
		PersistentWatches:          []string{"/pers"},
		PersistentRecursiveWatches: []string{"/rec"},
	}, nil)
	require.Equal(t, wire.OK, code)
	require.Equal(t, []wire.WatcherEvent{
		ev(wire.EventNodeDataChanged, "/d"),
		ev(wire.EventNodeDeleted, "/gone"),
		ev(wire.EventNodeCreated, "/p"),
	}, r.barrier())

	w.create("/nope", nil, wire.ModePersistent)
	w.create("/p/x", nil, wire.ModePersistent)
	w.create("/pers", nil, wire.ModePersistent)
	w.create("/rec", nil, wire.ModePersistent)
	w.create("/rec/y", nil, wire.ModePersistent)
	w.setData("/pers", []byte("1"))
	w.setData("/pers", []byte("2"))
	require.Equal(t, []wire.WatcherEvent{
		ev(wire.EventNodeCreated, "/nope"),
		ev(wire.EventNodeChildrenChanged, "/p"),
		ev(wire.EventNodeCreated, "/pers"),
		ev(wire.EventNodeCreated, "/rec"),
		ev(wire.EventNodeCreated, "/rec/y"),
		ev(wire.EventNodeDataChanged, "/pers"),
		ev(wire.EventNodeDataChanged, "/pers"),
	}, r.barrier())
}
