package watch

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/internal/wire"
)

func TestTriggerRules(t *testing.T) {
	tests := []struct {
		name  string
		n     int // watchers
		regs  []reg
		trigs []trig
		wantN []int        // return value of each Trigger
		want  map[int][]ev // per watcher, Zxid = index of the trigger + 1
	}{
		{
			name:  "standard data watch is one-shot",
			n:     1,
			regs:  []reg{{0, "data", "/a"}},
			trigs: []trig{{"/a", changed}, {"/a", changed}},
			wantN: []int{1, 0},
			want:  map[int][]ev{0: {{changed, "/a", 1}}},
		},
		{
			name:  "exists on a missing node then create",
			n:     1,
			regs:  []reg{{0, "data", "/a"}},
			trigs: []trig{{"/a", created}, {"/a", deleted}},
			wantN: []int{1, 0},
			want:  map[int][]ev{0: {{created, "/a", 1}}},
		},
		{
			name: "child watch gets NodeChildrenChanged on child create",
			n:    1,
			regs: []reg{{0, "child", "/p"}},
			// what the fsm reports for create /p/c
			trigs: []trig{{"/p/c", created}, {"/p", children}},
			wantN: []int{0, 1},
			want:  map[int][]ev{0: {{children, "/p", 2}}},
		},
		{
			name:  "child watch gets NodeChildrenChanged on child delete",
			n:     1,
			regs:  []reg{{0, "child", "/p"}},
			trigs: []trig{{"/p/c", deleted}, {"/p", children}, {"/p", children}},
			wantN: []int{0, 1, 0},
			want:  map[int][]ev{0: {{children, "/p", 2}}},
		},
		{
			name:  "child watch is not fired by data changes",
			n:     1,
			regs:  []reg{{0, "child", "/p"}},
			trigs: []trig{{"/p", changed}, {"/p", created}},
			wantN: []int{0, 0},
			want:  map[int][]ev{},
		},
		{
			name: "delete fires NodeDeleted once per watcher across both tables",
			n:    3,
			regs: []reg{
				{0, "data", "/p/c"}, {0, "child", "/p/c"},
				{1, "child", "/p/c"},
				{2, "data", "/p/c"},
			},
			trigs: []trig{{"/p/c", deleted}, {"/p/c", deleted}},
			wantN: []int{3, 0},
			want: map[int][]ev{
				0: {{deleted, "/p/c", 1}},
				1: {{deleted, "/p/c", 1}},
				2: {{deleted, "/p/c", 1}},
			},
		},
		{
			name:  "suppressed child watch is still consumed",
			n:     1,
			regs:  []reg{{0, "data", "/a"}, {0, "child", "/a"}},
			trigs: []trig{{"/a", deleted}, {"/a", children}},
			wantN: []int{1, 0},
			want:  map[int][]ev{0: {{deleted, "/a", 1}}},
		},
		{
			name:  "fan-out to every watcher of the path",
			n:     3,
			regs:  []reg{{0, "data", "/a"}, {1, "data", "/a"}, {2, "data", "/b"}},
			trigs: []trig{{"/a", changed}},
			wantN: []int{1 + 1},
			want:  map[int][]ev{0: {{changed, "/a", 1}}, 1: {{changed, "/a", 1}}},
		},
		{
			name: "persistent watch: node events, children changed, survives",
			n:    1,
			regs: []reg{{0, "persistent", "/a"}},
			trigs: []trig{
				{"/a", created}, {"/a", changed},
				{"/a/b", created}, {"/a", children}, // create /a/b
				{"/a/b", changed},
				{"/a/b", deleted}, {"/a", children}, // delete /a/b
				{"/a", deleted}, {"/", children}, // delete /a
				{"/a", created},
			},
			wantN: []int{1, 1, 0, 1, 0, 0, 1, 1, 0, 1},
			want: map[int][]ev{0: {
				{created, "/a", 1}, {changed, "/a", 2}, {children, "/a", 4},
				{children, "/a", 7}, {deleted, "/a", 8}, {created, "/a", 10},
			}},
		},
		{
			name: "recursive watch: descendants with their path, never children",
			n:    1,
			regs: []reg{{0, "recursive", "/a"}},
			trigs: []trig{
				{"/a/b", created}, {"/a", children},
				{"/a/b/c", changed},
				{"/a", changed},
				{"/ab", created}, {"/", children}, // a sibling sharing the prefix
				{"/a/b", deleted}, {"/a", children},
				{"/a/b", changed},
			},
			wantN: []int{1, 0, 1, 1, 0, 0, 1, 0, 1},
			want: map[int][]ev{0: {
				{created, "/a/b", 1}, {changed, "/a/b/c", 3}, {changed, "/a", 4},
				{deleted, "/a/b", 7}, {changed, "/a/b", 9},
			}},
		},
		{
			name:  "recursive watch on the root",
			n:     1,
			regs:  []reg{{0, "recursive", "/"}},
			trigs: []trig{{"/x", created}, {"/", changed}, {"/", children}, {"/x/y/z", deleted}},
			wantN: []int{1, 1, 0, 1},
			want:  map[int][]ev{0: {{created, "/x", 1}, {changed, "/", 2}, {deleted, "/x/y/z", 4}}},
		},
		{
			name:  "at most one event per watcher per Trigger",
			n:     1,
			regs:  []reg{{0, "data", "/a/b"}, {0, "recursive", "/a"}, {0, "recursive", "/"}, {0, "persistent", "/a/b"}},
			trigs: []trig{{"/a/b", changed}, {"/a/b", deleted}},
			wantN: []int{1, 1},
			want:  map[int][]ev{0: {{changed, "/a/b", 1}, {deleted, "/a/b", 2}}},
		},
		{
			name:  "standard and persistent on one path coexist",
			n:     1,
			regs:  []reg{{0, "data", "/a"}, {0, "persistent", "/a"}},
			trigs: []trig{{"/a", changed}, {"/a", changed}},
			wantN: []int{1, 1},
			want:  map[int][]ev{0: {{changed, "/a", 1}, {changed, "/a", 2}}},
		},
		{
			name:  "ancestor standard and persistent watches do not fire for descendants",
			n:     3,
			regs:  []reg{{0, "data", "/a"}, {1, "persistent", "/a"}, {2, "recursive", "/x"}},
			trigs: []trig{{"/a/b", created}, {"/a/b", changed}, {"/a/b", deleted}},
			wantN: []int{0, 0, 0},
			want:  map[int][]ev{},
		},
		{
			name:  "client-only and None event types are ignored",
			n:     1,
			regs:  []reg{{0, "data", "/a"}, {0, "child", "/a"}},
			trigs: []trig{{"/a", wire.EventNone}, {"/a", wire.EventDataWatchRemoved}, {"/a", wire.EventPersistentWatchRemoved}},
			wantN: []int{0, 0, 0},
			want:  map[int][]ev{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := New()
			ws := fakes(tc.n)
			for _, r := range tc.regs {
				r.apply(t, m, ws)
			}
			var gotN []int
			for i, tr := range tc.trigs {
				gotN = append(gotN, m.Trigger(int64(i+1), tr.path, tr.typ))
			}
			require.Equal(t, tc.wantN, gotN)
			for i, w := range ws {
				require.Equal(t, tc.want[i], w.take(t), "watcher %d", i)
			}
		})
	}
}

