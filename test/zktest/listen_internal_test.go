package zktest

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A restart whose old port is held for a moment (by an outgoing
// connection that took it as its local port) waits for it instead of
// failing with "address already in use".
func TestListenAgainWaitsForThePort(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := busy.Addr().String()
	got := make(chan error, 1)
	go func() {
		ln, err := listenAgain(addr)
		if err == nil {
			_ = ln.Close()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("listenAgain returned while the port was taken: %v", err)
	case <-time.After(50 * time.Millisecond): // still trying, as it should
	}
	require.NoError(t, busy.Close())
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(relistenTimeout + 5*time.Second):
		t.Fatal("listenAgain did not return once the port was free")
	}
}
