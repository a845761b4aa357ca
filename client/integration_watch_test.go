package client

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Integration tests of watches, reconnects and expiry (see integration_test.go).

func TestServerOneShotWatches(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		other := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)
		p := root + "/w"

		_, ok, existsW, err := c.ExistsW(ctx, p)
		require.NoError(t, err)
		require.False(t, ok)
		require.NoError(t, c.CheckWatches(ctx, p, WatcherData), "exists on a missing node sets a watch")
		_, _, err = other.Create(ctx, p, []byte("x"), ModePersistent, nil)
		require.NoError(t, err)
		assert.Equal(t, Event{Type: EventNodeCreated, State: StateConnected, Path: p}, recv(t, existsW))
		expectClosed(t, existsW)

		_, _, dataW, err := c.GetW(ctx, p)
		require.NoError(t, err)
		_, _, childW, err := c.ChildrenW(ctx, p)
		require.NoError(t, err)
		_, err = other.Set(ctx, p, []byte("y"), -1)
		require.NoError(t, err)
		assert.Equal(t, EventNodeDataChanged, recv(t, dataW).Type)
		expectClosed(t, dataW)

		_, _, err = other.Create(ctx, p+"/kid", nil, ModePersistent, nil)
		require.NoError(t, err)
		assert.Equal(t, Event{Type: EventNodeChildrenChanged, State: StateConnected, Path: p}, recv(t, childW))

		_, _, dataW, err = c.GetW(ctx, p)
		require.NoError(t, err)
		_, _, childW, err = c.ChildrenW(ctx, p+"/kid")
		require.NoError(t, err)
		_, ok, existsW, err = c.ExistsW(ctx, p)
		require.NoError(t, err)
		require.True(t, ok)
		require.NoError(t, other.Delete(ctx, p+"/kid", -1))
		assert.Equal(t, Event{Type: EventNodeDeleted, State: StateConnected, Path: p + "/kid"}, recv(t, childW))
		require.NoError(t, other.Delete(ctx, p, -1))
		assert.Equal(t, EventNodeDeleted, recv(t, dataW).Type)
		assert.Equal(t, EventNodeDeleted, recv(t, existsW).Type)

		// getData/getChildren on a missing node set no watch.
		_, _, _, err = c.GetW(ctx, p)
		assert.ErrorIs(t, err, ErrNoNode)
		_, _, _, err = c.ChildrenW(ctx, p)
		assert.ErrorIs(t, err, ErrNoNode)
		assert.ErrorIs(t, c.CheckWatches(ctx, p, WatcherAny), ErrNoWatcher)
	})
}

func TestServerRemoveWatches(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)

		_, _, dataW, err := c.GetW(ctx, root)
		require.NoError(t, err)
		_, _, childW, err := c.ChildrenW(ctx, root)
		require.NoError(t, err)
		require.NoError(t, c.CheckWatches(ctx, root, WatcherChildren))

		require.NoError(t, c.RemoveWatches(ctx, root, WatcherData))
		assert.Equal(t, Event{Type: EventDataWatchRemoved, State: StateConnected, Path: root}, recv(t, dataW))
		expectClosed(t, dataW)
		assert.ErrorIs(t, c.CheckWatches(ctx, root, WatcherData), ErrNoWatcher)
		expectNoEvent(t, childW)

		require.NoError(t, c.RemoveWatches(ctx, root, WatcherAny))
		assert.Equal(t, EventChildWatchRemoved, recv(t, childW).Type)
		assert.ErrorIs(t, c.RemoveWatches(ctx, root, WatcherAny), ErrNoWatcher)
	})
}

