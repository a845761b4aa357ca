package fsm

// Whole-state access for tools that work outside Apply: backups (Capture,
// WriteSnapshot, ReadSnapshotFile), inspection (Inspect) and importers that
// build a state from another system's data (BuildState).

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/paddockzk/paddock/internal/wire"
)

// Capture is a point-in-time capture of the state, as Snapshot takes for
// Raft: a copy of the chunk list under the lock, after which Apply continues
// while WriteTo encodes. Call Release when done (it is safe to call twice).
type Capture struct{ s *snapshot }

// Capture captures the current state.
func (f *FSM) Capture() *Capture {
	f.mu.Lock()
	defer f.mu.Unlock()
	return &Capture{f.capture()}
}

// LastZxid is the zxid (Raft index) of the last command the capture holds.
func (c *Capture) LastZxid() int64 { return c.s.header.LastZxid }

// Nodes is the number of znodes in the capture.
func (c *Capture) Nodes() int { return c.s.header.Nodes }

// WriteTo streams the capture in the snapshot format (the bytes Persist
// writes to Raft) and returns the number of bytes written.
func (c *Capture) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := c.s.encode(cw)
	return cw.n, err
}

// Release lets the FSM stop copying nodes on write for this capture.
func (c *Capture) Release() { c.s.Release() }

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// WriteSnapshot writes a consistent snapshot of the state to w and returns
// the zxid it was taken at.
func (f *FSM) WriteSnapshot(w io.Writer) (lastZxid int64, err error) {
	c := f.Capture()
	defer c.Release()
	_, err = c.WriteTo(w)
	return c.LastZxid(), err
}

// ReadSnapshotFile reads a snapshot written by WriteSnapshot, Capture or
// Raft (Persist) into a new FSM and verifies its invariants (Check).
// Errors wrap ErrBadSnapshot.
func ReadSnapshotFile(r io.Reader) (*FSM, error) {
	f, err := readSnapshot(r)
	if err != nil {
		return nil, err
	}
	f.rebuildQuotas()
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSnapshot, err)
	}
	return f, nil
}

// NodeState is one znode for BuildState.
type NodeState struct {
	Path string
	Data []byte
	ACL  []wire.ACL
	// Stat's DataLength and NumChildren are derived and ignored. Its
	// EphemeralOwner is the stored owner: the session of an ephemeral,
	// wire.ContainerOwner for a container, wire.TTLOwner(ttl) for a TTL
	// node (clients are shown 0 for the last two). Its Cversion is
	// ignored: clients see 2×Seq − numChildren, as ZooKeeper.
	Stat wire.Stat
	// Seq counts child creates (ZooKeeper's stored cversion): the next
	// sequential suffix.
	Seq int32
}

// State is a whole replicated state for BuildState.
type State struct {
	// LastZxid is the zxid (Raft index) the state is at; every node's
	// czxid, mzxid and pzxid must be at most LastZxid.
	LastZxid int64
	// NextSession is the next session id to hand out; 0 lets the first
	// createSession derive it from the time, as on a fresh cluster.
	NextSession int64
	// Secret keys session passwords; empty means the server proposes one
	// when it first leads.
	Secret []byte
	// Sessions lists the live sessions (SessionInfo.Ephemerals is ignored;
	// ephemerals are found from the nodes' owners).
	Sessions []SessionInfo
	// Nodes lists every znode, in any order. The built-in nodes (/,
	// /zookeeper, /zookeeper/quota, /zookeeper/config) are created as New
	// creates them unless listed.
	Nodes []NodeState
}

// BuildState returns an FSM holding exactly st, except that the data of
// every quota's zookeeper_stats node is recomputed from the tree (as
// ZooKeeper does when it loads a snapshot; Paddock then keeps it up to
// date). It fails if a path is invalid or listed twice, a node has no
// parent, an ephemeral's owner session is not listed, or the result
// violates an invariant of Check (for example a zxid beyond LastZxid).
func BuildState(st *State) (*FSM, error) {
	f := New()
	f.lastZxid, f.nextSession = st.LastZxid, st.NextSession
	f.secret = slices.Clone(st.Secret)
	for _, s := range st.Sessions {
		if _, dup := f.sessions[s.ID]; dup {
			return nil, fmt.Errorf("fsm: session 0x%x listed twice", s.ID)
		}
		f.sessions[s.ID] = &session{timeout: s.Timeout}
	}
	// Start from New's built-in nodes, replaced by any listed version.
	seen := map[string]bool{}
	var pending []snapNode
	for i := range st.Nodes {
		ns := &st.Nodes[i]
		if ns.Path != RootPath {
			if err := wire.ValidatePath(ns.Path); err != nil {
				return nil, fmt.Errorf("fsm: node %q: %v", ns.Path, err)
			}
		}
		if seen[ns.Path] {
			return nil, fmt.Errorf("fsm: node %q listed twice", ns.Path)
		}
		seen[ns.Path] = true
		s := ns.Stat
		if s.EphemeralOwner > 0 && f.sessions[s.EphemeralOwner] == nil {
			return nil, fmt.Errorf("fsm: ephemeral %q is owned by unlisted session 0x%x", ns.Path, s.EphemeralOwner)
		}
		sn := snapNode{Path: ns.Path, Data: ns.Data, ACL: f.acls.ref(ns.ACL),
			Czxid: s.Czxid, Mzxid: s.Mzxid, Pzxid: s.Pzxid, Ctime: s.Ctime, Mtime: s.Mtime,
			Owner: s.EphemeralOwner, Version: s.Version, Cversion: ns.Seq, Aversion: s.Aversion}
		if !f.place(sn.Path, sn.node(), sn.Data) {
			pending = append(pending, sn)
		}
	}
	if err := f.placePending(pending); err != nil {
		return nil, fmt.Errorf("fsm: node %w", err)
	}
	if err := f.reindex(); err != nil {
		return nil, err
	}
	f.rebuildQuotas()
	for q := range f.quotas {
		if id, ok := f.lookup(statNodePath(q)); ok {
			f.setData(f.mut(id), statsData(f.subtreeSize(q)))
		}
	}
	if err := f.Check(); err != nil {
		return nil, fmt.Errorf("fsm: state violates invariants: %w", err)
	}
	return f, nil
}

