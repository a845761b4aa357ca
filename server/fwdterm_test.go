package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// TestForwardConnectionKeepsToOneLeadership: the writes a follower
// forwards over one connection are taken only while the node that
// accepted it leads in the term it led when the first came; once it has
// stopped leading, the next write is refused and the connection closed,
// even if the node leads again by then. A write refused or dropped when
// leadership moved must not be followed by a later one of the same
// client that the node, leading again, accepts over the old connection
// (the follower learns of the refusal only when its answer arrives, and
// pipelines the next writes behind it). The connection used to stay open
// and take the write.
func TestForwardConnectionKeepsToOneLeadership(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	fol, other := servers[(l+1)%3], servers[(l+2)%3]
	require.Eventually(t, func() bool { return fol.Leader() != "" }, 10*time.Second, time.Millisecond)
	c, err := fol.mux.dial(streamForward, servers[l].cfg.Peers[l].Addr, 5*time.Second)
	require.NoError(t, err)
	defer c.Close()
	w, br := newFrameWriter(c, 5*time.Second), bufio.NewReader(c)
	create := func(id uint64, path string) (*fwdResponse, error) {
		cmd, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdOps, Time: time.Now().UnixMilli(),
			Ops: []fsm.Op{{Type: wire.OpCreate, Path: path, ACL: wire.OpenACLUnsafe}}})
		require.NoError(t, err)
		require.NoError(t, w.send(&fwdRequest{ID: id, Kind: fwdApply, Cmd: cmd}))
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		var resp fwdResponse
		return &resp, readMsg(br, &resp)
	}
	resp, err := create(1, "/first")
	require.NoError(t, err)
	require.Empty(t, resp.Err)

	// Leadership goes to another node and comes back.
	require.NoError(t, servers[l].TransferLeadership(other.cfg.ID))
	require.Eventually(t, other.isLeader, 10*time.Second, time.Millisecond)
	require.NoError(t, other.TransferLeadership(servers[l].cfg.ID))
	require.Eventually(t, servers[l].isLeader, 10*time.Second, time.Millisecond)

	resp, err = create(2, "/after-the-round-trip")
	require.NoError(t, err, "the refusal is answered")
	require.Equal(t, errNoLeader.Error(), resp.Err, "a write on the connection of an earlier leadership")
	_, err = create(3, "/later")
	require.True(t, errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err), "then the connection closes: %v", err)
	_, ok := servers[l].FSM().Exists("/after-the-round-trip")
	require.False(t, ok)
}

// isReset reports a connection reset by the peer (not a read timeout:
// a connection left open would end in one).
func isReset(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && !op.Timeout()
}
