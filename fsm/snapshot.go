package fsm

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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

type nodeRef struct {
	path string
	n    *node
}

// snapshot is a point-in-time capture of the FSM. Nodes it references are
// never modified afterwards: FSM.mutable copies them while it is active.
type snapshot struct {
	f      *FSM
	header snapHeader
	nodes  []nodeRef
	done   atomic.Bool
}

func (f *FSM) snapshotsActive() bool { return f.active.Load() > 0 }

// Snapshot implements raft.FSM: it captures the state in O(n) pointer
// copies; Persist does the encoding and I/O.
func (f *FSM) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.capture(), nil
}

func (f *FSM) capture() *snapshot {
	s := &snapshot{f: f, header: snapHeader{
		LastZxid: f.lastZxid, NextSession: f.nextSession, Secret: f.secret,
		ACLs: f.acls.lists, Nodes: len(f.nodes),
	}}
	for id, ss := range f.sessions {
		s.header.Sessions = append(s.header.Sessions, snapSession{ID: id, Timeout: ss.timeout})
	}
	s.nodes = make([]nodeRef, 0, len(f.nodes))
	for p, n := range f.nodes {
		s.nodes = append(s.nodes, nodeRef{p, n})
	}
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
	var sn snapNode
	for _, r := range s.nodes {
		n := r.n
		sn = snapNode{Path: r.path, Data: n.data, ACL: n.aclRef, Czxid: n.czxid,
			Mzxid: n.mzxid, Pzxid: n.pzxid, Ctime: n.ctime, Mtime: n.mtime,
			Owner: n.owner, Version: n.version, Cversion: n.cversion, Aversion: n.aversion}
		if err := enc.Encode(&sn); err != nil {
			return err
		}
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
	f.nodes, f.acls, f.sessions = fresh.nodes, fresh.acls, fresh.sessions
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
	f := &FSM{nodes: make(map[string]*node, h.Nodes), acls: newACLTable(),
		sessions:   make(map[int64]*session, len(h.Sessions)),
		containers: make(map[string]struct{}), ttls: make(map[string]struct{}),
		secret: h.Secret, nextSession: h.NextSession, lastZxid: h.LastZxid}
	for _, l := range h.ACLs {
		f.acls.ref(l)
	}
	for _, s := range h.Sessions {
		f.sessions[s.ID] = &session{timeout: s.Timeout}
	}
	for i := 0; i < h.Nodes; i++ {
		var sn snapNode
		if err := dec.Decode(&sn); err != nil {
			return nil, fmt.Errorf("%w: node %d: %v", ErrBadSnapshot, i, err)
		}
		if int(sn.ACL) >= len(f.acls.lists) {
			return nil, fmt.Errorf("%w: node %q: bad ACL reference", ErrBadSnapshot, sn.Path)
		}
		f.nodes[sn.Path] = &node{data: sn.Data, aclRef: sn.ACL, czxid: sn.Czxid,
			mzxid: sn.Mzxid, pzxid: sn.Pzxid, ctime: sn.Ctime, mtime: sn.Mtime,
			owner: sn.Owner, version: sn.Version, cversion: sn.Cversion, aversion: sn.Aversion}
		f.dataSize += int64(len(sn.Path) + len(sn.Data))
	}
	return f, f.relink()
}

// relink rebuilds children sets and indexes from the flat node map.
func (f *FSM) relink() error {
	if f.nodes[RootPath] == nil {
		return fmt.Errorf("%w: no root node", ErrBadSnapshot)
	}
	for p, n := range f.nodes {
		switch {
		case n.isEphemeral():
			s := f.sessions[n.owner]
			if s == nil {
				return fmt.Errorf("%w: ephemeral %q of unknown session 0x%x", ErrBadSnapshot, p, n.owner)
			}
			s.ephemerals0()[p] = struct{}{}
		case n.isContainer():
			f.containers[p] = struct{}{}
		default:
			if _, ok := n.ttl(); ok {
				f.ttls[p] = struct{}{}
			}
		}
		if p == RootPath {
			continue
		}
		parent := f.nodes[wire.ParentPath(p)]
		if parent == nil {
			return fmt.Errorf("%w: %q has no parent", ErrBadSnapshot, p)
		}
		if parent.children == nil {
			parent.children = make(map[string]struct{})
		}
		parent.children[wire.BaseName(p)] = struct{}{}
	}
	return nil
}
