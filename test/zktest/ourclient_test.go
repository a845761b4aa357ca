package zktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// The same controls, observed through Paddock's own client.

func ourClient(t *testing.T, servers []string, opts ...client.Option) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, servers, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func waitOurState(t *testing.T, c *client.Conn, want client.State) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-c.Events():
			if ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %v (now %v)", want, c.State())
		}
	}
}

func TestOurClientExpireSession(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t)
	ctx := context.Background()
	owner := ourClient(t, srv.Servers())
	watcher := ourClient(t, srv.Servers())
	_, _, err := owner.Create(ctx, "/eph", nil, client.ModeEphemeral, nil)
	require.NoError(t, err)
	_, ok, ch, err := watcher.ExistsW(ctx, "/eph")
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, srv.ExpireSession(owner.SessionID()))
	waitOurState(t, owner, client.StateExpired)
	select {
	case ev := <-ch:
		require.Equal(t, client.EventNodeDeleted, ev.Type)
	case <-time.After(5 * time.Second):
		t.Fatal("watcher not notified")
	}
	_, _, err = owner.Exists(ctx, "/x")
	require.Error(t, err, "an expired client stops")
}

func TestOurClientDropConnectionsAndRestart(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t)
	ctx := context.Background()
	c := ourClient(t, srv.Servers())
	id := c.SessionID()
	w, err := c.AddWatch(ctx, "/p", true)
	require.NoError(t, err)
	srv.DropConnections()
	waitOurState(t, c, client.StateConnected)
	require.Equal(t, id, c.SessionID())
	srv.Restart()
	waitOurState(t, c, client.StateConnected)
	require.Equal(t, id, c.SessionID(), "the session survives a restart")
	// The persistent recursive watch was restored with SetWatches2, which
	// the client sends before any later request: one round trip proves the
	// server has it (a change made before that could be missed, as with
	// ZooKeeper's own restore of persistent watches).
	_, _, err = c.Exists(ctx, "/")
	require.NoError(t, err)
	other := ourClient(t, srv.Servers())
	_, _, err = other.Create(ctx, "/p", nil, client.ModePersistent, nil)
	require.NoError(t, err)
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev := <-w.Events():
			if ev.Type == client.EventNone { // connection-state notices
				continue
			}
			require.Equal(t, client.EventNodeCreated, ev.Type)
			require.Equal(t, "/p", ev.Path)
			return
		case <-timeout:
			t.Fatal("restored persistent watch did not fire")
		}
	}
}

// TestOurClientClusterFailover: the session survives the leader's death.
// The tick is 1 s, so the session has its requested 10 s, as a client of
// a ZooKeeper with the default 2 s tick would: with zktest's 100 ms tick
// it had 2 s, and once on a loaded CI machine (a full .ci/run beside
// the cluster suite) the session expired during the failover.
func TestOurClientClusterFailover(t *testing.T) {
	t.Parallel()
	c := zktest.StartCluster(t, 3, zktest.WithTickTime(time.Second))
	ctx := context.Background()
	cl := ourClient(t, c.Servers())
	id := cl.SessionID()
	_, _, err := cl.Create(ctx, "/before", nil, client.ModePersistent, nil)
	require.NoError(t, err)
	c.KillLeader()
	deadline := time.Now().Add(15 * time.Second)
	for {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		_, _, err = cl.Create(cctx, "/after", nil, client.ModePersistent, nil)
		cancel()
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	require.NoError(t, err)
	require.Equal(t, id, cl.SessionID())
}
