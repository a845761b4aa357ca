package server

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func TestFwdTag(t *testing.T) {
	epoch, id, ok := parseFwdTag(fwdTag(0xdeadbeef, 42))
	require.True(t, ok)
	require.Equal(t, uint64(0xdeadbeef), epoch)
	require.Equal(t, uint64(42), id)
	for _, bad := range [][]byte{nil, {fwdTagV1}, append([]byte{2}, make([]byte, 16)...), make([]byte, 18)} {
		_, _, ok := parseFwdTag(bad)
		require.False(t, ok, "%x", bad)
	}
}

// pendingCall registers a call as call() would, without a connection.
func pendingCall(f *forwarder, id uint64, tagged bool) chan *fwdResponse {
	ch := make(chan *fwdResponse, 1)
	f.mu.Lock()
	f.pending[id] = &fwdCall{id: id, ch: ch, tagged: tagged}
	f.mu.Unlock()
	return ch
}

func TestForwarderResolvesTaggedCallsFromLocalApply(t *testing.T) {
	f := newForwarder(nil)
	tagged, untagged := pendingCall(f, 1, true), pendingCall(f, 2, false)
	failing := pendingCall(f, 3, true)
	res := &fsm.Result{Zxid: 9, Ops: []fsm.OpResult{{Type: wire.OpCreate, Path: "/a"}},
		Events: []fsm.Event{{Type: wire.EventNodeCreated, Path: "/a"}}}

	f.resolveLocal(fwdTag(f.epoch+1, 1), 9, res) // another node's (or run's) call
	f.resolveLocal(fwdTag(f.epoch, 2), 9, res)   // not a tagged call
	f.resolveLocal([]byte("other middleware"), 9, res)
	require.Empty(t, tagged)
	require.Empty(t, untagged)

	f.resolveLocal(fwdTag(f.epoch, 1), 9, res)
	resp := <-tagged
	require.Equal(t, uint64(1), resp.ID)
	require.Equal(t, uint64(9), resp.Index)
	require.Equal(t, res.Ops, resp.Result.Ops)
	require.Nil(t, resp.Result.Events, "events stay with the applying node")
	require.NotNil(t, res.Events, "the FSM's own result is not changed")

	f.resolveLocal(fwdTag(f.epoch, 3), 10, errLogReleased)
	require.Equal(t, errLogReleased.Error(), (<-failing).Err)

	// Resolved calls are gone: a second apply (or the leader's answer
	// from an older Paddock) finds nothing to resolve.
	f.resolveLocal(fwdTag(f.epoch, 1), 9, res)
	require.Empty(t, tagged)
	require.NotContains(t, f.pending, uint64(1))
	require.Contains(t, f.pending, uint64(2))
}

func TestForwarderFailsTaggedCallsOnSnapshotInstall(t *testing.T) {
	f := newForwarder(nil)
	tagged, untagged := pendingCall(f, 1, true), pendingCall(f, 2, false)
	inner := fsm.New()
	snap, err := inner.Snapshot()
	require.NoError(t, err)
	sink := &memSink{}
	require.NoError(t, snap.Persist(sink))

	tf := &tagFSM{inner: inner, applied: func(*raft.Log, interface{}) {}, restored: f.failTagged}
	require.NoError(t, tf.Restore(io.NopCloser(strings.NewReader(sink.String()))))
	require.Equal(t, errFwdConn.Error(), (<-tagged).Err)
	require.Empty(t, untagged, "a sync or attach does not depend on the local apply")
}

// createCmd is an encoded command creating path.
func createCmd(t *testing.T, path string) []byte {
	t.Helper()
	b, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: path, ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	return b
}

// memSink is a raft.SnapshotSink in memory.
type memSink struct{ strings.Builder }

func (m *memSink) ID() string    { return "mem" }
func (m *memSink) Cancel() error { return nil }
func (m *memSink) Close() error  { return nil }