func TestTriggerConsumesStandardWatches(t *testing.T) {
	m := New()
	w := newFake(1)
	require.NoError(t, m.AddData("/a", w))
	require.NoError(t, m.AddChild("/a", w))
	require.NoError(t, m.AddData("/b", w))
	require.Equal(t, 1, m.Trigger(1, "/a", deleted))
	st := m.Stats()
	require.Equal(t, 1, st.DataWatches) // /b
	require.Zero(t, st.ChildWatches)
	require.Equal(t, 1, st.Paths)
	require.Equal(t, 1, m.Trigger(2, "/b", changed))
	requireEmpty(t, m)
	require.NoError(t, m.AddChild("/c", w)) // the record is reused
	require.Equal(t, 1, m.Stats().Watchers)
	m.RemoveWatcher(w)
	requireForgotten(t, m)
}

func TestNotifyMayCallBack(t *testing.T) {
	m := New()
	w := &rewatcher{m: m, path: "/a"}
	require.NoError(t, m.AddData("/a", w))
	for i := range 5 {
		require.Equal(t, 1, m.Trigger(int64(i+1), "/a", changed))
	}
	require.Equal(t, 5, w.n)
	require.NoError(t, m.Check("/a", wire.WatcherData, w))
}

// rewatcher re-registers its watch from Notify, as a client does after each
// event (the Manager's lock is not held during Notify).
type rewatcher struct {
	m    *Manager
	path string
	n    int
}

func (r *rewatcher) Notify(wire.WatcherEvent, int64) {
	r.n++
	_ = r.m.AddData(r.path, r)
}

func (r *rewatcher) SessionID() int64 { return 7 }

func TestTriggerNoWatchersAllocs(t *testing.T) {
	m := New()
	ws := fakes(2)
	require.NoError(t, m.AddData("/other", ws[0]))
	require.NoError(t, m.AddPersistent("/x", ws[1], true))
	for _, p := range []string{"/a", "/a/b/c", "/"} {
		for _, typ := range []wire.EventType{created, deleted, changed, children} {
			allocs := testing.AllocsPerRun(100, func() { m.Trigger(1, p, typ) })
			require.Zero(t, allocs, "%s %s", p, typ)
		}
	}
}

