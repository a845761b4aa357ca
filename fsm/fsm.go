package fsm

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/paddockzk/paddock/internal/wire"
)

// Well-known paths that always exist and can never be deleted.
const (
	RootPath      = "/"
	ZooKeeperPath = "/zookeeper"
	QuotaPath     = "/zookeeper/quota"
	ConfigPath    = "/zookeeper/config"
)

// PasswordLen is the length of a session password on the wire.
const PasswordLen = 16

// session is one entry of the replicated session table.
type session struct {
	timeout    int32
	ephemerals map[string]struct{}
}

// FSM is the replicated znode tree and session table. The zero value is
// not usable; call New.
type FSM struct {
	mu sync.RWMutex

	// The tree (tree.go): records in chunks, addressed by id.
	chunks arena
	gens   []uint64  // per chunk: the snapshot generation it was made in
	free   []uint32  // ids of deleted records, reused first
	hw     uint32    // ids handed out so far
	count  int       // nodes in the tree
	index  pathIndex // path -> id

	acls       *aclTable
	sessions   map[int64]*session
	containers map[string]struct{}
	ttls       map[string]struct{}
	quotas     map[string]quotaTrack // quota'd path -> its limits

	secret      []byte
	nextSession int64
	lastZxid    int64
	gen         uint64       // current snapshot generation; see mutable
	active      atomic.Int64 // snapshots not yet released
	dataSize    int64

	// OnApply, if set, is called at the end of every Apply with the state
	// lock held. It must not block and must not call back into the FSM.
	OnApply func(r *Result)

	// undo is non-nil while a multi is being applied.
	undo []func()
}

// New returns an FSM holding only the initial nodes.
func New() *FSM {
	f := &FSM{}
	f.reset()
	return f
}

func (f *FSM) reset() {
	f.acls = newACLTable()
	f.sessions = make(map[int64]*session)
	f.containers = make(map[string]struct{})
	f.ttls = make(map[string]struct{})
	f.quotas = make(map[string]quotaTrack)
	f.secret, f.nextSession, f.lastZxid = nil, 0, 0
	open := f.acls.ref(wire.OpenACLUnsafe)
	// The built-in nodes hold empty (not null) data, as in ZooKeeper;
	// Curator reads /zookeeper/config's data into a stream.
	f.newTree()
	f.mut(rootID).aclRef = open
	for _, p := range []string{ZooKeeperPath, QuotaPath} {
		pid, _ := f.lookup(wire.ParentPath(p))
		f.putNode(p, pid, node{aclRef: open}, []byte{})
	}
	// As ZooKeeper's DataTree.addConfigNode: READ_ACL_UNSAFE set with
	// version -1, which leaves aversion at -1.
	zk, _ := f.lookup(ZooKeeperPath)
	f.putNode(ConfigPath, zk, node{aclRef: f.acls.ref(wire.ReadACLUnsafe), aversion: -1}, []byte{})
}

func isSystemPath(p string) bool {
	return p == RootPath || p == ZooKeeperPath || p == QuotaPath || p == ConfigPath
}

// Password returns the password of session id: a keyed hash of the id under
// the cluster secret, so any replica can check it and nobody can derive it
// from the id alone.
func (f *FSM) Password(id int64) []byte {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.password(id)
}

func (f *FSM) password(id int64) []byte {
	m := hmac.New(sha256.New, f.secret)
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(id))
	m.Write(b[:])
	return m.Sum(nil)[:PasswordLen]
}

// CheckPassword reports whether passwd is session id's password, in
// constant time.
func (f *FSM) CheckPassword(id int64, passwd []byte) bool {
	return hmac.Equal(f.Password(id), passwd)
}

// HasSecret reports whether the cluster secret has been initialised.
func (f *FSM) HasSecret() bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return len(f.secret) > 0
}

// LastZxid returns the zxid (log index) of the last applied command.
func (f *FSM) LastZxid() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.lastZxid
}

// Reader reads the state without taking the lock. It is only valid
// inside View, which holds the read lock so that several reads (and the
// caller's own bookkeeping, such as registering a watch) see one state
// that no Apply can change in between.
type Reader struct{ f *FSM }

// View calls fn with a Reader while holding the read lock. fn must not
// block and must not call the FSM's own (locking) methods.
func (f *FSM) View(fn func(r Reader)) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	fn(Reader{f})
}

// Get returns a node's data and Stat (getData).
func (r Reader) Get(path string) ([]byte, wire.Stat, error) {
	n := r.f.node(path)
	if n == nil {
		return nil, wire.Stat{}, wire.ErrNoNode
	}
	return n.data(), n.stat(), nil
}

// Exists returns a node's Stat and whether it exists.
func (r Reader) Exists(path string) (wire.Stat, bool) {
	if n := r.f.node(path); n != nil {
		return n.stat(), true
	}
	return wire.Stat{}, false
}

// Children returns a node's child names, sorted, and its Stat.
func (r Reader) Children(path string) ([]string, wire.Stat, error) {
	n := r.f.node(path)
	if n == nil {
		return nil, wire.Stat{}, wire.ErrNoNode
	}
	return r.f.chunks.childNames(n), n.stat(), nil
}

// GetACL returns a node's ACL (shared; do not modify) and Stat.
func (r Reader) GetACL(path string) ([]wire.ACL, wire.Stat, error) {
	n := r.f.node(path)
	if n == nil {
		return nil, wire.Stat{}, wire.ErrNoNode
	}
	return r.f.acls.get(n.aclRef), n.stat(), nil
}

