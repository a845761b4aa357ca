package watch

import (
	"fmt"

	"github.com/paddockzk/paddock/internal/wire"
)

// selector says which modes of which table a WatcherType designates, as
// ZooKeeper 3.9's DataTree.removeWatch and containsWatch do.
type selector struct {
	mask [2]mode // per table; 0 = table not concerned
}

const allModes = modeStandard | modePersistent | modeRecursive

// selectorFor maps a WatcherType to its table/mode selection:
//   - Children: the standard watch of the child table;
//   - Data: the standard watch of the data table (getData and exists);
//   - Persistent: the PERSISTENT watch (both tables);
//   - PersistentRecursive: the PERSISTENT_RECURSIVE watch (data table);
//   - Any: every mode of both tables, persistent ones included
//     (ZooKeeper >= 3.9 passes a null mode, which matches all modes).
func selectorFor(typ wire.WatcherType) (selector, bool) {
	var sel selector
	switch typ {
	case wire.WatcherChildren:
		sel.mask[childTable] = modeStandard
	case wire.WatcherData:
		sel.mask[dataTable] = modeStandard
	case wire.WatcherAny:
		sel.mask = [2]mode{allModes, allModes}
	case wire.WatcherPersistent:
		sel.mask = [2]mode{modePersistent, modePersistent}
	case wire.WatcherPersistentRecursive:
		sel.mask[dataTable] = modeRecursive
	default:
		return sel, false
	}
	return sel, true
}

// badWatcherType is returned for an undefined WatcherType. ZooKeeper's
// WatcherType.fromInt throws, and FinalRequestProcessor turns the exception
// into MARSHALLINGERROR.
func badWatcherType(typ wire.WatcherType) error {
	return fmt.Errorf("watch: invalid watcher type %d: %w", int32(typ), wire.ErrMarshallingError)
}

// Remove implements removeWatches for w's watch on path (exact path only)
// of kind typ; see selectorFor for what each WatcherType removes. It returns
// wire.ErrNoWatcher if nothing matched.
func (m *Manager) Remove(path string, typ wire.WatcherType, w Watcher) error {
	sel, ok := selectorFor(typ)
	if !ok {
		return badWatcherType(typ)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.watchers[w]
	if s == nil {
		return wire.ErrNoWatcher
	}
	removed := false
	// Child table first, as ZooKeeper does.
	for _, ti := range [2]int{childTable, dataTable} {
		if sel.mask[ti] != 0 && m.removeLocked(ti, path, s, sel.mask[ti]) {
			removed = true
		}
	}
	if !removed {
		return wire.ErrNoWatcher
	}
	return nil
}

// Check implements checkWatches: it matches like Remove but removes
// nothing. It returns nil if w has such a watch on path, else
// wire.ErrNoWatcher.
func (m *Manager) Check(path string, typ wire.WatcherType, w Watcher) error {
	sel, ok := selectorFor(typ)
	if !ok {
		return badWatcherType(typ)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.watchers[w]; s != nil {
		for ti := range m.tables {
			if m.tables[ti].watches[path][s]&sel.mask[ti] != 0 {
				return nil
			}
		}
	}
	return wire.ErrNoWatcher
}

// RemoveWatcher drops every watch of w and the Manager's record of w, in
// time proportional to w's watches. The server must call it when a
// connection goes away. Counters are kept.
func (m *Manager) RemoveWatcher(w Watcher) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.watchers[w]
	if s == nil {
		return
	}
	for ti := range m.tables {
		for p := range s.paths[ti] {
			m.removeLocked(ti, p, s, allModes)
		}
	}
	delete(m.watchers, w)
}

// WatchLists are the path lists of a SetWatches / SetWatches2 request.
// SetWatches (opcode 101) has only Data, Exist and Child.
type WatchLists struct {
	Data, Exist, Child, Persistent, Recursive []string
}

// Lookup reports whether a znode exists and, if so, its mzxid and pzxid.
type Lookup func(path string) (exists bool, mzxid, pzxid int64)

// Restore re-establishes a reconnecting client's watches (SetWatches /
// SetWatches2 with relativeZxid = relZxid), following ZooKeeper's
// DataTree.setWatches, in this order:
//   - Data: node gone → NodeDeleted now; mzxid > relZxid → NodeDataChanged
//     now; else a standard data watch is registered.
//   - Exist: node exists → NodeCreated now; else a standard data watch.
//   - Child: node gone → NodeDeleted now; pzxid > relZxid →
//     NodeChildrenChanged now; else a standard child watch.
//   - Persistent, Recursive: registered unconditionally.
//
// Immediate events carry zxid and are delivered (and counted) like
// triggered ones, in list order, without de-duplication (ZooKeeper sends
// two NodeDeleted if a path is in both Data and Child). They are not
// Trigger calls: OnFanout is not called, OnImmediate is, once per event.
//
// lookup is called without the Manager's lock held. A change applied
// between a lookup and the registration would be missed, so the caller
// should keep the tree from changing (and Trigger from running) while
// Restore runs, e.g. by holding the fsm's read lock with a lookup that does
// not lock again.
//
// With MaxWatchesPerWatcher set, registrations beyond the limit are skipped
// and ErrTooManyWatches is returned after everything else was done.
func (m *Manager) Restore(w Watcher, relZxid, zxid int64, l WatchLists, lookup Lookup) error {
	type reg struct {
		path        string
		md          mode
		data, child bool
	}
	var events []wire.WatcherEvent
	var regs []reg
	ev := func(typ wire.EventType, p string) {
		events = append(events, wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: p})
	}
	for _, p := range l.Data {
		exists, mzxid, _ := lookup(p)
		switch {
		case !exists:
			ev(wire.EventNodeDeleted, p)
		case mzxid > relZxid:
			ev(wire.EventNodeDataChanged, p)
		default:
			regs = append(regs, reg{p, modeStandard, true, false})
		}
	}
	for _, p := range l.Exist {
		if exists, _, _ := lookup(p); exists {
			ev(wire.EventNodeCreated, p)
		} else {
			regs = append(regs, reg{p, modeStandard, true, false})
		}
	}
	for _, p := range l.Child {
		exists, _, pzxid := lookup(p)
		switch {
		case !exists:
			ev(wire.EventNodeDeleted, p)
		case pzxid > relZxid:
			ev(wire.EventNodeChildrenChanged, p)
		default:
			regs = append(regs, reg{p, modeStandard, false, true})
		}
	}
	for _, p := range l.Persistent {
		regs = append(regs, reg{p, modePersistent, true, true})
	}
	for _, p := range l.Recursive {
		regs = append(regs, reg{p, modeRecursive, true, false})
	}

	var err error
	for _, r := range regs {
		if e := m.add(w, r.path, r.md, r.data, r.child); e != nil && err == nil {
			err = e
		}
	}
	if len(events) > 0 {
		sid := w.SessionID()
		m.mu.Lock()
		m.sent += uint64(len(events))
		m.sentBySess[sid] += uint64(len(events))
		for _, e := range events {
			m.sentByType[e.Type]++
		}
		m.mu.Unlock()
		for _, e := range events {
			w.Notify(e, zxid)
			if f := m.opts.OnImmediate; f != nil {
				f(e.Type)
			}
		}
	}
	return err
}
