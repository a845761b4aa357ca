package server

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/session"
	"github.com/stretchr/testify/require"
)

// attachServer starts a standalone server with cfg adjusted by adjust.
func attachServer(t *testing.T, adjust func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if adjust != nil {
		adjust(&cfg)
	}
	srv, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { srv.Close() })
	return srv
}

// connectRaw opens a session (id 0) or re-attaches one and returns the
// answer.
func connectRaw(t *testing.T, srv *Server, id int64, passwd []byte) wire.ConnectResponse {
	t.Helper()
	_, _, cr := handshakeRaw(t, srv.Addr().String(), id, passwd)
	return cr
}

// handshakeRaw dials addr, opens a session (id 0) or re-attaches one, and
// returns the connection, its reader and the answer.
func handshakeRaw(t *testing.T, addr string, id int64, passwd []byte) (net.Conn, *bufio.Reader, wire.ConnectResponse) {
	t.Helper()
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	nc, br := dialRaw(t, addr)
	send(t, nc, &wire.ConnectRequest{TimeOut: 30000, SessionID: id, Passwd: passwd})
	var cr wire.ConnectResponse
	readRecord(t, br, &cr)
	return nc, br, cr
}

// A re-attach of a session the leader is expiring (the tracker handed it
// out, or dropped it, and the closeSession is on its way) is answered as
// expired, as ZooKeeper's leader refuses to re-validate a closing session;
// a live one is re-attached and its timeout starts afresh.
func TestReattachOfAnExpiringSessionIsExpired(t *testing.T) {
	srv := attachServer(t, nil)
	live := connectRaw(t, srv, 0, nil)
	require.NotZero(t, live.SessionID)
	again := connectRaw(t, srv, live.SessionID, live.Passwd)
	require.Equal(t, live.SessionID, again.SessionID)
	require.NotZero(t, again.TimeOut)

	dying := connectRaw(t, srv, 0, nil)
	srv.tracker.Remove(dying.SessionID) // as the expirer does before it proposes the expiry
	_, inFSM := srv.fsm.Session(dying.SessionID)
	require.True(t, inFSM, "the expiry is not applied yet")
	cr := connectRaw(t, srv, dying.SessionID, dying.Passwd)
	require.Zero(t, cr.TimeOut, "a session being expired was re-attached")
	require.Zero(t, cr.SessionID)
}

// An expiry applied after the handshake checked the session, but before
// it bound the connection, finds no connection to close: the handshake
// checks again once bound, and answers expired.
func TestReattachRacingAnExpiryIsExpired(t *testing.T) {
	var srv *Server
	var target atomic.Int64
	srv = attachServer(t, func(cfg *Config) {
		cfg.hooks = &testHooks{beforeBind: func(id int64) {
			if id == target.Load() {
				require.NoError(t, srv.ExpireSession(id))
			}
		}}
	})
	s := connectRaw(t, srv, 0, nil)
	target.Store(s.SessionID)
	cr := connectRaw(t, srv, s.SessionID, s.Passwd)
	require.Zero(t, cr.TimeOut, "the re-attach of a session expired meanwhile succeeded")
}

// The leader takes a touch from any node, as ZooKeeper takes its learners'
// pings: after a late attach from a node the client has left, the touches
// from the node it uses still keep the session alive.
func TestLeaderTakesTouchesFromAnyNode(t *testing.T) {
	clock := session.NewManualClock(time.Unix(1000, 0))
	srv := attachServer(t, func(cfg *Config) { cfg.Clock = clock })
	res, err := srv.apply(&fsm.Command{Type: fsm.CmdCreateSession, Timeout: 4000})
	require.NoError(t, err)
	id := res.Session
	deadline := func() time.Time {
		for _, si := range srv.tracker.Sessions() {
			if si.ID == id {
				return si.Deadline
			}
		}
		t.Fatalf("session 0x%x not tracked", id)
		return time.Time{}
	}
	before := deadline()
	srv.setOwner(id, "a node the client left")
	clock.Advance(3 * time.Second)
	srv.touchFromPeer("the node the client uses", []int64{id})
	require.True(t, deadline().After(before), "the touch was ignored: the session expires at %v", before)
}

