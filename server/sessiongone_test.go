package server

import (
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// A read answered after the session expired gets SESSIONEXPIRED, as
// ZooKeeper's checkSession answers it, even while the connection's close
// is still on its way; a read sent before the expiry was answered as
// usual. It used to be answered from the state without the session (here:
// its ephemeral gone, a getData NONODE; with a lock, "I still hold it").
func TestReadAfterExpiryIsSessionExpired(t *testing.T) {
	holdClose := make(chan struct{})
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(holdClose) }) }
	srv := attachServer(t, func(cfg *Config) {
		cfg.hooks = &testHooks{beforeGoneClose: func() { <-holdClose }}
	})
	t.Cleanup(release)
	nc, br, cr := handshakeRaw(t, srv.Addr().String(), 0, nil)
	require.NotZero(t, cr.SessionID)
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate},
		&wire.CreateRequest{Path: "/mine", ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeral})
	var h wire.ReplyHeader
	readRecord(t, br, &h)
	require.Equal(t, wire.OK, h.Err)

	require.NoError(t, srv.ExpireSession(cr.SessionID))
	for xid, op := range map[int32]wire.OpCode{2: wire.OpGetData, 3: wire.OpExists} {
		send(t, nc, &wire.RequestHeader{Xid: xid, Op: op}, &wire.PathWatchRequest{Path: "/mine"})
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(10*time.Second)))
		readRecord(t, br, &h)
		require.Equal(t, xid, h.Xid)
		require.Equal(t, wire.ErrSessionExpired, h.Err, "%v after the expiry", op)
	}
	release()
	_, err := wire.ReadFrame(br, nil, 1<<20)
	require.Error(t, err, "the connection closes")
}
