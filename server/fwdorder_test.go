package server

import (
	"bufio"
	"bytes"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// TestClusterFollowerKeepsPipelinedWritesInOrder sends a create and then
// setData calls, each expecting the version the previous one made, through
// a follower in one burst without waiting for replies. ZooKeeper applies a
// client's requests in the order it sent them, so every one must succeed;
// a follower or leader that reordered forwarded writes would answer some
// with BadVersion (or NoNode).
func TestClusterFollowerKeepsPipelinedWritesInOrder(t *testing.T) {
	fol, nc, br, _ := followerSession(t)

	const sets = 200
	var burst bytes.Buffer
	burst.Write(frame(&wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/ordered", Data: []byte("0"), ACL: wire.OpenACLUnsafe}))
	for v := range sets {
		burst.Write(frame(&wire.RequestHeader{Xid: int32(v + 2), Op: wire.OpSetData},
			&wire.SetDataRequest{Path: "/ordered", Data: []byte("x"), Version: int32(v)}))
	}
	_, err := nc.Write(burst.Bytes())
	require.NoError(t, err)
	for i := range sets + 1 {
		var h wire.ReplyHeader
		readRecord(t, br, &h)
		require.Equal(t, int32(i+1), h.Xid, "replies out of order")
		require.Equal(t, wire.OK, h.Err, "request %d (xid %d) was applied out of order", i, h.Xid)
	}
	st, ok := fol.FSM().Exists("/ordered")
	require.True(t, ok)
	require.EqualValues(t, sets, st.Version)
}

// followerSession starts a 3-node cluster and opens a session on a
// follower over a raw connection.
func followerSession(t *testing.T) (*Server, net.Conn, *bufio.Reader, wire.ConnectResponse) {
	t.Helper()
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	fol := servers[(l+1)%len(servers)]
	require.Eventually(t, func() bool { return fol.Leader() != "" }, 10*time.Second, time.Millisecond)
	nc, br, cr := handshakeRaw(t, fol.Addr().String(), 0, nil)
	require.NotZero(t, cr.SessionID)
	return fol, nc, br, cr
}

// laneForwarder returns a forwarder whose leader connection is one end of
// a pipe (nothing reads it).
func laneForwarder(t *testing.T) (*forwarder, net.Conn) {
	t.Helper()
	c, other := net.Pipe()
	t.Cleanup(func() { c.Close(); other.Close() })
	f := newForwarder(nil)
	f.conn = c
	return f, c
}

// answer answers call as the leader connection's readLoop does.
func answer(f *forwarder, call *fwdCall, resp *fwdResponse) {
	resp.ID = call.id
	f.mu.Lock()
	delete(f.pending, call.id)
	f.mu.Unlock()
	call.ch <- resp
}

func TestFwdLaneStaysOnOneLeaderConnection(t *testing.T) {
	f, c1 := laneForwarder(t)
	var lane fwdLane
	first, err := f.register(c1, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.NoError(t, err)
	_, err = f.register(c1, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.NoError(t, err, "a second write on the same leader connection")
	require.Equal(t, 2, lane.inflight)
	require.Same(t, c1, lane.route)

	// The leader connection changes while the lane's writes are unanswered.
	c2, other := net.Pipe()
	defer c2.Close()
	defer other.Close()
	f.mu.Lock()
	f.conn = c2
	f.mu.Unlock()
	_, err = f.register(c2, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.ErrorIs(t, err, errLaneBroken, "a write sent on c2 could overtake those on c1")
	require.True(t, lane.broken)

	// Another connection's lane, with nothing in flight, uses c2.
	var other2 fwdLane
	_, err = f.register(c2, &fwdRequest{Kind: fwdApply}, true, &other2)
	require.NoError(t, err)
	// An answer does not mend a broken lane.
	answer(f, first, &fwdResponse{Index: 1})
	_, err = f.wait(first, time.Second)
	require.NoError(t, err)
	_, err = f.register(c2, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.ErrorIs(t, err, errLaneBroken)
}

func TestFwdLaneBreaksWhenAWritesFateIsUnknown(t *testing.T) {
	for name, lose := range map[string]func(f *forwarder, c net.Conn, call *fwdCall){
		"leader connection lost": func(f *forwarder, c net.Conn, call *fwdCall) {
			f.mu.Lock()
			f.failLocked(c)
			f.mu.Unlock()
			_, err := f.wait(call, time.Second)
			require.Error(t, err)
		},
		"snapshot installed": func(f *forwarder, _ net.Conn, call *fwdCall) {
			f.failTagged()
			_, err := f.wait(call, time.Second)
			require.Error(t, err)
		},
		"timed out": func(f *forwarder, _ net.Conn, call *fwdCall) {
			_, err := f.wait(call, time.Millisecond)
			require.ErrorContains(t, err, "did not answer")
		},
		"leader error": func(f *forwarder, _ net.Conn, call *fwdCall) {
			answer(f, call, &fwdResponse{Err: raft.ErrLeadershipLost.Error()})
			_, err := f.wait(call, time.Second)
			require.Error(t, err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			f, c := laneForwarder(t)
			var lane fwdLane
			call, err := f.register(c, &fwdRequest{Kind: fwdApply}, true, &lane)
			require.NoError(t, err)
			lose(f, c, call)
			f.mu.Lock()
			require.True(t, lane.broken)
			require.Zero(t, lane.inflight)
			require.Empty(t, f.pending)
			f.mu.Unlock()
		})
	}
}

func TestFwdLaneSurvivesDefiniteAnswers(t *testing.T) {
	f, c := laneForwarder(t)
	var lane fwdLane
	for i, resp := range []*fwdResponse{
		{Index: 3, Result: &fsm.Result{}}, // applied
		{Code: wire.ErrSessionMoved},      // refused before proposing
		{Index: 4, Result: &fsm.Result{}},
	} {
		call, err := f.register(c, &fwdRequest{Kind: fwdApply}, true, &lane)
		require.NoError(t, err, "write %d", i)
		answer(f, call, resp)
		_, _ = f.wait(call, time.Second)
	}
	require.False(t, lane.broken)
	require.Zero(t, lane.inflight)
}

// A connection's writes stay on one route while any is unanswered: this
// node's own Raft (it leads) or one leader connection.
func TestFwdLaneSwitchesRouteOnlyWhenIdle(t *testing.T) {
	f, c := laneForwarder(t)
	var lane fwdLane
	applied := errFuture{}                                               // a local write that succeeded
	f.proposeLocal(&lane, 1, func() raft.ApplyFuture { return applied }) // unanswered
	require.Equal(t, 1, lane.inflight)
	_, err := f.register(c, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.ErrorIs(t, err, errLaneBroken, "a forwarded write could overtake the local one")

	var idle fwdLane
	lf := f.proposeLocal(&idle, 1, func() raft.ApplyFuture { return applied })
	require.NoError(t, lf.Error())
	require.NoError(t, lf.Error(), "asked twice, counted once")
	require.Zero(t, idle.inflight)
	call, err := f.register(c, &fwdRequest{Kind: fwdApply}, true, &idle)
	require.NoError(t, err, "nothing in flight: the route may change")
	refused := f.proposeLocal(&idle, 1, func() raft.ApplyFuture { t.Fatal("proposed"); return nil })
	require.ErrorIs(t, refused.Error(), errLaneBroken, "a local write could overtake the forwarded one")
	answer(f, call, &fwdResponse{Index: 1})
	_, _ = f.wait(call, time.Second)

	var failing fwdLane
	lf = f.proposeLocal(&failing, 1, func() raft.ApplyFuture { return errFuture{raft.ErrLeadershipLost} })
	require.ErrorIs(t, lf.Error(), raft.ErrLeadershipLost)
	require.True(t, failing.broken, "a local write lost with the leadership breaks the lane")
}
