package watch

import (
	"errors"
	"fmt"
	"sync"

	"github.com/paddockzk/paddock/internal/wire"
)

// Watcher receives watch notifications. The server's connection implements
// it; its dynamic type must be comparable (normally a pointer).
type Watcher interface {
	// Notify delivers one event (State is always SyncConnected) triggered by
	// the transaction zxid. It is called without the Manager's lock held
	// and must not block.
	Notify(ev wire.WatcherEvent, zxid int64)
	// SessionID is the id of the session the connection belongs to.
	SessionID() int64
}

// closer is optionally implemented by a Watcher. Add methods (and Restore)
// silently ignore registrations for a watcher whose Closed reports true,
// like ZooKeeper's isDeadWatcher. Closed is called with the Manager's lock
// held and must be cheap (an atomic load). A connection that sets its
// closed flag before calling RemoveWatcher can never leak a watch
// registered by a request still in flight.
type closer interface{ Closed() bool }

// Options configures a Manager. The zero value is a usable default.
type Options struct {
	// MaxWatchesPerWatcher limits the watch entries a single watcher may
	// hold, counted as ZooKeeper counts watches: one per (table, path), so a
	// PERSISTENT watch takes two (data and child table) and adding a mode
	// to an existing entry takes none. 0 means unlimited.
	MaxWatchesPerWatcher int
	// OnFanout, if set, is called once per Trigger call, after the
	// notifications were delivered and without the lock held, with the
	// number of watchers notified (possibly 0).
	OnFanout func(typ wire.EventType, path string, n int)
	// OnImmediate, if set, is called by Restore once per event it sends
	// at once (a setWatches replay finding a change), without the lock
	// held: those events are notifications too, but not a fan-out.
	OnImmediate func(typ wire.EventType)
	// Deliver, if set, replaces Trigger's Notify calls: it is called once
	// per Trigger that notifies anyone, without the lock held, with every
	// watcher to notify in the order Notify would have been called. It
	// lets a server encode one event once for all its watchers and hand
	// them to its writers in batches. ws is only valid during the call;
	// Deliver must not block.
	Deliver func(ev wire.WatcherEvent, zxid int64, ws []Watcher)
}

// ErrTooManyWatches is returned by the Add methods and Restore when a
// watcher would exceed Options.MaxWatchesPerWatcher.
var ErrTooManyWatches = errors.New("watch: too many watches for this watcher")

// mode is a bit set of watch modes of one (watcher, path) entry in a table,
// like ZooKeeper 3.9's WatchStats.
type mode uint8

const (
	modeStandard mode = 1 << iota
	modePersistent
	modeRecursive
)

// modeBits lists the modes in the order of table.nmode.
var modeBits = [3]mode{modeStandard, modePersistent, modeRecursive}

// table indexes.
const (
	dataTable  = 0
	childTable = 1
)

// table is one of the two watch tables.
type table struct {
	watches map[string]map[*wstate]mode
	nmode   [3]int // entries having each mode bit, indexed like modeBits
	pairs   int    // (path, watcher) entries
}

// wstate is the registry's record of one watcher: its reverse index.
type wstate struct {
	w     Watcher
	sid   int64
	paths [2]map[string]struct{} // per table, the paths w has an entry on
	mark  uint64                 // Trigger epoch that last collected w
}

func (s *wstate) count() int { return len(s.paths[0]) + len(s.paths[1]) }

// Manager is the watch registry of one server. Create it with New.
type Manager struct {
	opts Options

	mu       sync.Mutex
	tables   [2]table
	watchers map[Watcher]*wstate // until RemoveWatcher, even with no watch left
	active   int                 // watchers holding at least one watch
	epoch    uint64

	// counters
	sent        uint64
	sentByType  [8]uint64 // indexed by EventType 0..7; only 1..4 are used
	sentBySess  map[int64]uint64
	triggers    uint64
	triggersHit uint64

	pool  sync.Pool // *[]*wstate buffers for Trigger
	wpool sync.Pool // *[]Watcher buffers for Options.Deliver
}

// New returns an empty Manager. Options are optional; if several are
// given, the non-zero fields of later ones override earlier ones.
func New(opts ...Options) *Manager {
	m := &Manager{
		watchers:   make(map[Watcher]*wstate),
		sentBySess: make(map[int64]uint64),
	}
	for _, o := range opts {
		if o.MaxWatchesPerWatcher != 0 {
			m.opts.MaxWatchesPerWatcher = o.MaxWatchesPerWatcher
		}
		if o.OnFanout != nil {
			m.opts.OnFanout = o.OnFanout
		}
		if o.OnImmediate != nil {
			m.opts.OnImmediate = o.OnImmediate
		}
		if o.Deliver != nil {
			m.opts.Deliver = o.Deliver
		}
	}
	for i := range m.tables {
		m.tables[i].watches = make(map[string]map[*wstate]mode)
	}
	m.pool.New = func() any { b := make([]*wstate, 0, 16); return &b }
	m.wpool.New = func() any { b := make([]Watcher, 0, 16); return &b }
	return m
}

