package zkimport

import (
	"fmt"
	"io"

	"github.com/paddockzk/paddock/internal/wire"
)

// openACLRef is the ACL reference ZooKeeper stores for OPEN_ACL_UNSAFE
// without an entry in the ACL cache.
const openACLRef = -1

// snap is a parsed ZooKeeper snapshot file.
type snap struct {
	tree *tree
	dbid int64
	// digestZxid is the zxid of the tree digest ZooKeeper 3.6+ appends
	// (0: none). The digest itself is not recomputed.
	digestZxid int64
	// trailer notes trailing bytes that could not be read; the tree
	// before them is sealed by its own checksum, so they are ignored.
	trailer string
}

// readSnapshot parses a snapshot stream (FileSnap.serialize): FileHeader
// "ZKSN"; the session table (count, then id and timeout); the ACL cache
// (count, then a long reference and a vector of ACLs each); the nodes in
// preorder, each a path and a DataNode (data buffer, ACL reference,
// StatPersisted), the root as "" and the list ended by the path "/"; the
// Adler-32 seal; and optionally (3.6+) a zxid digest with a second seal.
func readSnapshot(in io.Reader, maxField int) (*snap, error) {
	r := newReader(in, maxField)
	magic, _, dbid := r.int(), r.int(), r.long()
	if r.err != nil {
		return nil, fmt.Errorf("snapshot header: %w", r.err)
	}
	if magic != snapMagic {
		return nil, fmt.Errorf("%w: not a snapshot (magic %#x)", ErrFormat, uint32(magic))
	}
	t := newTree()
	for i, n := 0, r.count("session"); i < n && r.err == nil; i++ {
		id, timeout := r.long(), r.int()
		if r.err == nil {
			t.sessions[id] = timeout
		}
	}
	acls := map[int64][]wire.ACL{}
	for i, n := 0, r.count("ACL cache"); i < n && r.err == nil; i++ {
		ref := r.long()
		k := r.count("ACL")
		list := make([]wire.ACL, 0, min(k, 8))
		for j := 0; j < k && r.err == nil; j++ {
			list = append(list, r.acl())
		}
		acls[ref] = list
	}
	for r.err == nil {
		path, null := r.ustring()
		if r.err != nil {
			break
		}
		if null {
			r.fail("null node path")
			break
		}
		if path == "/" {
			break
		}
		n := &znode{data: r.buffer()}
		ref := r.long()
		n.stat = stat{czxid: r.long(), mzxid: r.long(), ctime: r.long(), mtime: r.long(),
			version: r.int(), cversion: r.int(), aversion: r.int(), owner: r.long(), pzxid: r.long()}
		if r.err != nil {
			break
		}
		if ref == openACLRef {
			n.acl = wire.OpenACLUnsafe
		} else if n.acl = acls[ref]; n.acl == nil {
			return nil, fmt.Errorf("%w: node %q refers to ACL %d, which the snapshot does not hold", ErrFormat, path, ref)
		}
		if path == "" {
			path = "/"
		}
		if err := t.addSnapshotNode(path, n); err != nil {
			return nil, err
		}
	}
	if r.err == nil && t.nodes["/"] == nil {
		r.fail("snapshot has no root node")
	}
	r.seal()
	if r.err != nil {
		return nil, r.err
	}
	s := &snap{tree: t, dbid: dbid}
	if !r.atEOF() {
		zxid, _, _ := r.long(), r.int(), r.long()
		r.seal()
		if r.err != nil {
			s.trailer = fmt.Sprintf("unreadable bytes after the sealed tree ignored: %v", r.err)
		} else {
			s.digestZxid = zxid
		}
	}
	return s, nil
}