func TestServerPersistentWatches(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		other := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)

		// ZooKeeper keeps one watch mode per (connection, path), so the
		// recursive watch on the same path uses another Conn.
		pw, err := c.AddWatch(ctx, root, false)
		require.NoError(t, err)
		rc := connectTest(t, addrs)
		rw, err := rc.AddWatch(ctx, root, true)
		require.NoError(t, err)

		_, _, err = other.Create(ctx, root+"/a", nil, ModePersistent, nil)
		require.NoError(t, err)
		_, _, err = other.Create(ctx, root+"/a/b", nil, ModePersistent, nil)
		require.NoError(t, err)
		_, err = other.Set(ctx, root, []byte("x"), -1)
		require.NoError(t, err)
		_, err = other.Set(ctx, root, []byte("y"), -1)
		require.NoError(t, err)

		assert.Equal(t, Event{Type: EventNodeChildrenChanged, State: StateConnected, Path: root}, recv(t, pw.Events()))
		assert.Equal(t, EventNodeDataChanged, recv(t, pw.Events()).Type)
		assert.Equal(t, EventNodeDataChanged, recv(t, pw.Events()).Type, "persistent: fires again")

		assert.Equal(t, Event{Type: EventNodeCreated, State: StateConnected, Path: root + "/a"}, recv(t, rw.Events()))
		assert.Equal(t, Event{Type: EventNodeCreated, State: StateConnected, Path: root + "/a/b"}, recv(t, rw.Events()))
		assert.Equal(t, EventNodeDataChanged, recv(t, rw.Events()).Type)
		assert.Equal(t, EventNodeDataChanged, recv(t, rw.Events()).Type)

		require.NoError(t, pw.Remove(ctx))
		assert.Equal(t, EventPersistentWatchRemoved, recv(t, pw.Events()).Type)
		expectClosed(t, pw.Events())
		require.NoError(t, pw.Remove(ctx), "second Remove is a no-op")

		_, err = other.Set(ctx, root+"/a", []byte("z"), -1)
		require.NoError(t, err)
		assert.Equal(t, Event{Type: EventNodeDataChanged, State: StateConnected, Path: root + "/a"}, recv(t, rw.Events()))
		require.NoError(t, rw.Remove(ctx))
		assert.Equal(t, EventPersistentWatchRemoved, recv(t, rw.Events()).Type)
		expectClosed(t, rw.Events())
		// (ZooKeeper 3.8's checkWatches answers OK when any session
		// watches the path, so check only once no watch is left.)
		assert.ErrorIs(t, c.CheckWatches(ctx, root, WatcherAny), ErrNoWatcher, "removed on the server")
		assert.ErrorIs(t, rc.CheckWatches(ctx, root, WatcherAny), ErrNoWatcher, "removed on the server")

		// On a pre-3.9 server, removing a persistent watch falls back to
		// WatcherAny, which ends the other watches on the path too.
		pw, err = c.AddWatch(ctx, root, false)
		require.NoError(t, err)
		_, _, w, err := c.GetW(ctx, root)
		require.NoError(t, err)
		require.NoError(t, pw.Remove(ctx))
		assert.Equal(t, EventPersistentWatchRemoved, recv(t, pw.Events()).Type)
		select {
		case ev := <-w:
			assert.Equal(t, EventDataWatchRemoved, ev.Type)
			t.Log("pre-3.9 server: WatcherAny fallback removed the data watch too")
		default:
			require.NoError(t, c.CheckWatches(ctx, root, WatcherData))
		}
	})
}

