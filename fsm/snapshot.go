package fsm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/vmihailenco/msgpack/v5"
)

// SnapshotVersion is the format version byte that starts every snapshot.
const SnapshotVersion byte = 1

type snapHeader struct {
	LastZxid    int64
	NextSession int64
	Secret      []byte
	ACLs        [][]wire.ACL
	Sessions    []snapSession
	Nodes       int
}

type snapSession struct {
	_msgpack struct{} `msgpack:",as_array"` //lint:ignore U1000 msgpack reads the tag
	ID       int64
	Timeout  int32
}

type snapNode struct {
	_msgpack struct{} `msgpack:",as_array"` //lint:ignore U1000 msgpack reads the tag
	Path     string
	Data     []byte
	ACL      uint32
	Czxid    int64
	Mzxid    int64
	Pzxid    int64
	Ctime    int64
	Mtime    int64
	Owner    int64
	Version  int32
	Cversion int32
	Aversion int32
}

// snapshot is a point-in-time capture of the FSM. The chunks it holds are
// never modified afterwards: FSM.mut copies a chunk before its first change
// while a snapshot is active.
type snapshot struct {
	f      *FSM
	header snapHeader
	chunks arena
	done   atomic.Bool
}

func (f *FSM) snapshotsActive() bool { return f.active.Load() > 0 }

// Snapshot implements raft.FSM: it captures the state by copying the list
// of arena chunks (one pointer per 1,024 nodes); Persist does the encoding
// and I/O.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.capture(), nil
}

func (f *FSM) capture() *snapshot {
	s := &snapshot{f: f, header: snapHeader{
		LastZxid: f.lastZxid, NextSession: f.nextSession, Secret: f.secret,
		ACLs: f.acls.lists, Nodes: f.count,
	}}
	for id, ss := range f.sessions {
		s.header.Sessions = append(s.header.Sessions, snapSession{ID: id, Timeout: ss.timeout})
	}
	s.chunks = slices.Clone(f.chunks)
	f.active.Add(1)
	f.gen++
	return s
}