// PathStat is one row of Inspect's top lists.
type PathStat struct {
	Path string `json:"path"`
	// SubtreeNodes counts the node and all its descendants.
	SubtreeNodes int `json:"subtree_nodes"`
	// SubtreeBytes is the data of the node and all its descendants.
	SubtreeBytes int64 `json:"subtree_bytes"`
	// DataBytes is the node's own data.
	DataBytes int `json:"data_bytes"`
}

// Inspection describes a state (paddock snapshot inspect).
type Inspection struct {
	LastZxid   int64 `json:"last_zxid"`
	Znodes     int   `json:"znodes"`
	Ephemerals int   `json:"ephemerals"`
	Sessions   int   `json:"sessions"`
	Containers int   `json:"containers"`
	TTLNodes   int   `json:"ttl_nodes"`
	DataBytes  int64 `json:"data_bytes"` // bytes of node data
	PathBytes  int64 `json:"path_bytes"` // bytes of node paths
	ACLLists   int   `json:"acl_lists"`  // distinct ACL lists in use
	// TopBySubtree lists the largest subtrees by node count (the root,
	// which holds everything, excluded); TopByData the largest nodes by
	// their own data. Ties are broken by path.
	TopBySubtree []PathStat `json:"top_by_subtree"`
	TopByData    []PathStat `json:"top_by_data"`
}

// Inspect counts the state and lists the top paths (top rows each).
func (f *FSM) Inspect(top int) Inspection {
	f.mu.RLock()
	defer f.mu.RUnlock()
	in := Inspection{LastZxid: f.lastZxid, Znodes: f.count, Sessions: len(f.sessions),
		Containers: len(f.containers), TTLNodes: len(f.ttls)}
	for _, s := range f.sessions {
		in.Ephemerals += len(s.ephemerals)
	}
	used := map[uint32]bool{}
	rows := make([]PathStat, 0, f.count)
	f.chunks.walk(func(p string, _ uint32, n *node) {
		in.DataBytes += int64(n.dataLen())
		in.PathBytes += int64(len(p))
		used[n.aclRef] = true
		rows = append(rows, PathStat{Path: p, SubtreeNodes: 1, SubtreeBytes: int64(n.dataLen()), DataBytes: n.dataLen()})
	})
	in.ACLLists = len(used)
	// Children have longer paths than their parents: folding the longest
	// paths first accumulates every subtree without recursion.
	slices.SortFunc(rows, func(a, b PathStat) int {
		return cmp.Or(cmp.Compare(len(b.Path), len(a.Path)), cmp.Compare(a.Path, b.Path))
	})
	index := make(map[string]int, len(rows))
	for i, r := range rows {
		index[r.Path] = i
	}
	for _, r := range rows {
		if r.Path == RootPath {
			continue
		}
		if j, ok := index[wire.ParentPath(r.Path)]; ok {
			rows[j].SubtreeNodes += r.SubtreeNodes
			rows[j].SubtreeBytes += r.SubtreeBytes
		}
	}
	pick := func(less func(a, b PathStat) int, skipRoot bool) []PathStat {
		out := make([]PathStat, 0, len(rows))
		for _, r := range rows {
			if !(skipRoot && r.Path == RootPath) {
				out = append(out, r)
			}
		}
		slices.SortFunc(out, func(a, b PathStat) int { return cmp.Or(less(a, b), cmp.Compare(a.Path, b.Path)) })
		if top >= 0 && len(out) > top {
			out = out[:top]
		}
		return out
	}
	in.TopBySubtree = pick(func(a, b PathStat) int {
		return cmp.Or(cmp.Compare(b.SubtreeNodes, a.SubtreeNodes), cmp.Compare(b.SubtreeBytes, a.SubtreeBytes))
	}, true)
	in.TopByData = pick(func(a, b PathStat) int { return cmp.Compare(b.DataBytes, a.DataBytes) }, false)
	return in
}
