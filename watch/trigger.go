package watch

import "github.com/paddockzk/paddock/internal/wire"

// Trigger fires the watches for one change event (path, typ) produced by
// the transaction zxid, and returns the number of watchers notified.
//
// Tables by type (ZooKeeper's DataTree):
//   - NodeCreated, NodeDataChanged: the data table;
//   - NodeChildrenChanged: the child table (call it with the parent path);
//   - NodeDeleted: the data table, then the child table of the same path,
//     suppressing watchers already notified from the data table, so a
//     watcher with both a data and a child watch on path gets one event.
//
// Any other type is ignored and returns 0 (OnFanout is not called).
//
// Watchers are collected under the lock; Notify is then called
// synchronously for each (or Options.Deliver once for all of them),
// without the lock held, before Trigger returns.
func (m *Manager) Trigger(zxid int64, path string, typ wire.EventType) int {
	return m.TriggerFiltered(zxid, path, typ, nil)
}

// TriggerFiltered is Trigger with a delivery filter: watchers for which
// allow returns false lose their one-shot watch as usual but receive no
// notification and are not counted (ZooKeeper 3.8.4+/3.9.2+ drops a
// notification when the watcher may not READ the changed node). allow is
// called with the registry's lock held; it must be cheap and must not
// call back into the Manager. A nil allow delivers to everyone.
func (m *Manager) TriggerFiltered(zxid int64, path string, typ wire.EventType, allow func(Watcher) bool) int {
	var second bool
	first := dataTable
	switch typ {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
	case wire.EventNodeDeleted:
		second = true
	case wire.EventNodeChildrenChanged:
		first = childTable
	default:
		return 0
	}

	m.mu.Lock()
	m.triggers++
	m.epoch++
	c := collector{m: m, epoch: m.epoch}
	c.walk(first, path, typ)
	if second {
		c.walk(childTable, path, typ)
	}
	var got []*wstate
	if c.buf != nil && allow != nil {
		kept := (*c.buf)[:0]
		for _, s := range *c.buf {
			if allow(s.w) {
				kept = append(kept, s)
			}
		}
		clear((*c.buf)[len(kept):])
		*c.buf = kept
		if len(kept) == 0 {
			m.pool.Put(c.buf)
			c.buf = nil
		}
	}
	if c.buf != nil {
		got = *c.buf
		m.triggersHit++
		m.sent += uint64(len(got))
		m.sentByType[typ] += uint64(len(got))
		for _, s := range got {
			m.sentBySess[s.sid]++
		}
	}
	m.mu.Unlock()

	n := len(got)
	if n > 0 {
		m.deliver(wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path}, zxid, got)
		clear(got)
		*c.buf = got[:0]
		m.pool.Put(c.buf)
	}
	if f := m.opts.OnFanout; f != nil {
		f(typ, path, n)
	}
	return n
}

// deliver notifies got's watchers of ev, through Options.Deliver if set.
func (m *Manager) deliver(ev wire.WatcherEvent, zxid int64, got []*wstate) {
	d := m.opts.Deliver
	if d == nil {
		for _, s := range got {
			s.w.Notify(ev, zxid)
		}
		return
	}
	bp := m.wpool.Get().(*[]Watcher)
	ws := (*bp)[:0]
	for _, s := range got {
		ws = append(ws, s.w)
	}
	d(ev, zxid, ws)
	clear(ws)
	*bp = ws[:0]
	m.wpool.Put(bp)
}

// collector gathers the watchers of one Trigger call, each at most once.
type collector struct {
	m     *Manager
	epoch uint64
	buf   *[]*wstate // from m.pool, taken on the first hit
}

// add collects s unless this Trigger call already did (from either table).
func (c *collector) add(s *wstate) {
	if s.mark == c.epoch {
		return
	}
	s.mark = c.epoch
	if c.buf == nil {
		c.buf = c.m.pool.Get().(*[]*wstate)
	}
	*c.buf = append(*c.buf, s)
}

// walk applies ZooKeeper's WatchManager.triggerWatch to table ti: every
// watcher on path fires and loses its standard mode; while recursive
// watches exist, watchers on the ancestors of path fire if they are
// recursive. Recursive watches never fire for NodeChildrenChanged.
func (c *collector) walk(ti int, path string, typ wire.EventType) {
	m := c.m
	t := &m.tables[ti]
	if set := t.watches[path]; set != nil {
		oneShot := true // every entry is a standard watch alone
		for s, md := range set {
			oneShot = oneShot && md == modeStandard
			if md == modeRecursive && typ == wire.EventNodeChildrenChanged {
				continue // cannot happen (recursive lives in the data table); kept for safety
			}
			c.add(s)
		}
		if oneShot {
			m.dropPathLocked(ti, path, set)
		} else {
			for s, md := range set {
				if md&modeStandard != 0 {
					m.dropLocked(ti, path, set, s, md, modeStandard)
				}
			}
		}
	}
	if t.recursive() == 0 || typ == wire.EventNodeChildrenChanged || path == "/" {
		return
	}
	for p := wire.ParentPath(path); ; p = wire.ParentPath(p) {
		for s, md := range t.watches[p] {
			if md&modeRecursive != 0 {
				c.add(s)
			}
		}
		if p == "/" {
			return
		}
	}
}