func TestTriggerFilteredDropsButConsumes(t *testing.T) {
	m := New()
	a, b := newFake(1), newFake(2)
	require.NoError(t, m.AddData("/x", a))
	require.NoError(t, m.AddData("/x", b))
	n := m.TriggerFiltered(5, "/x", wire.EventNodeDataChanged, func(w Watcher) bool { return w == Watcher(a) })
	require.Equal(t, 1, n)
	require.Len(t, a.take(t), 1)
	require.Empty(t, b.take(t), "a watcher without READ gets nothing")
	require.Equal(t, 0, m.TriggerFiltered(6, "/x", wire.EventNodeDataChanged, nil), "both one-shot watches were consumed")
	require.Equal(t, uint64(1), m.Stats().Notifications)
}

// With Options.Deliver, one Trigger hands every watcher to Deliver in one
// call, each once (a data and a child watch on a deleted node are one
// watcher), and no Notify is called; the count, the statistics and the
// consumed watches are as without it.
func TestDeliverGetsEveryWatcherOnceInOneCall(t *testing.T) {
	var calls []struct {
		ev   wire.WatcherEvent
		zxid int64
		ws   []Watcher
	}
	fanned := 0
	m := New(Options{
		Deliver: func(ev wire.WatcherEvent, zxid int64, ws []Watcher) {
			calls = append(calls, struct {
				ev   wire.WatcherEvent
				zxid int64
				ws   []Watcher
			}{ev, zxid, append([]Watcher(nil), ws...)})
		},
		OnFanout: func(_ wire.EventType, _ string, n int) { fanned += n },
	})
	ws := fakes(40)
	for _, w := range ws {
		require.NoError(t, m.AddData("/x", w))
	}
	require.NoError(t, m.AddChild("/x", ws[0]))
	require.NoError(t, m.AddChild("/x", newFake(99)))

	require.Equal(t, 41, m.Trigger(7, "/x", deleted))
	require.Len(t, calls, 1)
	got := calls[0]
	require.Equal(t, wire.WatcherEvent{Type: deleted, State: wire.StateSyncConnected, Path: "/x"}, got.ev)
	require.Equal(t, int64(7), got.zxid)
	require.Len(t, got.ws, 41)
	seen := map[Watcher]int{}
	for _, w := range got.ws {
		seen[w]++
	}
	require.Len(t, seen, 41, "a watcher was delivered twice")
	for _, w := range ws {
		require.Equal(t, 1, seen[w])
		require.Empty(t, w.take(t), "Notify was called besides Deliver")
	}
	require.Equal(t, 41, fanned)
	require.Equal(t, uint64(41), m.Stats().Notifications)
	requireEmpty(t, m)

	require.Zero(t, m.Trigger(8, "/x", changed), "the one-shot watches were consumed")
	require.Len(t, calls, 1, "Deliver was called for a change nobody watches")
}

// A change that fires only one-shot watches drops its path's entry at
// once, and one that also meets a persistent watch drops them one by
// one; either way the registry's counts and reverse index end as if each
// watch were removed alone.
func TestTriggerDropsOneShotSetsWhole(t *testing.T) {
	m := New()
	ws := fakes(4)
	require.NoError(t, m.AddData("/one", ws[0]))
	require.NoError(t, m.AddData("/one", ws[1]))
	require.NoError(t, m.AddData("/other", ws[1])) // ws[1] keeps a watch
	require.NoError(t, m.AddData("/mixed", ws[2]))
	require.NoError(t, m.AddPersistent("/mixed", ws[3], false))

	require.Equal(t, 2, m.Trigger(1, "/one", changed))
	st := m.Stats()
	require.Equal(t, 2, st.DataWatches, "/other and ws[2]'s on /mixed")
	require.Equal(t, 1, st.PersistentWatches)
	require.Equal(t, 3, st.Watchers, "ws[0] holds nothing now")
	require.Equal(t, map[string][]int64{"/other": {101}, "/mixed": {102, 103}}, m.ByPath())
	require.Zero(t, m.Trigger(2, "/one", changed), "the one-shot watches were consumed")

	require.Equal(t, 2, m.Trigger(3, "/mixed", changed))
	require.Equal(t, 1, m.Trigger(4, "/mixed", changed), "the persistent watch stays")
	require.Equal(t, 1, m.Trigger(5, "/other", changed))
	m.RemoveWatcher(ws[3])
	requireEmpty(t, m)
}
