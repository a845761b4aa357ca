package fsm

import (
	"slices"

	"github.com/paddockzk/paddock/internal/wire"
)

// node is one znode. Kept small: the tree holds millions of them. ACLs are
// interned (aclRef indexes FSM.acls); children is nil for leaves, and a
// child's name in it is a substring of the child's path, so it costs no
// extra string bytes. dataLength and numChildren are derived.
type node struct {
	data     []byte
	children map[string]struct{}
	czxid    int64
	mzxid    int64
	pzxid    int64
	ctime    int64
	mtime    int64
	owner    int64 // ephemeralOwner
	version  int32
	cversion int32 // counts child creates: the next sequential suffix (see stat)
	aversion int32
	aclRef   uint32
	gen      uint64 // snapshot generation the node was created or cloned in
}

func (n *node) stat() wire.Stat {
	return wire.Stat{
		Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid,
		Ctime: n.ctime, Mtime: n.mtime,
		Version: n.version, Cversion: n.clientCversion(), Aversion: n.aversion,
		EphemeralOwner: n.clientOwner(),
		DataLength:     int32(len(n.data)),
		NumChildren:    int32(len(n.children)),
	}
}

// clientCversion is the cversion clients see. As ZooKeeper's
// DataNode.copyStat, the stored value counts child creates and clients are
// shown 2×creates − numChildren, which is creates + deletes for an ordinary
// node (so a child delete bumps it) and negative for / (−1) and /zookeeper
// (−2) on a fresh server, whose built-in children were never created.
func (n *node) clientCversion() int32 {
	return 2*n.cversion - int32(len(n.children))
}

// clientOwner is the ephemeralOwner clients see: ZooKeeper's
// DataNode.getClientEphemeralOwner reports 0 for containers and TTL nodes,
// whose stored owner is a type marker, not a session.
func (n *node) clientOwner() int64 {
	if n.owner > 0 {
		return n.owner
	}
	return 0
}

// isEphemeral reports whether the node belongs to a session (not a
// container or TTL node, whose owner fields are special encodings).
func (n *node) isEphemeral() bool { return n.owner > 0 }

func (n *node) isContainer() bool { return n.owner == wire.ContainerOwner }

func (n *node) ttl() (int64, bool) {
	if n.owner >= 0 {
		return 0, false
	}
	return wire.TTLOf(n.owner)
}

// sortedChildren returns the node's child names in byte order.
func (n *node) sortedChildren() []string {
	out := make([]string, 0, len(n.children))
	for c := range n.children {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// aclTable interns ACL lists: most nodes share a handful of lists, so a
// node stores a 4-byte reference instead of a slice.
type aclTable struct {
	lists [][]wire.ACL
	index map[string]uint32
}

func newACLTable() *aclTable {
	return &aclTable{index: make(map[string]uint32)}
}

func aclKey(acl []wire.ACL) string {
	var e wire.Encoder
	wire.EncodeACLs(&e, acl)
	return string(e.Bytes())
}

// ref returns the reference of acl, interning a copy if it is new.
func (t *aclTable) ref(acl []wire.ACL) uint32 {
	k := aclKey(acl)
	if r, ok := t.index[k]; ok {
		return r
	}
	r := uint32(len(t.lists))
	t.lists = append(t.lists, slices.Clone(acl))
	t.index[k] = r
	return r
}

// get returns the interned list; callers must not modify it.
func (t *aclTable) get(r uint32) []wire.ACL {
	if int(r) < len(t.lists) {
		return t.lists[r]
	}
	return nil
}