// Persist implements raft.FSMSnapshot.
func (s *snapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.encode(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// encode streams the snapshot to w.
func (s *snapshot) encode(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	if err := bw.WriteByte(SnapshotVersion); err != nil {
		return err
	}
	enc := msgpack.NewEncoder(bw)
	if err := enc.Encode(&s.header); err != nil {
		return err
	}
	// Parents come before their children, so a restore links each node
	// as it reads it.
	var sn snapNode
	var err error
	s.chunks.walk(func(path string, _ uint32, n *node) {
		if err != nil {
			return
		}
		sn = snapNode{Path: path, Data: n.data(), ACL: n.aclRef, Czxid: n.czxid,
			Mzxid: n.mzxid, Pzxid: n.pzxid, Ctime: n.ctime, Mtime: n.mtime,
			Owner: n.owner, Version: n.version, Cversion: n.cversion, Aversion: n.aversion}
		err = enc.Encode(&sn)
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// Release implements raft.FSMSnapshot.
func (s *snapshot) Release() {
	if s.done.CompareAndSwap(false, true) {
		s.f.active.Add(-1)
	}
}

// ErrBadSnapshot is wrapped by Restore's errors.
var ErrBadSnapshot = errors.New("fsm: bad snapshot")

// Restore implements raft.FSM: it replaces all state with the snapshot's.
// On error the FSM keeps its previous state.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	fresh, err := readSnapshot(rc)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.chunks, f.gens, f.free, f.hw, f.count, f.index = fresh.chunks, fresh.gens, fresh.free, fresh.hw, fresh.count, fresh.index
	f.acls, f.sessions = fresh.acls, fresh.sessions
	f.containers, f.ttls = fresh.containers, fresh.ttls
	fresh.rebuildQuotas()
	f.quotas = fresh.quotas
	f.secret, f.nextSession, f.lastZxid, f.dataSize = fresh.secret, fresh.nextSession, fresh.lastZxid, fresh.dataSize
	f.gen++
	return nil
}

func readSnapshot(r io.Reader) (*FSM, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	v, err := br.ReadByte()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	if v != SnapshotVersion {
		return nil, fmt.Errorf("%w: unknown format version %d", ErrBadSnapshot, v)
	}
	dec := msgpack.NewDecoder(br)
	var h snapHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrBadSnapshot, err)
	}
	f := &FSM{acls: newACLTable(),
		sessions:   make(map[int64]*session, len(h.Sessions)),
		containers: make(map[string]struct{}), ttls: make(map[string]struct{}),
		secret: h.Secret, nextSession: h.NextSession}
	f.newTree()
	for _, l := range h.ACLs {
		f.acls.ref(l)
	}
	for _, s := range h.Sessions {
		f.sessions[s.ID] = &session{timeout: s.Timeout}
	}
	var pending []snapNode
	sawRoot := false
	for i := 0; i < h.Nodes; i++ {
		var sn snapNode
		if err := dec.Decode(&sn); err != nil {
			return nil, fmt.Errorf("%w: node %d: %v", ErrBadSnapshot, i, err)
		}
		if !wellFormed(sn.Path) {
			// A node at a path no create could make (no leading '/', an
			// empty segment) would break the path index.
			return nil, fmt.Errorf("%w: node %d: malformed path %q", ErrBadSnapshot, i, sn.Path)
		}
		if int(sn.ACL) >= len(f.acls.lists) {
			return nil, fmt.Errorf("%w: node %q: bad ACL reference", ErrBadSnapshot, sn.Path)
		}
		if _, dup := f.lookup(sn.Path); dup && (sn.Path != RootPath || sawRoot) {
			return nil, fmt.Errorf("%w: %q listed twice", ErrBadSnapshot, sn.Path)
		}
		sawRoot = sawRoot || sn.Path == RootPath
		// Snapshots before the arena tree listed nodes in any order.
		if !f.place(sn.Path, sn.node(), sn.Data) {
			pending = append(pending, sn)
		}
	}
	if !sawRoot {
		return nil, fmt.Errorf("%w: no root node", ErrBadSnapshot)
	}
	if err := f.placePending(pending); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	f.lastZxid = h.LastZxid
	return f, f.reindex()
}

// wellFormed reports whether p has the shape of a node path: "/" or
// '/'-separated non-empty names. It checks only what the tree's index
// relies on, not every rule a create enforces (wire.ValidatePath), so a
// snapshot written under older rules still loads.
func wellFormed(p string) bool {
	if p == RootPath {
		return true
	}
	return strings.HasPrefix(p, "/") && !strings.HasSuffix(p, "/") && !strings.Contains(p, "//")
}

func (sn *snapNode) node() node {
	return node{aclRef: sn.ACL, czxid: sn.Czxid, mzxid: sn.Mzxid, pzxid: sn.Pzxid,
		ctime: sn.Ctime, mtime: sn.Mtime, owner: sn.Owner,
		version: sn.Version, cversion: sn.Cversion, aversion: sn.Aversion}
}

// place puts a node read from a snapshot or a State at path: an existing
// node (the root, a built-in) is overwritten in place, keeping its
// children. It reports false, changing nothing, if the parent is missing.
func (f *FSM) place(path string, t node, data []byte) bool {
	if id, ok := f.lookup(path); ok {
		n := f.mut(id)
		f.dataSize += int64(len(data) - n.dataLen())
		old := *n
		*n = t
		n.setBuf(old.name(), data)
		n.parent, n.first, n.next, n.prev, n.nkids = old.parent, old.first, old.next, old.prev, old.nkids
		return true
	}
	pid, ok := f.lookup(wire.ParentPath(path))
	if !ok {
		return false
	}
	f.putNode(path, pid, t, data)
	return true
}

// placePending places nodes whose parents were missing when they were
// read: shorter paths first, so every parent comes before its children.
func (f *FSM) placePending(pending []snapNode) error {
	slices.SortStableFunc(pending, func(a, b snapNode) int { return len(a.Path) - len(b.Path) })
	for i := range pending {
		sn := &pending[i]
		if _, dup := f.lookup(sn.Path); dup {
			return fmt.Errorf("%q listed twice", sn.Path)
		}
		if !f.place(sn.Path, sn.node(), sn.Data) {
			return fmt.Errorf("%q has no parent", sn.Path)
		}
	}
	return nil
}

// reindex rebuilds the session, container and TTL indexes from the nodes.
func (f *FSM) reindex() error {
	var err error
	f.chunks.walk(func(p string, _ uint32, n *node) {
		switch {
		case err != nil:
		case n.isEphemeral():
			s := f.sessions[n.owner]
			if s == nil {
				err = fmt.Errorf("%w: ephemeral %q of unknown session 0x%x", ErrBadSnapshot, p, n.owner)
				return
			}
			s.ephemerals0()[p] = struct{}{}
		case n.isContainer():
			f.containers[p] = struct{}{}
		default:
			if _, ok := n.ttl(); ok {
				f.ttls[p] = struct{}{}
			}
		}
	})
	return err
}
