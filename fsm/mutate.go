package fsm

import "github.com/paddockzk/paddock/internal/wire"

// Mutation primitives. Every change to the tree goes through these so that
// (a) chunks a snapshot may still be reading are copied before they change,
// and (b) a multi in progress can be rolled back: when f.undo is non-nil
// each primitive records how to reverse itself. Callers test f.undo before
// building the closure, so a change outside a multi allocates none.

// record appends u to the multi's undo log; f.undo must be non-nil.
func (f *FSM) record(u func()) { f.undo = append(f.undo, u) }

// mut returns node id's record ready to be modified in place, copying its
// chunk first if a snapshot taken earlier may still be reading it. In a
// multi it records the record's value for rollback.
func (f *FSM) mut(id uint32) *node {
	ci := id >> chunkBits
	c := f.chunks[ci]
	if f.gens[ci] < f.gen && f.snapshotsActive() {
		cp := new(chunk)
		*cp = *c
		f.chunks[ci], f.gens[ci] = cp, f.gen
		c = cp
	}
	n := &c[id&(chunkSize-1)]
	if f.undo != nil {
		saved := *n
		f.record(func() { *f.chunks.at(id) = saved })
	}
	return n
}

// mutable returns path's existing node ready to be modified.
func (f *FSM) mutable(path string) *node {
	return f.mut(f.mustLookup(path))
}

// mustLookup returns the id of path's node, which the caller has checked
// exists; a missing one is a bug that must not turn into a change of
// another node.
func (f *FSM) mustLookup(path string) uint32 {
	id, ok := f.lookup(path)
	if !ok {
		panic("fsm: internal error: no node " + path)
	}
	return id
}

// alloc returns a free id, reusing deleted records first.
func (f *FSM) alloc() uint32 {
	if k := len(f.free); k > 0 {
		id := f.free[k-1]
		f.free = f.free[:k-1]
		if f.undo != nil {
			f.record(func() { f.free = append(f.free, id) })
		}
		return id
	}
	id := f.hw
	if id == none {
		panic("fsm: more than 2^32-1 znodes")
	}
	f.hw++
	if int(id>>chunkBits) == len(f.chunks) {
		f.chunks = append(f.chunks, new(chunk))
		f.gens = append(f.gens, f.gen)
	}
	if f.undo != nil {
		f.record(func() { f.free = append(f.free, id) })
	}
	return id
}

// putNode adds a node at path under parent pid (none for the root) with
// t's stat fields and data, and returns its id.
func (f *FSM) putNode(path string, pid uint32, t node, data []byte) uint32 {
	id := f.alloc()
	n := f.mut(id)
	*n = t
	name := ""
	if pid != none {
		name = wire.BaseName(path)
	}
	n.setBuf(name, data)
	n.parent, n.first, n.next, n.prev, n.nkids = pid, none, none, none, 0
	if pid != none {
		p := f.mut(pid)
		n.next = p.first
		if p.first != none {
			f.mut(p.first).prev = id
		}
		p.first = id
		p.nkids++
	}
	frag := f.index.fragment(path)
	f.index.insert(frag, id)
	f.count++
	size := int64(len(path) + len(data))
	f.dataSize += size
	if f.undo != nil {
		f.record(func() {
			f.index.remove(frag, id)
			f.count--
			f.dataSize -= size
		})
	}
	return id
}

// deleteNode removes node id, at path, which has no children.
func (f *FSM) deleteNode(path string, id uint32) {
	n := f.mut(id)
	if n.prev != none {
		f.mut(n.prev).next = n.next
	} else {
		f.mut(n.parent).first = n.next
	}
	if n.next != none {
		f.mut(n.next).prev = n.prev
	}
	f.mut(n.parent).nkids--
	frag := f.index.fragment(path)
	f.index.remove(frag, id)
	size := int64(len(path) + n.dataLen())
	f.count--
	f.dataSize -= size
	*n = node{}
	f.free = append(f.free, id)
	if f.undo != nil {
		f.record(func() {
			f.free = f.free[:len(f.free)-1]
			f.index.insert(frag, id)
			f.count++
			f.dataSize += size
		})
	}
}

// setData replaces n's data (n from mut), keeping dataSize in step.
func (f *FSM) setData(n *node, data []byte) {
	delta := int64(len(data) - n.dataLen())
	f.dataSize += delta
	n.setBuf(n.name(), data)
	if f.undo != nil {
		f.record(func() { f.dataSize -= delta })
	}
}

// setMember adds or removes key in a set, recording the reverse.
func (f *FSM) setMember(set map[string]struct{}, key string, present bool) {
	if present {
		set[key] = struct{}{}
		if f.undo != nil {
			f.record(func() { delete(set, key) })
		}
	} else {
		delete(set, key)
		if f.undo != nil {
			f.record(func() { set[key] = struct{}{} })
		}
	}
}

// rollback reverses every recorded change, newest first.
func (f *FSM) rollback() {
	for i := len(f.undo) - 1; i >= 0; i-- {
		f.undo[i]()
	}
}