func TestServerReconnectRestoresWatches(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		proxy := newProxy(t, addrs[0])
		c := connectTest(t, []string{proxy.addr()})
		other := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)
		_, _, err := c.Create(ctx, root+"/d", nil, ModePersistent, nil)
		require.NoError(t, err)

		_, _, dataW, err := c.GetW(ctx, root+"/d")
		require.NoError(t, err)
		_, _, existW, err := c.ExistsW(ctx, root+"/later")
		require.NoError(t, err)
		_, _, childW, err := c.ChildrenW(ctx, root)
		require.NoError(t, err)
		_, _, quietW, err := c.GetW(ctx, root)
		require.NoError(t, err)
		// (One watch mode per connection and path on ZooKeeper: the
		// recursive watch goes on its own subtree.)
		sub := root + "/sub"
		_, _, err = other.Create(ctx, sub, nil, ModePersistent, nil)
		require.NoError(t, err)
		assert.Equal(t, EventNodeChildrenChanged, recv(t, childW).Type)
		_, _, childW, err = c.ChildrenW(ctx, root)
		require.NoError(t, err)
		rw, err := c.AddWatch(ctx, sub, true)
		require.NoError(t, err)
		eph, _, err := c.Create(ctx, sub+"/eph", nil, ModeEphemeral, nil)
		require.NoError(t, err)
		assert.Equal(t, EventNodeCreated, recv(t, rw.Events()).Type)
		_, _, err = c.Create(ctx, root+"/eph", nil, ModeEphemeral, nil)
		require.NoError(t, err)
		assert.Equal(t, EventNodeChildrenChanged, recv(t, childW).Type)
		_, _, childW, err = c.ChildrenW(ctx, root)
		require.NoError(t, err)
		sid := c.SessionID()
		drainStates(c)

		// Change things while the client is cut off.
		proxy.setBlocked(true)
		proxy.cut()
		waitState(t, c, StateDisconnected)
		_, err = other.Set(ctx, root+"/d", []byte("changed"), -1)
		require.NoError(t, err)
		_, _, err = other.Create(ctx, root+"/later", nil, ModePersistent, nil)
		require.NoError(t, err)
		proxy.setBlocked(false)

		// SetWatches (relativeZxid = lastZxidSeen) reports what was missed.
		assert.Equal(t, Event{Type: EventNodeDataChanged, State: StateConnected, Path: root + "/d"}, recv(t, dataW))
		assert.Equal(t, Event{Type: EventNodeCreated, State: StateConnected, Path: root + "/later"}, recv(t, existW))
		assert.Equal(t, EventNodeChildrenChanged, recv(t, childW).Type)
		waitState(t, c, StateConnected)
		assert.Equal(t, sid, c.SessionID())
		assert.Equal(t, []State{StateDisconnected, StateConnected}, drainStates(c))
		expectNoEvent(t, quietW)

		assert.Equal(t, Event{Type: EventNone, State: StateDisconnected, Path: sub}, recv(t, rw.Events()))
		assert.Equal(t, Event{Type: EventNone, State: StateConnected, Path: sub}, recv(t, rw.Events()))
		// The recursive watch is re-registered (SetWatches2).
		_, err = other.Set(ctx, eph, []byte("v"), -1)
		require.NoError(t, err)
		assert.Equal(t, Event{Type: EventNodeDataChanged, State: StateConnected, Path: eph}, recv(t, rw.Events()))
		// The one-shot watch that did not fire is still there.
		require.NoError(t, c.CheckWatches(ctx, root, WatcherData))
		// The session, and its ephemeral, survived.
		_, ok, err := other.Exists(ctx, eph)
		require.NoError(t, err)
		assert.True(t, ok)
	})
}

func TestServerSessionExpiry(t *testing.T) {
	for _, newSession := range []bool{false, true} {
		t.Run(fmt.Sprintf("newSession=%v", newSession), func(t *testing.T) {
			forEachServer(t, func(t *testing.T, addrs []string) {
				proxy := newProxy(t, addrs[0])
				c := connectTest(t, []string{proxy.addr()}, WithNewSessionOnExpiry(newSession))
				other := connectTest(t, addrs)
				ctx := testCtx(t)
				root := testRoot(t, other)
				eph, _, err := c.Create(ctx, root+"/eph", nil, ModeEphemeral, nil)
				require.NoError(t, err)
				_, _, w, err := c.GetW(ctx, root)
				require.NoError(t, err)
				pw, err := c.AddWatch(ctx, root, false)
				require.NoError(t, err)
				first := c.SessionID()
				drainStates(c)

				proxy.setBlocked(true)
				proxy.cut()
				waitState(t, c, StateDisconnected)
				closeSessionRaw(t, addrs[0], c)
				proxy.setBlocked(false)

				ev := recv(t, w)
				assert.Equal(t, EventNone, ev.Type)
				assert.ErrorIs(t, ev.Err, ErrSessionExpired)
				assert.Equal(t, StateDisconnected, recv(t, pw.Events()).State)
				assert.ErrorIs(t, recv(t, pw.Events()).Err, ErrSessionExpired)
				expectClosed(t, pw.Events())
				_, ok, err := other.Exists(ctx, eph)
				require.NoError(t, err)
				assert.False(t, ok)

				if !newSession {
					waitFor(t, "stop", func() error {
						if !isLoopDone(c) {
							return errors.New("running")
						}
						return nil
					})
					assert.Equal(t, []State{StateDisconnected, StateExpired}, drainStates(c))
					_, _, err = c.Get(ctx, root)
					assert.ErrorIs(t, err, ErrSessionExpired)
					return
				}
				waitFor(t, "new session", func() error {
					if c.State() != StateConnected || c.SessionID() == first {
						return fmt.Errorf("state %v", c.State())
					}
					return nil
				})
				assert.Equal(t, []State{StateDisconnected, StateExpired, StateConnected}, drainStates(c))
				_, _, err = c.Create(ctx, eph, nil, ModeEphemeral, nil)
				require.NoError(t, err)
			})
		})
	}
}
