package watch

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
)

// kinds summarises what a watcher has on a path, via Stats of a Manager
// with a single watcher and path.
type kinds struct{ data, child, persistent, recursive int }

func kindsOf(m *Manager) kinds {
	st := m.Stats()
	return kinds{st.DataWatches, st.ChildWatches, st.PersistentWatches, st.RecursiveWatches}
}

var all = []string{"data", "child", "persistent", "recursive"}

func TestRemove(t *testing.T) {
	tests := []struct {
		name    string
		regs    []string // kinds registered by watcher 0 on /a
		typ     wire.WatcherType
		path    string // default /a
		wantErr error
		left    kinds
	}{
		{"children removes the child watch", []string{"data", "child"}, wire.WatcherChildren, "", nil, kinds{1, 0, 0, 0}},
		{"data removes the data watch", []string{"data", "child"}, wire.WatcherData, "", nil, kinds{0, 1, 0, 0}},
		{"children without one", []string{"data"}, wire.WatcherChildren, "", wire.ErrNoWatcher, kinds{1, 0, 0, 0}},
		{"data without one", []string{"child"}, wire.WatcherData, "", wire.ErrNoWatcher, kinds{0, 1, 0, 0}},
		{"data does not remove persistent", []string{"persistent"}, wire.WatcherData, "", wire.ErrNoWatcher, kinds{0, 0, 1, 0}},
		{"children does not remove persistent", []string{"persistent"}, wire.WatcherChildren, "", wire.ErrNoWatcher, kinds{0, 0, 1, 0}},
		{"data does not remove recursive", []string{"recursive"}, wire.WatcherData, "", wire.ErrNoWatcher, kinds{0, 0, 0, 1}},
		{"any removes everything", all, wire.WatcherAny, "", nil, kinds{}},
		{"any removes a persistent watch", []string{"persistent"}, wire.WatcherAny, "", nil, kinds{}},
		{"any removes a recursive watch", []string{"recursive"}, wire.WatcherAny, "", nil, kinds{}},
		{"any without one", nil, wire.WatcherAny, "", wire.ErrNoWatcher, kinds{}},
		{"persistent removes only persistent", all, wire.WatcherPersistent, "", nil, kinds{1, 1, 0, 1}},
		{"persistent does not remove recursive", []string{"recursive"}, wire.WatcherPersistent, "", wire.ErrNoWatcher, kinds{0, 0, 0, 1}},
		{"recursive removes only recursive", all, wire.WatcherPersistentRecursive, "", nil, kinds{1, 1, 1, 0}},
		{"recursive does not remove persistent", []string{"persistent"}, wire.WatcherPersistentRecursive, "", wire.ErrNoWatcher, kinds{0, 0, 1, 0}},
		{"other path", all, wire.WatcherAny, "/a/b", wire.ErrNoWatcher, kinds{1, 1, 1, 1}},
		{"parent path of a recursive watch", []string{"recursive"}, wire.WatcherAny, "/", wire.ErrNoWatcher, kinds{0, 0, 0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			ws := fakes(2)
			for _, k := range tc.regs {
				reg{0, k, "/a"}.apply(t, m, ws)
			}
			path := tc.path
			if path == "" {
				path = "/a"
			}
			// Another watcher's identical watches are never touched.
			require.ErrorIs(t, m.Remove(path, tc.typ, ws[1]), wire.ErrNoWatcher)
			require.ErrorIs(t, m.Check(path, tc.typ, ws[1]), wire.ErrNoWatcher)

			// Check agrees with Remove and removes nothing.
			before := kindsOf(m)
			checkErr := m.Check(path, tc.typ, ws[0])
			require.Equal(t, before, kindsOf(m))

			err := m.Remove(path, tc.typ, ws[0])
			if tc.wantErr == nil {
				require.NoError(t, err)
				require.NoError(t, checkErr)
				// Nothing left to remove: a second call fails.
				require.ErrorIs(t, m.Remove(path, tc.typ, ws[0]), wire.ErrNoWatcher)
				require.ErrorIs(t, m.Check(path, tc.typ, ws[0]), wire.ErrNoWatcher)
			} else {
				require.ErrorIs(t, err, tc.wantErr)
				require.Equal(t, wire.ErrNoWatcher, err) // the bare code, for the reply header
				require.ErrorIs(t, checkErr, tc.wantErr)
			}
			require.Equal(t, tc.left, kindsOf(m))
			if tc.left == (kinds{}) {
				requireEmpty(t, m)
			}
		})
	}
}

func TestRemovedWatchesDoNotFire(t *testing.T) {
	m := New()
	w := newFake(1)
	for _, k := range all {
		reg{0, k, "/a"}.apply(t, m, []*fake{w})
	}
	require.NoError(t, m.Remove("/a", wire.WatcherAny, w))
	for _, typ := range []wire.EventType{created, changed, deleted, children} {
		require.Zero(t, m.Trigger(1, "/a", typ))
		require.Zero(t, m.Trigger(1, "/a/b", typ))
	}
	require.Empty(t, w.take(t))
}

