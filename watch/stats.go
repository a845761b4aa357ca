package watch

import (
	"slices"

	"github.com/paddockzk/paddock/internal/wire"
)

// Stats is a snapshot of the counters and of the current watch counts.
type Stats struct {
	// Notifications is the number of watch events sent (by Trigger and by
	// Restore's immediate events).
	Notifications uint64
	// ByType counts Notifications per event type (only types sent so far).
	ByType map[wire.EventType]uint64
	// BySession counts Notifications per session id.
	BySession map[int64]uint64
	// Triggers is the number of Trigger calls with a watchable event type;
	// TriggersNotified those that notified at least one watcher.
	Triggers, TriggersNotified uint64

	// Current watches, one per (watcher, path) and kind: standard data
	// watches (getData, exists), standard child watches (getChildren),
	// PERSISTENT watches (counted once although they sit in both tables)
	// and PERSISTENT_RECURSIVE watches.
	DataWatches, ChildWatches, PersistentWatches, RecursiveWatches int
	// Paths is the number of distinct watched paths (both tables).
	Paths int
	// Watchers is the number of watchers (connections) holding a watch.
	Watchers int
}

// Stats returns the counters and current watch counts.
func (m *Manager) Stats() Stats {
	m.mu.Lock()
	defer m.mu.Unlock()
	st := Stats{
		Notifications:     m.sent,
		ByType:            make(map[wire.EventType]uint64),
		BySession:         make(map[int64]uint64, len(m.sentBySess)),
		Triggers:          m.triggers,
		TriggersNotified:  m.triggersHit,
		DataWatches:       m.tables[dataTable].nmode[0],
		ChildWatches:      m.tables[childTable].nmode[0],
		PersistentWatches: m.tables[dataTable].nmode[1],
		RecursiveWatches:  m.tables[dataTable].nmode[2],
		Paths:             m.pathsLocked(),
		Watchers:          m.active,
	}
	for t, n := range m.sentByType {
		if n > 0 {
			st.ByType[wire.EventType(t)] = n
		}
	}
	for sid, n := range m.sentBySess {
		st.BySession[sid] = n
	}
	return st
}

// SessionNotifications returns the notifications sent to session sid.
func (m *Manager) SessionNotifications(sid int64) uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sentBySess[sid]
}

// ForgetSession drops the per-session counter of sid (call it when the
// session is closed or expired, once its numbers are no longer needed).
func (m *Manager) ForgetSession(sid int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sentBySess, sid)
}

// ResetCounters zeroes every counter; watches are untouched.
func (m *Manager) ResetCounters() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent, m.triggers, m.triggersHit = 0, 0, 0
	m.sentByType = [8]uint64{}
	clear(m.sentBySess)
}

func (m *Manager) pathsLocked() int {
	d, c := m.tables[dataTable].watches, m.tables[childTable].watches
	n := len(d)
	for p := range c {
		if _, ok := d[p]; !ok {
			n++
		}
	}
	return n
}

// Summary is the wchs view.
type Summary struct {
	// Connections is the number of watchers holding at least one watch.
	Connections int
	// Paths is the number of distinct watched paths.
	Paths int
	// Watches counts (table, path, watcher) entries like ZooKeeper's
	// zk_watch_count: a PERSISTENT watch counts twice (data and child table).
	Watches int
}

// Summary returns the wchs numbers. Unlike ZooKeeper, whose wchs/wchc/wchp
// report only the data table, Paddock's admin views cover both tables.
func (m *Manager) Summary() Summary {
	m.mu.Lock()
	defer m.mu.Unlock()
	return Summary{
		Connections: m.active,
		Paths:       m.pathsLocked(),
		Watches:     m.tables[dataTable].pairs + m.tables[childTable].pairs,
	}
}

// ByPath returns, for wchp, each watched path with the sorted, distinct
// session ids watching it (either table).
func (m *Manager) ByPath() map[string][]int64 {
	m.mu.Lock()
	out := make(map[string][]int64)
	for ti := range m.tables {
		for p, set := range m.tables[ti].watches {
			for s := range set {
				out[p] = append(out[p], s.sid)
			}
		}
	}
	m.mu.Unlock()
	for p, ids := range out {
		slices.Sort(ids)
		out[p] = slices.Compact(ids)
	}
	return out
}

// BySession returns, for wchc, each session id with the sorted, distinct
// paths its connection(s) watch (either table).
func (m *Manager) BySession() map[int64][]string {
	m.mu.Lock()
	out := make(map[int64][]string)
	for _, s := range m.watchers {
		for ti := range s.paths {
			for p := range s.paths[ti] {
				out[s.sid] = append(out[s.sid], p)
			}
		}
	}
	m.mu.Unlock()
	for sid, ps := range out {
		slices.Sort(ps)
		out[sid] = slices.Compact(ps)
	}
	return out
}
