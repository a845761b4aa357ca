package integration_test

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// Section 2: the standard (one-shot) watch rules of reference §2.4.

// settle round-trips a request on c: every notification caused by a change
// that completed before has then been received and recorded.
func settle(t *testing.T, c *client) {
	t.Helper()
	_, _, err := c.Exists("/")
	require.NoError(t, err)
}

func TestDataWatchFiresOnceOnChange(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	mustCreate(t, writer, "/d", []byte("0"))
	_, _, ch, err := w.GetW("/d")
	require.NoError(t, err)

	_, err = writer.Set("/d", []byte("1"), -1)
	require.NoError(t, err)
	e := waitEvent(t, ch)
	require.Equal(t, zk.EventNodeDataChanged, e.Type)
	require.Equal(t, "/d", e.Path)
	require.Equal(t, zk.StateSyncConnected, e.State)

	_, err = writer.Set("/d", []byte("2"), -1)
	require.NoError(t, err)
	settle(t, w)
	require.Equal(t, 1, w.rec.count(zk.EventNodeDataChanged, "/d"), "a one-shot watch fires once")
	require.Len(t, w.rec.all(), 1)
}

func TestDataWatchFiresNodeDeleted(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	mustCreate(t, writer, "/d", nil)
	_, _, ch, err := w.GetW("/d")
	require.NoError(t, err)
	require.NoError(t, writer.Delete("/d", -1))
	e := waitEvent(t, ch)
	require.Equal(t, zk.EventNodeDeleted, e.Type)
	require.Equal(t, "/d", e.Path)
	mustCreate(t, writer, "/d", nil)
	settle(t, w)
	require.Len(t, w.rec.all(), 1, "the fired watch is gone: re-creating fires nothing")
}

func TestExistWatchOnMissingNodeFiresNodeCreated(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	ok, _, ch, err := w.ExistsW("/later")
	require.NoError(t, err)
	require.False(t, ok)
	mustCreate(t, writer, "/later", nil)
	e := waitEvent(t, ch)
	require.Equal(t, zk.EventNodeCreated, e.Type)
	require.Equal(t, "/later", e.Path)
}

func TestGetDataOnMissingNodeSetsNoWatch(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	_, _, _, err := w.GetW("/none")
	require.ErrorIs(t, err, zk.ErrNoNode)
	_, _, _, err = w.ChildrenW("/none")
	require.ErrorIs(t, err, zk.ErrNoNode)
	mustCreate(t, writer, "/none", nil)
	mustCreate(t, writer, "/none/c", nil)
	settle(t, w)
	require.Empty(t, w.rec.all())
	require.Empty(t, srv.Watches())
}

func TestChildWatchFiresOnChildCreateAndDelete(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	mustCreate(t, writer, "/p", nil)

	_, _, ch, err := w.ChildrenW("/p")
	require.NoError(t, err)
	mustCreate(t, writer, "/p/c", nil)
	e := waitEvent(t, ch)
	require.Equal(t, zk.EventNodeChildrenChanged, e.Type)
	require.Equal(t, "/p", e.Path)

	_, _, ch, err = w.ChildrenW("/p")
	require.NoError(t, err)
	_, err = writer.Set("/p", []byte("data"), -1)
	require.NoError(t, err)
	_, err = writer.Set("/p/c", []byte("data"), -1)
	require.NoError(t, err)
	require.NoError(t, writer.Delete("/p/c", -1))
	e = waitEvent(t, ch)
	require.Equal(t, zk.EventNodeChildrenChanged, e.Type, "data changes do not fire child watches")
	require.Equal(t, "/p", e.Path)
	settle(t, w)
	require.Equal(t, 2, w.rec.count(zk.EventNodeChildrenChanged, "/p"))
	require.Len(t, w.rec.all(), 2)
}