func TestTagFSMReportsTaggedEntries(t *testing.T) {
	type seen struct {
		index uint64
		out   interface{}
	}
	var got []seen
	tf := &tagFSM{inner: fsm.New(), applied: func(l *raft.Log, out interface{}) {
		got = append(got, seen{l.Index, out})
	}, restored: func() {}}
	cmd := func(path string) []byte { return createCmd(t, path) }
	out := tf.ApplyBatch([]*raft.Log{
		{Index: 1, Type: raft.LogCommand, Data: cmd("/plain")},
		{Index: 2, Type: raft.LogCommand, Data: cmd("/tagged"), Extensions: fwdTag(1, 1)},
		{Index: 3, Type: raft.LogConfiguration, Extensions: []byte("x")},
	})
	require.Len(t, out, 3)
	require.Nil(t, out[2], "configuration entries are Raft's")
	require.Len(t, got, 1)
	require.Equal(t, uint64(2), got[0].index)
	require.Equal(t, "/tagged", got[0].out.(*fsm.Result).Ops[0].Path)
	require.Same(t, out[1], got[0].out)
	require.Equal(t, "/plain2", tf.Apply(&raft.Log{Index: 4, Type: raft.LogCommand, Data: cmd("/plain2")}).(*fsm.Result).Ops[0].Path)
}

// TestClusterForwardedWriteResolvedByFollowerApply writes through a
// follower: the write returns with its result once the follower applied
// it, and the leader answers a tagged write only when it fails.
func TestClusterForwardedWriteResolvedByFollowerApply(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	fol := servers[(l+1)%len(servers)]
	require.Eventually(t, func() bool { return fol.Leader() != "" }, 10*time.Second, time.Millisecond)

	res, err := fol.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/fwd", Data: []byte("v"), ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Equal(t, wire.OK, res.Err)
	require.Equal(t, "/fwd", res.Ops[0].Path)
	st, ok := fol.FSM().Exists("/fwd")
	require.True(t, ok, "the reply came before the follower applied the write")
	require.Equal(t, st.Czxid, res.Zxid)
	fol.fwd.mu.Lock()
	require.Empty(t, fol.fwd.pending)
	fol.fwd.mu.Unlock()

	lead := servers[l]
	create := func(path string) []byte { return createCmd(t, path) }
	peer := fol.cfg.ID
	require.Nil(t, lead.handleForward(peer, &fwdRequest{ID: 1, Kind: fwdApply, Cmd: create("/t"), Tag: fwdTag(7, 1)}),
		"a tagged write that succeeded is not answered")
	resp := lead.handleForward(peer, &fwdRequest{ID: 2, Kind: fwdApply, Cmd: create("/u")})
	require.NotNil(t, resp, "an untagged write (an older follower's) is answered")
	require.NotZero(t, resp.Index)
	require.Equal(t, "/u", resp.Result.Ops[0].Path)
	lead.setOwner(99, "another follower")
	resp = lead.handleForward(peer, &fwdRequest{ID: 3, Kind: fwdApply, Session: 99, Cmd: create("/v"), Tag: fwdTag(7, 3)})
	require.NotNil(t, resp, "a tagged write that failed is answered")
	require.True(t, errors.Is(resp.Code, wire.ErrSessionMoved), "%v", resp.Code)
}

// Installing the leader's snapshot changes the tree without events, so a
// follower drops every client connection (sessions live on): the clients
// reconnect and re-register their watches with the last zxid they saw,
// which fires what they missed. Writes it waits to apply fail too.
func TestSnapshotInstallDropsClientConnections(t *testing.T) {
	fol, _, br, cr := followerSession(t)
	waiting := pendingCall(fol.fwd, 1<<40, true)

	fol.snapshotInstalled()
	_, err := br.ReadByte()
	require.ErrorIs(t, err, io.EOF, "the client connection stays open after the snapshot install")
	require.Contains(t, (<-waiting).Err, "connection to the leader lost")
	_, live := fol.FSM().Session(cr.SessionID)
	require.True(t, live, "the session lives on")
}