// AddData registers a standard (one-shot) data watch, as getData and exists
// do (exists also on a missing node).
func (m *Manager) AddData(path string, w Watcher) error {
	return m.add(w, path, modeStandard, true, false)
}

// AddChild registers a standard (one-shot) child watch, as getChildren does.
func (m *Manager) AddChild(path string, w Watcher) error {
	return m.add(w, path, modeStandard, false, true)
}

// AddPersistent registers an addWatch watch: PERSISTENT (recursive false)
// in both tables, PERSISTENT_RECURSIVE (recursive true) in the data table.
func (m *Manager) AddPersistent(path string, w Watcher, recursive bool) error {
	if recursive {
		return m.add(w, path, modeRecursive, true, false)
	}
	return m.add(w, path, modePersistent, true, true)
}

func (m *Manager) add(w Watcher, path string, md mode, data, child bool) error {
	sid := w.SessionID()
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := w.(closer); ok && c.Closed() {
		return nil // ZooKeeper's isDeadWatcher: ignored silently
	}
	s := m.watchers[w]
	if max := m.opts.MaxWatchesPerWatcher; max > 0 {
		count, need := 0, 0
		if s != nil {
			count = s.count()
		}
		if data && (s == nil || m.tables[dataTable].watches[path][s] == 0) {
			need++
		}
		if child && (s == nil || m.tables[childTable].watches[path][s] == 0) {
			need++
		}
		if count+need > max {
			return fmt.Errorf("%w (limit %d)", ErrTooManyWatches, max)
		}
	}
	if s == nil {
		s = &wstate{w: w, sid: sid}
		m.watchers[w] = s
	}
	if data {
		m.addLocked(dataTable, path, s, md)
	}
	if child {
		m.addLocked(childTable, path, s, md)
	}
	return nil
}

// addLocked adds mode md to (path, s) in table ti.
func (m *Manager) addLocked(ti int, path string, s *wstate, md mode) {
	t := &m.tables[ti]
	set := t.watches[path]
	if set == nil {
		set = make(map[*wstate]mode, 1)
		t.watches[path] = set
	}
	old := set[s]
	if old&md != 0 {
		return
	}
	set[s] = old | md
	t.countModes(md, +1)
	if old == 0 {
		if s.count() == 0 {
			m.active++
		}
		t.pairs++
		if s.paths[ti] == nil {
			s.paths[ti] = make(map[string]struct{})
		}
		s.paths[ti][path] = struct{}{}
	}
}

// removeLocked removes the modes in mask from (path, s) in table ti and
// reports whether any was present. A watcher left with no entry at all
// keeps its record (a one-shot watcher usually re-registers at once) until
// RemoveWatcher.
func (m *Manager) removeLocked(ti int, path string, s *wstate, mask mode) bool {
	set := m.tables[ti].watches[path]
	old := set[s]
	if old&mask == 0 {
		return false
	}
	m.dropLocked(ti, path, set, s, old, mask)
	return true
}

// dropLocked removes the modes in mask (some of them in old, the entry's
// modes) from (path, s) in table ti, whose set of path's watchers is set.
// Trigger calls it while ranging over set: it deletes only s's entry, and
// path's entry once set is empty.
func (m *Manager) dropLocked(ti int, path string, set map[*wstate]mode, s *wstate, old, mask mode) {
	t := &m.tables[ti]
	t.countModes(old&mask, -1)
	if nw := old &^ mask; nw != 0 {
		set[s] = nw
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(t.watches, path)
	}
	t.pairs--
	delete(s.paths[ti], path)
	if s.count() == 0 {
		m.active--
	}
}

// dropPathLocked removes path's entry from table ti at once, when set,
// its watchers, holds standard watches only (a one-shot fan-out firing):
// no per-watcher delete from set.
func (m *Manager) dropPathLocked(ti int, path string, set map[*wstate]mode) {
	t := &m.tables[ti]
	delete(t.watches, path)
	t.countModes(modeStandard, -len(set))
	t.pairs -= len(set)
	for s := range set {
		delete(s.paths[ti], path)
		if s.count() == 0 {
			m.active--
		}
	}
}

func (t *table) countModes(md mode, d int) {
	for i, b := range modeBits {
		if md&b != 0 {
			t.nmode[i] += d
		}
	}
}

func (t *table) recursive() int { return t.nmode[2] }