func TestDeleteFiresOneEventForDataAndChildWatches(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	mustCreate(t, writer, "/both", nil)
	_, _, dch, err := w.GetW("/both")
	require.NoError(t, err)
	_, _, cch, err := w.ChildrenW("/both")
	require.NoError(t, err)
	_, _, ech, err := w.ExistsW("/both")
	require.NoError(t, err)

	require.NoError(t, writer.Delete("/both", -1))
	for _, ch := range []<-chan zk.Event{dch, cch, ech} {
		require.Equal(t, zk.EventNodeDeleted, waitEvent(t, ch).Type)
	}
	settle(t, w)
	require.Equal(t, 1, w.rec.count(zk.EventNodeDeleted, "/both"),
		"one NodeDeleted per connection, however many watches it had")
	require.Len(t, w.rec.all(), 1)
}

func TestSetACLFiresNoWatch(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	mustCreate(t, writer, "/acl", nil)
	_, _, _, err := w.GetW("/acl")
	require.NoError(t, err)
	_, _, _, err = w.ExistsW("/acl")
	require.NoError(t, err)
	_, err = writer.SetACL("/acl", zk.WorldACL(zk.PermRead), -1)
	require.NoError(t, err)
	settle(t, w)
	require.Empty(t, w.rec.all())
	require.NotEmpty(t, srv.Watches(), "the watches are still armed")
}

// TestWatchEventBeforeNewDataSameConnection: arm a watch, then from the
// same connection set and get. The event is received before the reply of
// the get (in fact before the set's reply).
func TestWatchEventBeforeNewDataSameConnection(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/o", []byte("old"))
	for i := range 20 {
		_, _, ch, err := c.GetW("/o")
		require.NoError(t, err)
		_, err = c.Set("/o", []byte{byte(i)}, -1)
		require.NoError(t, err)
		data, _, err := c.Get("/o")
		require.NoError(t, err)
		require.Equal(t, []byte{byte(i)}, data)
		select {
		case e := <-ch:
			require.Equal(t, zk.EventNodeDataChanged, e.Type)
		default:
			require.FailNow(t, "the get returned the new data before the watch event arrived", "round %d", i)
		}
	}
}

// TestWatchEventBeforeNewDataOtherConnection: the watcher reads the new
// data only after it has received the event, even when another client made
// the change.
func TestWatchEventBeforeNewDataOtherConnection(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, writer := connect(t, srv), connect(t, srv)
	mustCreate(t, writer, "/o", []byte("old"))
	for i := range 20 {
		_, _, ch, err := w.GetW("/o")
		require.NoError(t, err)
		_, err = writer.Set("/o", []byte{byte(i)}, -1)
		require.NoError(t, err)
		// Poll until the watcher sees the new data; by then the event
		// must already be there.
		eventually(t, waitTimeout, func() bool {
			data, _, err := w.Get("/o")
			require.NoError(t, err)
			if len(data) != 1 || data[0] != byte(i) {
				return false
			}
			select {
			case e := <-ch:
				require.Equal(t, zk.EventNodeDataChanged, e.Type)
			default:
				require.FailNow(t, "new data visible before the watch event", "round %d", i)
			}
			return true
		})
	}
}

func TestSessionExpiryFiresWatchesForEphemerals(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	owner, w := connect(t, srv), connect(t, srv)
	mustCreate(t, owner, "/par", nil)
	for _, p := range []string{"/eph", "/par/eph"} {
		_, err := owner.Create(p, nil, zk.FlagEphemeral, openACL)
		require.NoError(t, err)
	}
	_, _, dch, err := w.GetW("/eph")
	require.NoError(t, err)
	_, _, cch, err := w.ChildrenW("/par")
	require.NoError(t, err)
	_, _, ech, err := w.ExistsW("/par/eph")
	require.NoError(t, err)

	require.NoError(t, srv.ExpireSession(owner.SessionID()))
	e := waitEvent(t, dch)
	require.Equal(t, zk.Event{Type: zk.EventNodeDeleted, State: zk.StateSyncConnected, Path: "/eph"}, e)
	e = waitEvent(t, cch)
	require.Equal(t, zk.Event{Type: zk.EventNodeChildrenChanged, State: zk.StateSyncConnected, Path: "/par"}, e)
	e = waitEvent(t, ech)
	require.Equal(t, zk.Event{Type: zk.EventNodeDeleted, State: zk.StateSyncConnected, Path: "/par/eph"}, e)
	waitState(t, owner.ev, zk.StateExpired)
}
