package zkimport

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// ZooKeeper's opcodes as they appear in transaction headers.
const (
	opError           = -1
	opCreate          = 1
	opDelete          = 2
	opSetData         = 5
	opSetACL          = 7
	opCheck           = 13
	opMulti           = 14
	opCreate2         = 15
	opReconfig        = 16
	opCreateContainer = 19
	opDeleteContainer = 20
	opCreateTTL       = 21
	opCreateSession   = -10
	opCloseSession    = -11
)

// ZooKeeper's KeeperException codes the replay distinguishes.
const (
	codeOK         = 0
	codeNoNode     = -101
	codeNodeExists = -110
)

// stat is ZooKeeper's StatPersisted.
type stat struct {
	czxid, mzxid, ctime, mtime  int64
	version, cversion, aversion int32
	owner                       int64 // ephemeralOwner
	pzxid                       int64
}

type znode struct {
	data     []byte
	acl      []wire.ACL
	stat     stat
	children map[string]struct{}
}

// tree is ZooKeeper's DataTree and session table as the importer needs
// them: it applies transactions with the semantics of DataTree.processTxn
// and FileTxnSnapLog.processTransaction, including what makes replaying a
// fuzzy snapshot's overlapping transactions harmless (a create of an
// existing node fails with NODEEXISTS and only adjusts the parent's
// cversion, a delete of a missing one fails with NONODE).
type tree struct {
	nodes      map[string]*znode // "/" is the root (ZooKeeper's "" alias)
	sessions   map[int64]int32   // id -> timeout (ms)
	ephemerals map[int64]map[string]struct{}
	lastZxid   int64
	warnings   []string
}

func newTree() *tree {
	return &tree{nodes: map[string]*znode{}, sessions: map[int64]int32{},
		ephemerals: map[int64]map[string]struct{}{}}
}

func (t *tree) warnf(format string, args ...any) {
	t.warnings = append(t.warnings, fmt.Sprintf(format, args...))
}

// parentOf splits a path that starts with "/" and is not "/".
func parentOf(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '/')
	if i == 0 {
		return "/", path[1:]
	}
	return path[:i], path[i+1:]
}

// ownerKind classifies an ephemeralOwner as ZooKeeper's EphemeralType does
// with extended types enabled.
type ownerKind int

const (
	ownerNone ownerKind = iota
	ownerSession
	ownerContainer
	ownerTTL
	ownerUnsupported // an extended type other than TTL
)

func kindOf(owner int64) ownerKind {
	switch {
	case owner == 0:
		return ownerNone
	case owner == wire.ContainerOwner:
		return ownerContainer
	case owner&wire.TTLOwnerMask == wire.TTLOwnerMask:
		if owner&^(wire.TTLOwnerMask|wire.MaxTTL) == 0 {
			return ownerTTL
		}
		return ownerUnsupported
	}
	return ownerSession
}

func (t *tree) index(path string, owner int64) {
	if kindOf(owner) != ownerSession {
		return
	}
	set := t.ephemerals[owner]
	if set == nil {
		set = map[string]struct{}{}
		t.ephemerals[owner] = set
	}
	set[path] = struct{}{}
}

func (t *tree) unindex(path string, owner int64) {
	if set := t.ephemerals[owner]; set != nil {
		delete(set, path)
		if len(set) == 0 {
			delete(t.ephemerals, owner)
		}
	}
}

// addSnapshotNode adds a node read from a snapshot (parents come first).
func (t *tree) addSnapshotNode(path string, n *znode) error {
	if _, dup := t.nodes[path]; dup {
		return fmt.Errorf("%w: snapshot lists %q twice", ErrFormat, path)
	}
	if path != "/" {
		if !strings.HasPrefix(path, "/") {
			return fmt.Errorf("%w: snapshot path %q does not start with /", ErrFormat, path)
		}
		parent, name := parentOf(path)
		p := t.nodes[parent]
		if p == nil {
			return fmt.Errorf("%w: snapshot node %q comes before its parent", ErrFormat, path)
		}
		if p.children == nil {
			p.children = map[string]struct{}{}
		}
		p.children[name] = struct{}{}
	}
	t.nodes[path] = n
	t.index(path, n.stat.owner)
	return nil
}

func checkTxnPath(path string) error {
	if err := wire.ValidatePath(path); err != nil || path == "/" {
		return fmt.Errorf("%w: transaction path %q is invalid", ErrFormat, path)
	}
	return nil
}

// createNode is DataTree.createNode.
func (t *tree) createNode(path string, data []byte, acl []wire.ACL, owner int64, parentCVersion int32, zxid, time int64) (int, error) {
	if err := checkTxnPath(path); err != nil {
		return 0, err
	}
	parentPath, name := parentOf(path)
	parent := t.nodes[parentPath]
	if parent == nil {
		return codeNoNode, nil
	}
	if t.nodes[path] != nil {
		return codeNodeExists, nil
	}
	if parentCVersion == -1 {
		parentCVersion = parent.stat.cversion + 1
	}
	if parentCVersion > parent.stat.cversion {
		parent.stat.cversion = parentCVersion
		parent.stat.pzxid = zxid
	}
	if acl == nil { // ReferenceCountedACLCache.convertAcls(null)
		acl = wire.OpenACLUnsafe
	}
	if parent.children == nil {
		parent.children = map[string]struct{}{}
	}
	parent.children[name] = struct{}{}
	t.nodes[path] = &znode{data: data, acl: acl, stat: stat{czxid: zxid, mzxid: zxid, pzxid: zxid,
		ctime: time, mtime: time, owner: owner}}
	t.index(path, owner)
	return codeOK, nil
}