// ACL returns a node's ACL (shared; do not modify) and whether it exists.
func (r Reader) ACL(path string) ([]wire.ACL, bool) {
	if n := r.f.node(path); n != nil {
		return r.f.acls.get(n.aclRef), true
	}
	return nil, false
}

// WatchState returns what SetWatches restoration needs to know of a path.
func (r Reader) WatchState(path string) (exists bool, mzxid, pzxid int64) {
	if n := r.f.node(path); n != nil {
		return true, n.mzxid, n.pzxid
	}
	return false, 0, 0
}

// LastZxid returns the zxid of the last applied command.
func (r Reader) LastZxid() int64 { return r.f.lastZxid }

// Get is Reader.Get under the read lock.
func (f *FSM) Get(path string) (data []byte, st wire.Stat, err error) {
	f.View(func(r Reader) { data, st, err = r.Get(path) })
	return
}

// Exists is Reader.Exists under the read lock.
func (f *FSM) Exists(path string) (st wire.Stat, ok bool) {
	f.View(func(r Reader) { st, ok = r.Exists(path) })
	return
}

// Children is Reader.Children under the read lock.
func (f *FSM) Children(path string) (kids []string, st wire.Stat, err error) {
	f.View(func(r Reader) { kids, st, err = r.Children(path) })
	return
}

// GetACL is Reader.GetACL under the read lock.
func (f *FSM) GetACL(path string) (acl []wire.ACL, st wire.Stat, err error) {
	f.View(func(r Reader) { acl, st, err = r.GetACL(path) })
	return
}

// WatchState is Reader.WatchState under the read lock.
func (f *FSM) WatchState(path string) (exists bool, mzxid, pzxid int64) {
	f.View(func(r Reader) { exists, mzxid, pzxid = r.WatchState(path) })
	return
}

// Ephemerals returns the sorted paths of session's ephemeral nodes that
// start with prefix; "" or "/" selects all (getEphemerals).
func (f *FSM) Ephemerals(sessionID int64, prefix string) (out []string) {
	f.View(func(r Reader) { out = r.Ephemerals(sessionID, prefix) })
	return out
}

// Ephemerals is FSM.Ephemerals under the read lock.
func (r Reader) Ephemerals(sessionID int64, prefix string) []string {
	f := r.f
	s := f.sessions[sessionID]
	out := []string{}
	if s == nil {
		return out
	}
	all := prefix == "" || prefix == RootPath
	for p := range s.ephemerals {
		if all || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// AllChildrenNumber counts every descendant of path
// (getAllChildrenNumber). For "/" that is every node but the root,
// including /zookeeper and its children, as ZooKeeper counts.
func (f *FSM) AllChildrenNumber(path string) (n int32, err error) {
	f.View(func(r Reader) { n, err = r.AllChildrenNumber(path) })
	return n, err
}

// AllChildrenNumber is FSM.AllChildrenNumber under the read lock.
func (r Reader) AllChildrenNumber(path string) (int32, error) {
	f := r.f
	id, ok := f.lookup(path)
	if !ok {
		return 0, wire.ErrNoNode
	}
	if id == rootID {
		return int32(f.count - 1), nil
	}
	count := -1 // the node itself
	f.chunks.subtree(id, func(*node) { count++ })
	return int32(count), nil
}

// SessionInfo describes one replicated session.
type SessionInfo struct {
	ID         int64
	Timeout    int32
	Ephemerals int
}

// Session returns one session's info.
func (f *FSM) Session(id int64) (SessionInfo, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	s := f.sessions[id]
	if s == nil {
		return SessionInfo{}, false
	}
	return SessionInfo{ID: id, Timeout: s.timeout, Ephemerals: len(s.ephemerals)}, true
}

// Sessions returns every session, sorted by id.
func (f *FSM) Sessions() []SessionInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]SessionInfo, 0, len(f.sessions))
	for id, s := range f.sessions {
		out = append(out, SessionInfo{ID: id, Timeout: s.timeout, Ephemerals: len(s.ephemerals)})
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return cmpInt64(a.ID, b.ID) })
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Stats are counts for monitoring (mntr).
type Stats struct {
	Nodes      int
	Ephemerals int
	Sessions   int
	DataSize   int64 // bytes of data plus paths, as zk_approximate_data_size
	LastZxid   int64
}

// Stats returns current counts.
func (f *FSM) Stats() Stats {
	f.mu.RLock()
	defer f.mu.RUnlock()
	eph := 0
	for _, s := range f.sessions {
		eph += len(s.ephemerals)
	}
	return Stats{Nodes: f.count, Ephemerals: eph, Sessions: len(f.sessions),
		DataSize: f.dataSize, LastZxid: f.lastZxid}
}

// ReapCandidates returns, sorted, the containers that had children and
// have none now and the TTL nodes with no children whose TTL has passed
// since their mtime (nowMs, wall-clock ms); at most limit paths (0 = all).
// The leader's reaper proposes a deleteContainer op for each; Apply
// re-checks the conditions.
func (f *FSM) ReapCandidates(nowMs int64, limit int) []string {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []string
	for p := range f.containers {
		// cversion counts child creates: 0 means never had a child (it
		// can be negative once the sequence has wrapped past 2^31-1).
		if n := f.node(p); n.nkids == 0 && n.cversion != 0 {
			out = append(out, p)
		}
	}
	for p := range f.ttls {
		n := f.node(p)
		if ttl, _ := n.ttl(); n.nkids == 0 && nowMs-n.mtime > ttl {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}
