package fsm

// Mutation primitives. Every change to the tree goes through these so that
// (a) nodes a snapshot may still be reading are copied before they change,
// and (b) a multi in progress can be rolled back: when f.undo is non-nil
// each primitive records how to reverse itself.

func (f *FSM) record(u func()) {
	if f.undo != nil {
		f.undo = append(f.undo, u)
	}
}

// mutable returns path's node ready to be modified in place, cloning it
// first if a snapshot taken earlier may still be reading it.
func (f *FSM) mutable(path string) *node {
	n := f.nodes[path]
	if n.gen < f.gen && f.snapshotsActive() {
		c := *n
		c.gen = f.gen
		f.nodes[path] = &c
		f.record(func() { f.nodes[path] = n })
		return &c
	}
	if f.undo != nil {
		saved := *n
		f.record(func() { *n = saved })
	}
	return n
}

func (f *FSM) putNode(path string, n *node) {
	n.gen = f.gen
	f.nodes[path] = n
	f.dataSize += int64(len(path) + len(n.data))
	f.record(func() {
		delete(f.nodes, path)
		f.dataSize -= int64(len(path) + len(n.data))
	})
}

func (f *FSM) deleteNode(path string) {
	n := f.nodes[path]
	delete(f.nodes, path)
	f.dataSize -= int64(len(path) + len(n.data))
	f.record(func() {
		f.nodes[path] = n
		f.dataSize += int64(len(path) + len(n.data))
	})
}

// setData replaces n's data, keeping dataSize in step.
func (f *FSM) setData(n *node, data []byte) {
	f.dataSize += int64(len(data) - len(n.data))
	old := len(n.data)
	n.data = data
	f.record(func() { f.dataSize -= int64(len(data) - old) })
}

// link adds name to parent's children (parent must be mutable already).
func (f *FSM) link(parent *node, name string) {
	if parent.children == nil {
		parent.children = make(map[string]struct{})
	}
	parent.children[name] = struct{}{}
	f.record(func() { delete(parent.children, name) })
}

func (f *FSM) unlink(parent *node, name string) {
	delete(parent.children, name)
	f.record(func() { parent.children[name] = struct{}{} })
}

// setMember adds or removes key in a set, recording the reverse.
func (f *FSM) setMember(set map[string]struct{}, key string, present bool) {
	if present {
		set[key] = struct{}{}
		f.record(func() { delete(set, key) })
	} else {
		delete(set, key)
		f.record(func() { set[key] = struct{}{} })
	}
}

// rollback reverses every recorded change, newest first.
func (f *FSM) rollback() {
	for i := len(f.undo) - 1; i >= 0; i-- {
		f.undo[i]()
	}
}
