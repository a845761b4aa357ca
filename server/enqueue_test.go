package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// refusedWrites reads paddock_writes_refused_total.
func refusedWrites(t *testing.T, s *Server) float64 {
	t.Helper()
	var m dto.Metric
	require.NoError(t, s.metrics.writesRefused.Write(&m))
	return m.GetCounter().GetValue()
}

// heldUntilRefused waits until s refused a write because Raft's queue
// stayed full (its store is held), then lets the store go.
func heldUntilRefused(t *testing.T, s *Server, st *heldStore) {
	t.Helper()
	require.Eventually(t, func() bool { return refusedWrites(t, s) >= 1 }, 20*time.Second, time.Millisecond,
		"no write was refused while Raft's log was held")
	st.hold.Store(false)
	select {
	case st.release <- nil:
	case <-time.After(10 * time.Second):
		t.Fatal("the held store never wrote")
	}
}

// barrier applies a write on s, so everything proposed before is applied.
func barrier(t *testing.T, s *Server) {
	t.Helper()
	res, err := s.apply(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/barrier", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Equal(t, wire.OK, res.Err)
}

// appliedPrefix checks that the nodes /<prefix>0 .. /<prefix>(n-1) that
// exist in s's tree are a prefix of them, and returns its length.
func appliedPrefix(t *testing.T, s *Server, prefix string, n int) int {
	t.Helper()
	first := n
	for i := range n {
		_, ok := s.FSM().Exists(fmt.Sprintf("/%s%d", prefix, i))
		if !ok && first == n {
			first = i
		}
		require.False(t, ok && first < n, "/%s%d applied after /%s%d was not", prefix, i, prefix, first)
	}
	return first
}

// TestClientWriteRefusedByRaftEndsItsConnection: a client pipelines
// writes while Raft's log write is stuck, so Raft's queue fills and one
// write is refused after the propose timeout. The writes the client sent
// after it must not be proposed: they used to be, and once the log went
// on, applied after the refused one (a gap ZooKeeper never leaves).
func TestClientWriteRefusedByRaftEndsItsConnection(t *testing.T) {
	srv, st := heldStoreServer(t, func(c *Config) { c.ProposeTimeout = time.Second })
	nc, br, _ := handshakeRaw(t, srv.Addr().String(), 0, nil)
	defer nc.Close()

	st.hold.Store(true)
	const writes = 300 // more than Raft's batch and queue together
	var burst bytes.Buffer
	for i := range writes {
		burst.Write(frame(&wire.RequestHeader{Xid: int32(i + 1), Op: wire.OpCreate},
			&wire.CreateRequest{Path: fmt.Sprintf("/w%d", i), ACL: wire.OpenACLUnsafe}))
	}
	go func() { _, _ = nc.Write(burst.Bytes()) }()
	heldUntilRefused(t, srv, st)

	// The client gets the answers up to the refused write, which fails
	// with ConnectionLoss, and then the connection closes.
	ok := 0
	for {
		var h wire.ReplyHeader
		f, err := wire.ReadFrame(br, nil, 1<<20)
		if err != nil {
			require.True(t, errors.Is(err, io.EOF) || isReset(err), "the connection was left open: %v", err)
			break
		}
		require.NoError(t, h.Decode(wire.NewDecoder(f)))
		if h.Err == wire.OK {
			require.Equal(t, int32(ok+1), h.Xid)
			ok++
			continue
		}
		require.Equal(t, wire.ErrConnectionLoss, h.Err, "xid %d", h.Xid)
	}
	require.Positive(t, ok)
	require.Less(t, ok, writes)
	barrier(t, srv) // everything proposed before is applied
	require.Equal(t, ok, appliedPrefix(t, srv, "w", writes))
}

// TestForwardedWriteRefusedByRaftEndsTheConnection: the same on a
// leader's forwarding connection, which carries what a follower's
// clients pipelined: after a write Raft refused, the leader takes no
// more of the connection's writes and closes it.
func TestForwardedWriteRefusedByRaftEndsTheConnection(t *testing.T) {
	servers, stores := startHeldClusterWith(t, func(c *Config) {
		c.SyncLeaderLog = true // Raft's own loop writes the leader's log
		c.ProposeTimeout = time.Second
	})
	l := clusterLeader(t, servers)
	fol := servers[(l+1)%3]
	require.Eventually(t, func() bool { return fol.Leader() != "" }, 10*time.Second, time.Millisecond)
	c, err := fol.mux.dial(streamForward, servers[l].cfg.Peers[l].Addr, 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	w, br := newFrameWriter(c, 5*time.Second), bufio.NewReader(c)

	stores[l].hold.Store(true)
	const writes = 300
	go func() {
		for i := range writes {
			cmd, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdOps, Time: time.Now().UnixMilli(),
				Ops: []fsm.Op{{Type: wire.OpCreate, Path: fmt.Sprintf("/f%d", i), ACL: wire.OpenACLUnsafe}}})
			if err != nil || w.send(&fwdRequest{ID: uint64(i + 1), Kind: fwdApply, Cmd: cmd}) != nil {
				return
			}
		}
	}()
	heldUntilRefused(t, servers[l], stores[l])

	refused := 0
	for {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		var resp fwdResponse
		if err := readMsg(br, &resp); err != nil {
			require.True(t, errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err),
				"the connection was left open: %v", err)
			break
		}
		if resp.Err != "" {
			require.Contains(t, resp.Err, raft.ErrEnqueueTimeout.Error())
			refused++
		}
	}
	require.Equal(t, 1, refused)
	barrier(t, servers[l])
	n := appliedPrefix(t, servers[l], "f", writes)
	require.Positive(t, n)
	require.Less(t, n, writes)
}

// A lane's local writes stay in one term while any is unanswered: a node
// that lost its leadership and won it back may have refused them (Raft
// answers the refusal only later), so a write in the new term breaks the
// lane instead of being applied after them.
func TestFwdLaneLocalWritesKeepToOneTerm(t *testing.T) {
	f, _ := laneForwarder(t)
	var lane fwdLane
	pending := errFuture{} // unanswered
	f.proposeLocal(&lane, 4, func() raft.ApplyFuture { return pending })
	f.proposeLocal(&lane, 4, func() raft.ApplyFuture { return pending })
	require.False(t, lane.broken, "two writes in one term")
	refused := f.proposeLocal(&lane, 6, func() raft.ApplyFuture { t.Fatal("proposed"); return nil })
	require.ErrorIs(t, refused.Error(), errLaneBroken)

	var idle fwdLane
	require.NoError(t, f.proposeLocal(&idle, 4, func() raft.ApplyFuture { return pending }).Error())
	require.NoError(t, f.proposeLocal(&idle, 6, func() raft.ApplyFuture { return pending }).Error(),
		"nothing in flight: a new term may take the next")
}

// A local write refused before it reached Raft's log breaks its lane at
// once, before anyone asks for its answer: the connection's next write
// is read right after it.
func TestFwdLaneRefusedLocalWriteBreaksAtOnce(t *testing.T) {
	f, _ := laneForwarder(t)
	var lane fwdLane
	f.proposeLocal(&lane, 4, func() raft.ApplyFuture { return errFuture{raft.ErrEnqueueTimeout} })
	require.True(t, lane.broken)
	require.Zero(t, lane.inflight)
	next := f.proposeLocal(&lane, 4, func() raft.ApplyFuture { t.Fatal("proposed"); return nil })
	require.ErrorIs(t, next.Error(), errLaneBroken)
}