// deleteNode is DataTree.deleteNode: the parent forgets the child and
// moves its pzxid forward even when the child is already gone.
func (t *tree) deleteNode(path string, zxid int64) (int, error) {
	if err := checkTxnPath(path); err != nil {
		return 0, err
	}
	parentPath, name := parentOf(path)
	parent := t.nodes[parentPath]
	if parent == nil {
		return codeNoNode, nil
	}
	delete(parent.children, name)
	if zxid > parent.stat.pzxid {
		parent.stat.pzxid = zxid
	}
	n := t.nodes[path]
	if n == nil {
		return codeNoNode, nil
	}
	if len(n.children) > 0 {
		// ZooKeeper would leave the children unreachable (and drop them
		// from its next snapshot); drop them now.
		t.warnf("transaction 0x%x deletes %q, which has %d children; they are dropped too", zxid, path, len(n.children))
		t.dropSubtree(path)
		return codeOK, nil
	}
	delete(t.nodes, path)
	t.unindex(path, n.stat.owner)
	return codeOK, nil
}

func (t *tree) dropSubtree(path string) {
	stack := []string{path}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n := t.nodes[p]
		if n == nil {
			continue
		}
		for c := range n.children {
			stack = append(stack, joinPath(p, c))
		}
		delete(t.nodes, p)
		t.unindex(p, n.stat.owner)
	}
}

func joinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// setData is DataTree.setData: the version comes from the transaction.
func (t *tree) setData(path string, data []byte, version int32, zxid, time int64) (int, error) {
	if err := checkTxnPath(path); err != nil {
		return 0, err
	}
	n := t.nodes[path]
	if n == nil {
		return codeNoNode, nil
	}
	n.data, n.stat.mtime, n.stat.mzxid, n.stat.version = data, time, zxid, version
	return codeOK, nil
}

// setACL is DataTree.setACL: the aversion comes from the transaction.
func (t *tree) setACL(path string, acl []wire.ACL, version int32) (int, error) {
	if err := checkTxnPath(path); err != nil {
		return 0, err
	}
	n := t.nodes[path]
	if n == nil {
		return codeNoNode, nil
	}
	if acl == nil {
		acl = wire.OpenACLUnsafe
	}
	n.acl, n.stat.aversion = acl, version
	return codeOK, nil
}

// setCversionPzxid is DataTree.setCversionPzxid, applied after a create
// that found its node already there (a fuzzy snapshot holds it).
func (t *tree) setCversionPzxid(path string, cversion int32, zxid int64) {
	n := t.nodes[path]
	if n == nil {
		return
	}
	if cversion == -1 {
		cversion = n.stat.cversion + 1
	}
	if cversion > n.stat.cversion {
		n.stat.cversion, n.stat.pzxid = cversion, zxid
	}
}

// killSession deletes the session's ephemerals (DataTree.killSession).
// A closeSession transaction may list the paths to delete; they are the
// session's ephemerals, so the index is used instead.
func (t *tree) killSession(id, zxid int64) {
	set := t.ephemerals[id]
	paths := make([]string, 0, len(set))
	for p := range set {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		_, _ = t.deleteNode(p, zxid)
	}
	delete(t.ephemerals, id)
}

// apply applies one logged transaction (FileTxnSnapLog.processTransaction
// then DataTree.processTxn).
func (t *tree) apply(x *txn) error {
	switch x.hdr.typ {
	case opCreateSession:
		t.sessions[x.hdr.clientID] = x.timeout
	case opCloseSession:
		delete(t.sessions, x.hdr.clientID)
	}
	if _, err := t.process(&x.hdr, x); err != nil {
		return err
	}
	if x.hdr.zxid > t.lastZxid {
		t.lastZxid = x.hdr.zxid
	}
	return nil
}

// process is DataTree.processTxn for one transaction or sub-transaction.
func (t *tree) process(h *txnHeader, x *txn) (code int, err error) {
	switch h.typ {
	case opCreate, opCreate2, opCreateTTL, opCreateContainer:
		owner := int64(0)
		switch {
		case h.typ == opCreateTTL:
			owner = wire.TTLOwner(x.ttl)
		case h.typ == opCreateContainer:
			owner = wire.ContainerOwner
		case x.ephemeral:
			owner = h.clientID
		}
		code, err = t.createNode(x.path, x.data, x.acl, owner, x.parentCVersion, h.zxid, h.time)
		if err == nil && code == codeNodeExists && h.typ == opCreate {
			parent, _ := parentOf(x.path)
			t.setCversionPzxid(parent, x.parentCVersion, h.zxid)
		}
	case opDelete, opDeleteContainer:
		code, err = t.deleteNode(x.path, h.zxid)
	case opSetData, opReconfig:
		code, err = t.setData(x.path, x.data, x.version, h.zxid, h.time)
	case opSetACL:
		code, err = t.setACL(x.path, x.acl, x.version)
	case opCloseSession:
		t.killSession(h.clientID, h.zxid)
	case opError:
		code = int(x.errCode)
	case opCheck, opCreateSession:
	case opMulti:
		// A failed multi is logged with an error sub-transaction; then
		// none of its operations apply.
		for i := range x.ops {
			if x.ops[i].hdr.typ == opError {
				return int(x.ops[i].errCode), nil
			}
		}
		for i := range x.ops {
			sub := &x.ops[i]
			sh := txnHeader{clientID: h.clientID, cxid: h.cxid, zxid: h.zxid, time: h.time, typ: sub.hdr.typ}
			c, err := t.process(&sh, sub)
			if err != nil {
				return 0, err
			}
			if c != codeOK && code == codeOK {
				code = c
			}
		}
	default:
		return 0, fmt.Errorf("%w: unsupported transaction type %d at zxid %#x", ErrFormat, h.typ, h.zxid)
	}
	return code, err
}