// closeSession is accepted from any node, as ZooKeeper's leader does not
// check the owner of a session's last request.
func TestCloseSessionIsNotOwnerChecked(t *testing.T) {
	srv := attachServer(t, nil)
	res, err := srv.apply(&fsm.Command{Type: fsm.CmdCreateSession, Timeout: 4000})
	require.NoError(t, err)
	id := res.Session
	srv.setOwner(id, "another node")
	_, err = srv.apply(&fsm.Command{Type: fsm.CmdOps, Session: id,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/moved", ACL: wire.OpenACLUnsafe}}})
	require.ErrorIs(t, err, wire.ErrSessionMoved, "a write is owner-checked")
	_, err = srv.apply(&fsm.Command{Type: fsm.CmdCloseSession, Session: id})
	require.NoError(t, err)
	_, live := srv.fsm.Session(id)
	require.False(t, live)
	srv.mu.Lock()
	require.NotContains(t, srv.owners, id, "a closed session's owner is forgotten")
	srv.mu.Unlock()
}

// After a leader change no node is known to serve a session: the first to
// write for it becomes its owner, and a write from another gets
// SessionMoved, as ZooKeeper's checkSession does.
func TestFirstWriterClaimsAnUnownedSession(t *testing.T) {
	srv := attachServer(t, nil)
	res, err := srv.apply(&fsm.Command{Type: fsm.CmdCreateSession, Timeout: 4000})
	require.NoError(t, err)
	id := res.Session
	srv.mu.Lock()
	delete(srv.owners, id) // as on a new leader
	srv.mu.Unlock()
	require.True(t, srv.ownedBy(id, "a"), "the first writer claims it")
	require.True(t, srv.ownedBy(id, "a"))
	require.False(t, srv.ownedBy(id, "b"), "another node's write is SessionMoved")
}

// A write on a connection whose session has moved to another node gets no
// reply: the connection closes, and the client sees ConnectionLoss, as
// ZooKeeper's FinalRequestProcessor closes it on SessionMovedException
// (ZOOKEEPER-710).
func TestSessionMovedClosesWithoutReply(t *testing.T) {
	srv := attachServer(t, nil)
	nc, br, cr := handshakeRaw(t, srv.Addr().String(), 0, nil)
	require.NotZero(t, cr.SessionID)
	srv.setOwner(cr.SessionID, "another node")
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/moved", ACL: wire.OpenACLUnsafe})
	f, err := wire.ReadFrame(br, nil, 1<<20)
	require.ErrorIs(t, err, io.EOF, "a reply came instead of the close: % x", f)
	_, _, err = srv.fsm.Get("/moved")
	require.ErrorIs(t, err, wire.ErrNoNode)
}

// A node's expirer proposes only to its own Raft. A leader deposed while
// its tracker fires has learned the new term; an expiry it forwarded to
// the new leader would carry that term and apply, although the new leader
// gave the session a fresh timeout.
func TestExpiryFromANonLeaderIsNotForwarded(t *testing.T) {
	fol, nc, br, cr := followerSession(t)
	fol.expire(fol.node.r.CurrentTerm(), []int64{cr.SessionID})
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/alive", ACL: wire.OpenACLUnsafe})
	var h wire.ReplyHeader
	readRecord(t, br, &h)
	require.Equal(t, wire.OK, h.Err, "the follower's expiry was applied")
}

// A re-attach that negotiates another timeout re-times the session, as
// ZooKeeper's revalidateSession does: the server expires it by the
// timeout its client was told, here 30 s instead of the 4 s it was
// created with.
func TestReattachRetimesTheSession(t *testing.T) {
	clock := session.NewManualClock(time.Unix(1000, 0))
	srv := attachServer(t, func(cfg *Config) {
		cfg.Clock = clock
		cfg.MinSessionTimeout, cfg.MaxSessionTimeout = 4*time.Second, 40*time.Second
	})
	res, err := srv.apply(&fsm.Command{Type: fsm.CmdCreateSession, Timeout: 4000})
	require.NoError(t, err)
	again := connectRaw(t, srv, res.Session, res.Passwd) // asks for 30000
	require.Equal(t, int32(30000), again.TimeOut)
	clock.Advance(12 * time.Second)
	require.Eventually(t, srv.ExpiriesSettled, 10*time.Second, time.Millisecond)
	info, live := srv.fsm.Session(res.Session)
	require.True(t, live, "expired after 12 s of a 30 s timeout")
	require.Equal(t, int32(30000), info.Timeout, "the replicated timeout (a new leader expires by it)")
}
