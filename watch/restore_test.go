package watch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
)

type node struct{ mzxid, pzxid int64 }

func lookupIn(tree map[string]node) Lookup {
	return func(p string) (bool, int64, int64) {
		n, ok := tree[p]
		return ok, n.mzxid, n.pzxid
	}
}

func TestRestore(t *testing.T) {
	const rel, now = 10, 42
	tree := map[string]node{
		"/":        {1, 30},
		"/changed": {11, 1},
		"/same":    {10, 10},
		"/exists":  {5, 5},
		"/kids":    {3, 12},
	}
	m := New()
	w := newFake(1)
	lists := WatchLists{
		Data:       []string{"/gone", "/changed", "/same"},
		Exist:      []string{"/exists", "/missing"},
		Child:      []string{"/gone", "/kids", "/same"},
		Persistent: []string{"/gone2", "/same"},
		Recursive:  []string{"/"},
	}
	var fanouts int
	m.opts.OnFanout = func(wire.EventType, string, int) { fanouts++ }
	immediate := map[wire.EventType]int{}
	m.opts.OnImmediate = func(typ wire.EventType) { immediate[typ]++ }
	require.NoError(t, m.Restore(w, rel, now, lists, lookupIn(tree)))

	// Immediate events, in list order, stamped with the given zxid.
	require.Equal(t, []ev{
		{deleted, "/gone", now},
		{changed, "/changed", now},
		{created, "/exists", now},
		{deleted, "/gone", now}, // from the child list too: ZooKeeper does not de-duplicate
		{children, "/kids", now},
	}, w.take(t))
	require.Zero(t, fanouts)
	require.Equal(t, map[wire.EventType]int{deleted: 2, changed: 1, created: 1, children: 1}, immediate,
		"OnImmediate is called once per event sent at once")

	// Registrations.
	for _, c := range []struct {
		path string
		typ  wire.WatcherType
		ok   bool
	}{
		{"/gone", wire.WatcherAny, false},
		{"/changed", wire.WatcherAny, false},
		{"/same", wire.WatcherData, true},
		{"/exists", wire.WatcherAny, false},
		{"/missing", wire.WatcherData, true},
		{"/kids", wire.WatcherAny, false},
		{"/same", wire.WatcherChildren, true},
		{"/same", wire.WatcherPersistent, true},
		{"/gone2", wire.WatcherPersistent, true}, // unconditionally, even if missing
		{"/", wire.WatcherPersistentRecursive, true},
	} {
		err := m.Check(c.path, c.typ, w)
		if c.ok {
			require.NoError(t, err, c.path)
		} else {
			require.ErrorIs(t, err, wire.ErrNoWatcher, c.path)
		}
	}
	st := m.Stats()
	require.Equal(t, 2, st.DataWatches)
	require.Equal(t, 1, st.ChildWatches)
	require.Equal(t, 2, st.PersistentWatches)
	require.Equal(t, 1, st.RecursiveWatches)
	require.Equal(t, uint64(5), st.Notifications)
	require.Equal(t, map[wire.EventType]uint64{deleted: 2, changed: 1, created: 1, children: 1}, st.ByType)
	require.Equal(t, map[int64]uint64{1: 5}, st.BySession)
	require.Zero(t, st.Triggers)

	// The restored watches behave like fresh ones.
	require.Equal(t, 1, m.Trigger(50, "/missing", created))
	require.Equal(t, 1, m.Trigger(51, "/missing", created)) // now only via the recursive watch on /
	require.Equal(t, []ev{{created, "/missing", 50}, {created, "/missing", 51}}, w.take(t))
	m.RemoveWatcher(w)
	requireForgotten(t, m)
}

func TestRestoreSetWatchesV1(t *testing.T) {
	// SetWatches (opcode 101) carries no persistent lists.
	m := New()
	w := newFake(1)
	tree := map[string]node{"/a": {1, 1}}
	require.NoError(t, m.Restore(w, 5, 6, WatchLists{Data: []string{"/a"}, Exist: []string{"/b"}, Child: []string{"/a"}}, lookupIn(tree)))
	require.Empty(t, w.take(t))
	require.Equal(t, kinds{2, 1, 0, 0}, kindsOf(m))
	require.Equal(t, 1, m.Trigger(7, "/a", deleted))
	require.Equal(t, 1, m.Trigger(8, "/b", created))
	require.Equal(t, []ev{{deleted, "/a", 7}, {created, "/b", 8}}, w.take(t))
	requireEmpty(t, m)
}