func TestCheck(t *testing.T) {
	types := []wire.WatcherType{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny,
		wire.WatcherPersistent, wire.WatcherPersistentRecursive}
	tests := []struct {
		kind string
		ok   []wire.WatcherType // the types that match
	}{
		{"data", []wire.WatcherType{wire.WatcherData, wire.WatcherAny}},
		{"child", []wire.WatcherType{wire.WatcherChildren, wire.WatcherAny}},
		{"persistent", []wire.WatcherType{wire.WatcherAny, wire.WatcherPersistent}},
		{"recursive", []wire.WatcherType{wire.WatcherAny, wire.WatcherPersistentRecursive}},
	}
	for _, tc := range tests {
		t.Run(tc.kind, func(t *testing.T) {
			m := New()
			ws := fakes(1)
			reg{0, tc.kind, "/a"}.apply(t, m, ws)
			for _, typ := range types {
				err := m.Check("/a", typ, ws[0])
				if contains(tc.ok, typ) {
					require.NoError(t, err, typ)
				} else {
					require.ErrorIs(t, err, wire.ErrNoWatcher, typ)
				}
				// recursive watches are not inherited by descendants
				require.ErrorIs(t, m.Check("/a/b", typ, ws[0]), wire.ErrNoWatcher)
			}
		})
	}
}

func contains(ts []wire.WatcherType, t wire.WatcherType) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func TestInvalidWatcherType(t *testing.T) {
	m := New()
	w := newFake(1)
	require.NoError(t, m.AddData("/a", w))
	for _, typ := range []wire.WatcherType{0, 6, -1} {
		require.ErrorIs(t, m.Remove("/a", typ, w), wire.ErrMarshallingError)
		require.ErrorIs(t, m.Check("/a", typ, w), wire.ErrMarshallingError)
	}
	require.NoError(t, m.Check("/a", wire.WatcherData, w))
}

func TestRemoveWatcher(t *testing.T) {
	m := New()
	ws := fakes(2)
	paths := []string{"/", "/a", "/a/b", "/c"}
	for i := range ws {
		for _, p := range paths {
			for _, k := range all {
				reg{i, k, p}.apply(t, m, ws)
			}
		}
	}
	st := m.Stats()
	require.Equal(t, kinds{8, 8, 8, 8}, kindsOf(m))
	require.Equal(t, 4, st.Paths)
	require.Equal(t, 2, st.Watchers)
	require.Equal(t, Summary{Connections: 2, Paths: 4, Watches: 2 * 4 * 2}, m.Summary())

	m.RemoveWatcher(ws[0])
	require.Equal(t, kinds{4, 4, 4, 4}, kindsOf(m))
	require.Equal(t, Summary{Connections: 1, Paths: 4, Watches: 4 * 2}, m.Summary())
	require.Equal(t, 1, m.Trigger(1, "/a/b/x", created)) // ws[1]'s recursive watches
	require.Empty(t, ws[0].take(t))

	m.RemoveWatcher(ws[1])
	m.RemoveWatcher(ws[1]) // idempotent
	requireForgotten(t, m)
	require.Zero(t, m.Trigger(2, "/a/b", deleted))
}

func TestLimit(t *testing.T) {
	m := New(Options{MaxWatchesPerWatcher: 3})
	w, other := newFake(1), newFake(2)
	tooMany := func(err error) {
		t.Helper()
		require.Error(t, err)
		require.True(t, errors.Is(err, ErrTooManyWatches), err)
	}
	require.NoError(t, m.AddData("/a", w))
	require.NoError(t, m.AddData("/b", w))
	tooMany(m.AddPersistent("/c", w, false)) // needs two entries
	require.NoError(t, m.AddChild("/c", w))  // 3
	tooMany(m.AddData("/d", w))
	require.NoError(t, m.AddData("/a", w))                 // already there
	require.NoError(t, m.AddPersistent("/a", w, true))     // a mode on an existing entry
	tooMany(m.AddPersistent("/a", w, false))               // needs the child-table entry
	require.NoError(t, m.AddData("/d", other))             // limits are per watcher
	require.Equal(t, 1, m.Trigger(1, "/b", changed))       // frees one
	require.NoError(t, m.AddData("/d", w))                 // 3 again
	require.Equal(t, kinds{3, 1, 0, 1}, kindsOf(m))        // w: /a /d, other: /d; w: child /c; w: recursive /a
	require.Equal(t, 4, m.Summary().Watches)               // w: /a /c(child) /d; other: /d
	require.NoError(t, m.Remove("/c", wire.WatcherAny, w)) // frees one
	require.NoError(t, m.AddChild("/e", w))

	// Restore registers what fits and reports the rest.
	m.RemoveWatcher(w)
	lookup := func(string) (bool, int64, int64) { return true, 0, 0 }
	err := m.Restore(w, 10, 11, WatchLists{Data: []string{"/1", "/2"}, Persistent: []string{"/3"}, Child: []string{"/4"}}, lookup)
	tooMany(err)
	require.NoError(t, m.Check("/1", wire.WatcherData, w))
	require.NoError(t, m.Check("/2", wire.WatcherData, w))
	require.NoError(t, m.Check("/4", wire.WatcherChildren, w))
	require.ErrorIs(t, m.Check("/3", wire.WatcherPersistent, w), wire.ErrNoWatcher)
}

// closingFake is a fake that can be marked closed.
type closingFake struct {
	fake
	closed bool
}

func (c *closingFake) Closed() bool { return c.closed }

func TestClosedWatcherIsIgnored(t *testing.T) {
	m := New()
	w := &closingFake{fake: fake{sid: 1}}
	require.NoError(t, m.AddData("/a", w))
	w.closed = true
	m.RemoveWatcher(w)
	// A request still in flight registers after the disconnect.
	require.NoError(t, m.AddData("/b", w))
	require.NoError(t, m.AddPersistent("/c", w, true))
	require.NoError(t, m.Restore(w, 0, 1, WatchLists{Child: []string{"/d"}}, func(string) (bool, int64, int64) { return true, 0, 0 }))
	requireForgotten(t, m)
}
