package watch

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
)

type fanout struct {
	typ  wire.EventType
	path string
	n    int
}

func TestCountersAndFanout(t *testing.T) {
	var fans []fanout
	m := New(Options{OnFanout: func(typ wire.EventType, path string, n int) {
		fans = append(fans, fanout{typ, path, n})
	}})
	// w0 and w2 are two connections of session 100 (one after the other
	// in real life); w1 is session 101.
	w0, w1, w2 := newFake(100), newFake(101), newFake(100)
	// The herd: three waiters watch /lock's children.
	for _, w := range []*fake{w0, w1, w2} {
		require.NoError(t, m.AddChild("/lock", w))
	}
	require.NoError(t, m.AddData("/lock/n1", w1))
	require.NoError(t, m.AddPersistent("/cfg", w0, true))

	require.Equal(t, 1, m.Trigger(1, "/lock/n1", deleted))
	require.Equal(t, 3, m.Trigger(1, "/lock", children))
	require.Equal(t, 0, m.Trigger(2, "/lock", children))
	require.Equal(t, 1, m.Trigger(3, "/cfg/x", created))
	require.Equal(t, 1, m.Trigger(4, "/cfg/x", changed))
	require.Equal(t, 0, m.Trigger(5, "/nobody", changed))
	require.Equal(t, 0, m.Trigger(6, "/cfg", wire.EventNone)) // ignored entirely

	require.Equal(t, []fanout{
		{deleted, "/lock/n1", 1}, {children, "/lock", 3}, {children, "/lock", 0},
		{created, "/cfg/x", 1}, {changed, "/cfg/x", 1}, {changed, "/nobody", 0},
	}, fans)

	st := m.Stats()
	require.Equal(t, uint64(6), st.Notifications)
	require.Equal(t, map[wire.EventType]uint64{deleted: 1, children: 3, created: 1, changed: 1}, st.ByType)
	require.Equal(t, map[int64]uint64{100: 4, 101: 2}, st.BySession)
	require.Equal(t, uint64(6), st.Triggers)
	require.Equal(t, uint64(4), st.TriggersNotified)
	require.Equal(t, uint64(4), m.SessionNotifications(100))
	require.Equal(t, uint64(0), m.SessionNotifications(999))

	// Per-session counters survive the connection.
	m.RemoveWatcher(w0)
	require.Equal(t, uint64(4), m.SessionNotifications(100))
	m.ForgetSession(100)
	require.Equal(t, uint64(0), m.SessionNotifications(100))
	require.Equal(t, uint64(6), m.Stats().Notifications)

	m.ResetCounters()
	st = m.Stats()
	require.Zero(t, st.Notifications)
	require.Empty(t, st.ByType)
	require.Empty(t, st.BySession)
	require.Zero(t, st.Triggers)
	require.Zero(t, st.TriggersNotified)
}

func TestAdminViews(t *testing.T) {
	m := New()
	a, b, c := newFake(3), newFake(1), newFake(2)
	require.NoError(t, m.AddData("/z", a))
	require.NoError(t, m.AddChild("/z", a))
	require.NoError(t, m.AddData("/a", a))
	require.NoError(t, m.AddPersistent("/p", b, false))
	require.NoError(t, m.AddPersistent("/r", b, true))
	require.NoError(t, m.AddChild("/z", b))
	require.NoError(t, m.AddData("/z", c))

	require.Equal(t, map[string][]int64{
		"/z": {1, 2, 3},
		"/a": {3},
		"/p": {1},
		"/r": {1},
	}, m.ByPath())
	require.Equal(t, map[int64][]string{
		3: {"/a", "/z"},
		1: {"/p", "/r", "/z"},
		2: {"/z"},
	}, m.BySession())
	// a: data /z, child /z, data /a; b: /p twice, /r, child /z; c: data /z
	require.Equal(t, Summary{Connections: 3, Paths: 4, Watches: 3 + 4 + 1}, m.Summary())
	st := m.Stats()
	require.Equal(t, 3, st.DataWatches)
	require.Equal(t, 2, st.ChildWatches)
	require.Equal(t, 1, st.PersistentWatches)
	require.Equal(t, 1, st.RecursiveWatches)
	require.Equal(t, 4, st.Paths)
	require.Equal(t, 3, st.Watchers)
}

func TestConcurrentUse(t *testing.T) {
	var fanned sync.Map
	m := New(Options{OnFanout: func(_ wire.EventType, path string, n int) { fanned.Store(path, n) }})
	const workers, rounds = 8, 300
	ws := fakes(workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			w := ws[i]
			for r := range rounds {
				p := fmt.Sprintf("/n%d", r%7)
				_ = m.AddData(p, w)
				_ = m.AddChild("/", w)
				if r%5 == 0 {
					_ = m.AddPersistent("/n1", w, r%10 == 0)
				}
				m.Trigger(int64(r), p, wire.EventNodeDataChanged)
				m.Trigger(int64(r), p+"/c", wire.EventNodeCreated)
				m.Trigger(int64(r), "/", wire.EventNodeChildrenChanged)
				_ = m.Check(p, wire.WatcherAny, w)
				if r%3 == 0 {
					_ = m.Remove(p, wire.WatcherAny, w)
				}
				if r%50 == 0 {
					_ = m.Stats()
					_ = m.ByPath()
					_ = m.BySession()
					_ = m.Summary()
					m.RemoveWatcher(w)
				}
			}
			m.RemoveWatcher(w)
		})
	}
	wg.Wait()
	requireForgotten(t, m)
	var total uint64
	for _, w := range ws {
		total += uint64(len(w.take(t)))
	}
	require.Equal(t, m.Stats().Notifications, total)
}
