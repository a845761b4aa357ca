package server

import (
	"runtime"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// TestConnectCloseChurnLeavesNothingBehind: thousands of sessions opened
// and closed, and as many connections dropped without a close, leave no
// session, connection or goroutine behind once they are gone (the
// reliability plan's connect/close churn).
func TestConnectCloseChurnLeavesNothingBehind(t *testing.T) {
	srv := attachServer(t, func(c *Config) { c.MinSessionTimeout, c.MaxSessionTimeout = 200*time.Millisecond, time.Second })
	runtime.GC()
	base := runtime.NumGoroutine()
	for i := range 1000 {
		nc, br, cr := handshakeRaw(t, srv.Addr().String(), 0, nil)
		require.NotZero(t, cr.SessionID)
		if i%2 == 0 {
			send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCloseSession})
			var h wire.ReplyHeader
			readRecord(t, br, &h)
			require.Equal(t, wire.OK, h.Err)
		}
		nc.Close() // the odd ones' sessions expire
	}
	require.Eventually(t, func() bool {
		return srv.connCount() == 0 && len(srv.FSM().Sessions()) == 0
	}, 20*time.Second, 10*time.Millisecond, "connections or sessions left")
	require.Eventually(t, func() bool { return runtime.NumGoroutine() <= base+2 }, 10*time.Second, 10*time.Millisecond,
		"goroutines left: %d, %d before", runtime.NumGoroutine(), base)
}
