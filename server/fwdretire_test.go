package server

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// When this node moves on to a new leader, the connection to the former
// one stops taking calls: its writes fail at once, but for a client
// connection's only write in flight, which, as its syncs and membership
// changes, gets the answer the former leader sends; it closes once they
// have them. (Every call on it failed: a reconfig that removed the
// leader, forwarded from here, was answered ConnectionLoss when the
// successor the removed leader hands over to became known before its
// answer was read.)
func TestRetiredLeaderConnectionAnswersItsSyncsAndMembershipChanges(t *testing.T) {
	f, c1, leaderEnd := pipedForwarder(t)
	var lane, loneLane fwdLane
	write, err := f.register(c1, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.NoError(t, err)
	next, err := f.register(c1, &fwdRequest{Kind: fwdApply}, true, &lane)
	require.NoError(t, err)
	lone, err := f.register(c1, &fwdRequest{Kind: fwdApply}, true, &loneLane)
	require.NoError(t, err)
	membership, err := f.register(c1, &fwdRequest{Kind: fwdMembership}, false, nil)
	require.NoError(t, err)
	syncCall, err := f.register(c1, &fwdRequest{Kind: fwdSync}, false, nil)
	require.NoError(t, err)
	readAndRetire(f, c1)
	for _, call := range []*fwdCall{write, next} {
		_, err = f.wait(call, time.Second)
		require.EqualError(t, err, errFwdConn.Error(), "a write on a former leader's connection, not its client's only one, fails at once")
	}
	require.True(t, lane.broken, "and its client's later writes with it")

	w := newFrameWriter(leaderEnd.c, time.Second)
	require.NoError(t, w.send(&fwdResponse{ID: lone.id, Index: 7}))
	resp, err := f.wait(lone, 5*time.Second)
	require.NoError(t, err, "a client's only write in flight gets the former leader's answer")
	require.EqualValues(t, 7, resp.Index)
	require.False(t, loneLane.broken)
	require.NoError(t, w.send(&fwdResponse{ID: membership.id}))
	_, err = f.wait(membership, 5*time.Second)
	require.NoError(t, err, "the membership change gets the former leader's answer")
	require.NoError(t, w.send(&fwdResponse{ID: syncCall.id, Index: 42}))
	resp, err = f.wait(syncCall, 5*time.Second)
	require.NoError(t, err)
	require.EqualValues(t, 42, resp.Index)
	select {
	case <-leaderEnd.closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the former leader's connection stays open after its last answer")
	}
}

// A call registered on a connection that is retired before it is sent is
// not sent there: it fails, and the answers the connection waits for
// still come.
func TestCallNotSentOnARetiredConnection(t *testing.T) {
	f, c1, leaderEnd := pipedForwarder(t)
	f.w = newFrameWriter(c1, time.Second)
	syncCall, err := f.register(c1, &fwdRequest{Kind: fwdSync}, false, nil)
	require.NoError(t, err)
	late, err := f.register(c1, &fwdRequest{Kind: fwdSync}, false, nil)
	require.NoError(t, err)
	w := f.w
	readAndRetire(f, c1)
	require.ErrorIs(t, w.send(&fwdRequest{Kind: fwdSync, ID: late.id}), errFwdRetired)
	f.mu.Lock()
	f.abandonLocked(late) // as start does on errFwdRetired
	f.mu.Unlock()
	_, err = f.wait(late, time.Second)
	require.EqualError(t, err, errFwdConn.Error())
	require.NoError(t, newFrameWriter(leaderEnd.c, time.Second).send(&fwdResponse{ID: syncCall.id, Index: 7}))
	resp, err := f.wait(syncCall, 5*time.Second)
	require.NoError(t, err)
	require.EqualValues(t, 7, resp.Index)
}

// A retired connection that breaks fails what still waits on it.
func TestRetiredLeaderConnectionFailsItsCallsWhenItBreaks(t *testing.T) {
	f, c1, leaderEnd := pipedForwarder(t)
	syncCall, err := f.register(c1, &fwdRequest{Kind: fwdSync}, false, nil)
	require.NoError(t, err)
	readAndRetire(f, c1)
	require.NoError(t, leaderEnd.c.Close())
	_, err = f.wait(syncCall, 5*time.Second)
	require.EqualError(t, err, errFwdConn.Error())
}

// readAndRetire reads c's answers, as connect does for the connection it
// dials, and retires c, as connect does once it finds a new leader.
func readAndRetire(f *forwarder, c net.Conn) {
	go f.readLoop(c)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.retireLocked(c)
}

// pipeEnd is the leader's end of a forwarder's pipe; closed is closed
// once the forwarder's end closes.
type pipeEnd struct {
	c      net.Conn
	closed chan struct{}
}

// pipedForwarder returns a forwarder whose leader connection is one end
// of a pipe, and the other end, which reads and discards what the
// forwarder sends.
func pipedForwarder(t *testing.T) (*forwarder, net.Conn, *pipeEnd) {
	t.Helper()
	mine, theirs := net.Pipe()
	t.Cleanup(func() { mine.Close(); theirs.Close() })
	f := newForwarder(nil)
	f.conn = mine
	end := &pipeEnd{c: theirs, closed: make(chan struct{})}
	go func() {
		defer close(end.closed)
		_, _ = io.Copy(io.Discard, theirs)
	}()
	return f, mine, end
}
