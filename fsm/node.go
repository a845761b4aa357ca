package fsm

import (
	"encoding/binary"
	"slices"
	"unsafe"

	"github.com/paddockzk/paddock/internal/wire"
)

// node is one znode, stored by value in the tree's arena (tree.go). Kept
// small (104 bytes) and nearly pointer-free: the tree holds millions of
// them. The only pointer is buf, one allocation holding the node's name and
// then its data. It is a string because it is never written after setBuf
// (setData replaces it), which also lets readers keep the slices they were
// given. ACLs are interned (aclRef indexes FSM.acls).
// The node's path is not stored: it is the names on the way up the parent
// links. Children form a doubly linked list through first/next/prev.
type node struct {
	buf      string
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
	parent   uint32 // ids in the arena; none marks no node
	first    uint32
	next     uint32
	prev     uint32
	nkids    int32
	meta     uint32 // name length | metaUsed | metaNilData
}

const (
	metaUsed     = 1 << 31 // the record holds a node
	metaNilData  = 1 << 30 // the data is null (length -1 on the wire), not empty
	metaNameMask = metaNilData - 1
)

// setBuf stores name and data in one new allocation.
func (n *node) setBuf(name string, data []byte) {
	buf := make([]byte, len(name)+len(data))
	copy(buf, name)
	copy(buf[len(name):], data)
	// buf is never written again, so it may be viewed as a string.
	n.buf = unsafe.String(unsafe.SliceData(buf), len(buf))
	n.meta = metaUsed | uint32(len(name))
	if data == nil {
		n.meta |= metaNilData
	}
}

func (n *node) used() bool { return n.meta&metaUsed != 0 }

func (n *node) nameLen() int { return int(n.meta & metaNameMask) }

// name is the node's last path component ("" for the root).
func (n *node) name() string { return n.buf[:n.nameLen()] }

// data is the node's data, sharing buf's bytes: callers must not modify
// it (the FSM's contract for every returned slice).
func (n *node) data() []byte {
	if n.meta&metaNilData != 0 {
		return nil
	}
	d := n.buf[n.nameLen():]
	if d == "" {
		return []byte{}
	}
	return unsafe.Slice(unsafe.StringData(d), len(d))
}

func (n *node) dataLen() int { return len(n.buf) - n.nameLen() }

func (n *node) stat() wire.Stat {
	return wire.Stat{
		Czxid: n.czxid, Mzxid: n.mzxid, Pzxid: n.pzxid,
		Ctime: n.ctime, Mtime: n.mtime,
		Version: n.version, Cversion: n.clientCversion(), Aversion: n.aversion,
		EphemeralOwner: n.clientOwner(),
		DataLength:     int32(n.dataLen()),
		NumChildren:    n.nkids,
	}
}

// clientCversion is the cversion clients see. As ZooKeeper's
// DataNode.copyStat, the stored value counts child creates and clients are
// shown 2×creates − numChildren, which is creates + deletes for an ordinary
// node (so a child delete bumps it) and negative for / (−1) and /zookeeper
// (−2) on a fresh server, whose built-in children were never created.
func (n *node) clientCversion() int32 {
	return 2*n.cversion - n.nkids
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

// aclTable interns ACL lists: most nodes share a handful of lists, so a
// node stores a 4-byte reference instead of a slice.
type aclTable struct {
	lists [][]wire.ACL
	index map[string]uint32
}

func newACLTable() *aclTable {
	return &aclTable{index: make(map[string]uint32)}
}

// aclKeyBuf is the size of the stack buffer aclKey appends to: the usual
// lists (one or two entries) fit, so interning a known list allocates
// nothing.
const aclKeyBuf = 128

// aclKey appends to b an unambiguous encoding of acl (nil and empty
// differ; every string is length-prefixed): the interning key.
func aclKey(b []byte, acl []wire.ACL) []byte {
	if acl == nil {
		return append(b, 0xff)
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(acl)))
	for _, a := range acl {
		b = binary.BigEndian.AppendUint32(b, uint32(a.Perms))
		b = binary.BigEndian.AppendUint32(b, uint32(len(a.ID.Scheme)))
		b = append(b, a.ID.Scheme...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(a.ID.ID)))
		b = append(b, a.ID.ID...)
	}
	return b
}

// ref returns the reference of acl, interning a copy if it is new.
func (t *aclTable) ref(acl []wire.ACL) uint32 {
	var buf [aclKeyBuf]byte
	k := aclKey(buf[:0], acl)
	if r, ok := t.index[string(k)]; ok { // no allocation: the compiler elides the copy
		return r
	}
	r := uint32(len(t.lists))
	t.lists = append(t.lists, slices.Clone(acl))
	t.index[string(k)] = r
	return r
}

// get returns the interned list; callers must not modify it.
func (t *aclTable) get(r uint32) []wire.ACL {
	if int(r) < len(t.lists) {
		return t.lists[r]
	}
	return nil
}
