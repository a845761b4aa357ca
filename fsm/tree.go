package fsm

import (
	"slices"

	"github.com/paddockzk/paddock/internal/wire"
)

// The znode tree is an arena: node records live by value in fixed-size
// chunks and refer to each other by id (an index into the arena), and a
// pathIndex maps paths to ids. Compared with a map from path to *node plus
// a child map per node, this stores no paths (a path is the names up the
// parent links), allocates once per node (its name+data buffer), and
// leaves the collector one pointer per node to follow. Chunks are the unit
// of copy-on-write while a snapshot is open (FSM.mut).

const (
	chunkBits = 10
	// chunkSize is the number of records per chunk: copying one (104 KiB)
	// is the price of the first write to it while a snapshot is open.
	chunkSize = 1 << chunkBits

	// none is the id of no node (a nil link).
	none = ^uint32(0)
	// rootID is the id of "/", which is never deleted.
	rootID uint32 = 0
)

// chunk is a whole number of the runtime's 8 KiB pages (chunkSize × 104
// bytes), so the allocator wastes nothing on it; its generation is kept
// apart (FSM.gens) for that reason.
type chunk [chunkSize]node

// arena is the chunk list; a snapshot keeps a copy of it.
type arena []*chunk

func (a arena) at(id uint32) *node {
	return &a[id>>chunkBits][id&(chunkSize-1)]
}

// pathIs reports whether node id's path is p, comparing names up the
// parent links (no allocation).
func (a arena) pathIs(id uint32, p string) bool {
	if id == rootID {
		return p == RootPath
	}
	for id != rootID {
		n := a.at(id)
		name := n.name()
		i := len(p) - len(name) - 1
		if i < 0 || p[i] != '/' || p[i+1:] != name {
			return false
		}
		p, id = p[:i], n.parent
	}
	return p == ""
}

// walk calls fn for every node, parents before their children, without
// recursion (a 10,000-deep tree is fine).
func (a arena) walk(fn func(path string, id uint32, n *node)) {
	a.walkFrom(rootID, RootPath, fn)
}

// walkFrom is walk over the subtree of node id, whose path is path.
func (a arena) walkFrom(id uint32, path string, fn func(path string, id uint32, n *node)) {
	type item struct {
		id   uint32
		path string
	}
	stack := []item{{id, path}}
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := a.at(it.id)
		fn(it.path, it.id, n)
		for c := n.first; c != none; c = a.at(c).next {
			stack = append(stack, item{c, wire.JoinPath(it.path, a.at(c).name())})
		}
	}
}

// subtree calls fn for id and each of its descendants.
func (a arena) subtree(id uint32, fn func(n *node)) {
	stack := []uint32{id}
	for len(stack) > 0 {
		n := a.at(stack[len(stack)-1])
		stack = stack[:len(stack)-1]
		fn(n)
		for c := n.first; c != none; c = a.at(c).next {
			stack = append(stack, c)
		}
	}
}

// childNames returns n's child names in byte order.
func (a arena) childNames(n *node) []string {
	out := make([]string, 0, n.nkids)
	for c := n.first; c != none; c = a.at(c).next {
		out = append(out, a.at(c).name())
	}
	slices.Sort(out)
	return out
}

// lookup returns the id of path's node.
func (f *FSM) lookup(path string) (uint32, bool) {
	return f.index.find(f.index.fragment(path), func(id uint32) bool { return f.chunks.pathIs(id, path) })
}

// node returns path's node for reading, or nil. The pointer is valid only
// until the next change to the tree; write through f.mut.
func (f *FSM) node(path string) *node {
	_, n := f.nodeID(path)
	return n
}

// nodeID returns path's id and node for reading, or nil. Code that goes
// on to change the node keeps the id (f.mut(id)): each lookup of a deep
// path walks its parent links.
func (f *FSM) nodeID(path string) (uint32, *node) {
	if id, ok := f.lookup(path); ok {
		return id, f.chunks.at(id)
	}
	return none, nil
}

// newTree empties the tree and creates the root, with no data.
func (f *FSM) newTree() {
	f.chunks, f.gens, f.free, f.hw, f.count, f.dataSize = nil, nil, nil, 0, 0, 0
	f.index = newPathIndex()
	f.putNode(RootPath, none, node{}, []byte{})
}
