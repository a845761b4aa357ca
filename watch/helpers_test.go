package watch

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
)

// ev is a recorded notification.
type ev struct {
	Type wire.EventType
	Path string
	Zxid int64
}

// fake is a Watcher that records what it is sent.
type fake struct {
	sid int64

	mu     sync.Mutex
	evs    []ev
	states []wire.State
}

func newFake(sid int64) *fake { return &fake{sid: sid} }

func (f *fake) Notify(e wire.WatcherEvent, zxid int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.evs = append(f.evs, ev{e.Type, e.Path, zxid})
	f.states = append(f.states, e.State)
}

func (f *fake) SessionID() int64 { return f.sid }

// take returns and forgets the recorded events; it checks that every event
// carried SyncConnected.
func (f *fake) take(t *testing.T) []ev {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.states {
		require.Equal(t, wire.StateSyncConnected, s)
	}
	out := f.evs
	f.evs, f.states = nil, nil
	return out
}

// Short names for event types.
const (
	created  = wire.EventNodeCreated
	deleted  = wire.EventNodeDeleted
	changed  = wire.EventNodeDataChanged
	children = wire.EventNodeChildrenChanged
)

// reg is a registration in a table-driven test.
type reg struct {
	w    int    // watcher index
	kind string // data, child, persistent, recursive
	path string
}

func (r reg) apply(t *testing.T, m *Manager, ws []*fake) {
	t.Helper()
	var err error
	switch r.kind {
	case "data":
		err = m.AddData(r.path, ws[r.w])
	case "child":
		err = m.AddChild(r.path, ws[r.w])
	case "persistent":
		err = m.AddPersistent(r.path, ws[r.w], false)
	case "recursive":
		err = m.AddPersistent(r.path, ws[r.w], true)
	default:
		t.Fatalf("bad kind %q", r.kind)
	}
	require.NoError(t, err)
}

// trig is a Trigger call in a table-driven test.
type trig struct {
	path string
	typ  wire.EventType
}

func fakes(n int) []*fake {
	ws := make([]*fake, n)
	for i := range ws {
		ws[i] = newFake(int64(100 + i))
	}
	return ws
}

// requireEmpty checks that the registry holds nothing at all.
func requireEmpty(t *testing.T, m *Manager) {
	t.Helper()
	st := m.Stats()
	require.Zero(t, st.DataWatches)
	require.Zero(t, st.ChildWatches)
	require.Zero(t, st.PersistentWatches)
	require.Zero(t, st.RecursiveWatches)
	require.Zero(t, st.Paths)
	require.Zero(t, st.Watchers)
	require.Equal(t, Summary{}, m.Summary())
	require.Empty(t, m.ByPath())
	require.Empty(t, m.BySession())
	m.mu.Lock()
	defer m.mu.Unlock()
	for ti := range m.tables {
		require.Empty(t, m.tables[ti].watches)
		require.Equal(t, [3]int{}, m.tables[ti].nmode)
		require.Zero(t, m.tables[ti].pairs)
	}
	require.Zero(t, m.active)
	for _, s := range m.watchers {
		require.Zero(t, s.count())
	}
}

// requireForgotten checks that the Manager keeps no record at all.
func requireForgotten(t *testing.T, m *Manager) {
	t.Helper()
	requireEmpty(t, m)
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Empty(t, m.watchers)
}
