package fsm

import (
	"fmt"
	"slices"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/wire"
)

// Apply implements raft.FSM. It returns a *Result.
func (f *FSM) Apply(l *raft.Log) interface{} {
	cmd, err := DecodeCommand(l.Data)
	if err != nil {
		// A committed entry this binary cannot read (written by a newer
		// Paddock, or corrupt): skipping it would let this replica diverge
		// from the others, so stop instead, as etcd does.
		panic(fmt.Sprintf("fsm: cannot apply log entry %d (term %d): %v; is a newer Paddock writing to this cluster?", l.Index, l.Term, err))
	}
	if !l.AppendedAt.IsZero() {
		// The leader's clock when it appended the entry, replicated with
		// it (and stored by the log stores): node times and TTL ages come
		// from the leader alone, as ZooKeeper's leader stamps each txn,
		// whichever node the write came through. cmd.Time, the
		// proposer's clock, stays the fallback for entries without it.
		cmd.Time = l.AppendedAt.UnixMilli()
	}
	return f.ApplyCommand(l.Index, l.Term, cmd)
}

// ApplyCommand applies a decoded command at log position (index, term).
// It is the pure core of Apply.
func (f *FSM) ApplyCommand(index, term uint64, cmd *Command) *Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	zxid := int64(index)
	if zxid > f.lastZxid {
		f.lastZxid = zxid
	}
	r := &Result{Zxid: zxid, Term: term}
	switch cmd.Type {
	case CmdInit:
		if len(f.secret) == 0 {
			f.secret = slices.Clone(cmd.Secret)
		}
	case CmdCreateSession:
		f.createSession(cmd, r)
	case CmdSetSessionTimeout:
		s := f.sessions[cmd.Session]
		if s == nil {
			r.Err = wire.ErrSessionExpired
			break
		}
		s.timeout = cmd.Timeout
		r.Session, r.Timeout = cmd.Session, cmd.Timeout
	case CmdCloseSession:
		f.closeSession(zxid, cmd.Session, r)
	case CmdExpireSession:
		if cmd.Term != term {
			// Proposed by a leader that has since been deposed: ignore.
			r.Err = wire.ErrRuntimeInconsistency
			break
		}
		f.closeSession(zxid, cmd.Session, r)
	case CmdOps:
		f.applyOps(zxid, cmd, r)
	case CmdSetConfig:
		n := f.mutable(ConfigPath)
		f.setData(n, cmd.Data)
		n.version++
		n.mzxid, n.mtime = zxid, cmd.Time
		r.Events = append(r.Events, Event{wire.EventNodeDataChanged, ConfigPath, f.acls.get(n.aclRef)})
		r.Ops = []OpResult{{Type: wire.OpSetData, Stat: n.stat()}}
	default:
		r.Err = wire.ErrUnimplemented
	}
	if f.OnApply != nil {
		f.OnApply(r)
	}
	return r
}

func (f *FSM) createSession(cmd *Command, r *Result) {
	if f.nextSession == 0 {
		// As ZooKeeper's SessionTrackerImpl.initializeNextSessionId: the
		// server id in the top byte (0 in a cluster), then the time, so
		// ids differ between clusters and restarts of an in-memory server.
		// A durable server keeps counting from its stored nextSession.
		f.nextSession = cmd.ServerID<<56 | int64(uint64(cmd.Time<<24)>>8)
		if f.nextSession == 0 {
			f.nextSession = 1
		}
	}
	id := f.nextSession
	f.nextSession++
	f.sessions[id] = &session{timeout: cmd.Timeout}
	r.Session, r.Timeout, r.Passwd = id, cmd.Timeout, f.password(id)
}

// closeSession deletes the session and, in the same step, its ephemerals.
func (f *FSM) closeSession(zxid, id int64, r *Result) {
	s := f.sessions[id]
	if s == nil {
		r.Err = wire.ErrSessionExpired
		return
	}
	paths := make([]string, 0, len(s.ephemerals))
	for p := range s.ephemerals {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		f.removeNode(zxid, p, f.mustLookup(p), r)
	}
	delete(f.sessions, id)
	r.Closed = id
}

func (f *FSM) applyOps(zxid int64, cmd *Command, r *Result) {
	if !cmd.Multi && len(cmd.Ops) != 1 {
		r.Err = wire.ErrBadArguments
		return
	}
	if cmd.Session != 0 && f.sessions[cmd.Session] == nil {
		r.Err = wire.ErrSessionExpired
		if !cmd.Multi {
			r.Ops = []OpResult{{Type: cmd.Ops[0].Type, Err: r.Err}}
		}
		return
	}
	if !cmd.Multi {
		res := f.applyOp(zxid, cmd, &cmd.Ops[0], r)
		r.Err = res.Err
		r.Ops = []OpResult{res}
		return
	}
	f.applyMulti(zxid, cmd, r)
}

func (f *FSM) applyMulti(zxid int64, cmd *Command, r *Result) {
	f.undo = make([]func(), 0, 4*len(cmd.Ops))
	defer func() { f.undo = nil }()
	r.Ops = make([]OpResult, len(cmd.Ops))
	failed := -1
	for i := range cmd.Ops {
		r.Ops[i] = f.applyOp(zxid, cmd, &cmd.Ops[i], r)
		if r.Ops[i].Err != wire.OK {
			failed = i
			break
		}
	}
	if failed < 0 {
		return
	}
	f.rollback()
	r.Events = nil
	code := r.Ops[failed].Err
	for i := range r.Ops {
		res := OpResult{Type: wire.OpError}
		switch {
		case i == failed:
			res.Err = code
		case i > failed:
			res.Err = wire.ErrRuntimeInconsistency
		}
		r.Ops[i] = res
	}
}

func (f *FSM) applyOp(zxid int64, cmd *Command, op *Op, r *Result) OpResult {
	if cmd.NoTTL && op.Mode.IsTTL() && isCreate(op.Type) {
		return OpResult{Type: op.Type, Err: wire.ErrUnimplemented}
	}
	if c := ValidateOp(op); c != wire.OK {
		return OpResult{Type: op.Type, Err: c}
	}
	switch op.Type {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return f.create(zxid, cmd, op, r)
	case wire.OpDelete:
		return f.delete(zxid, cmd, op, r)
	case wire.OpDeleteContainer:
		return f.reap(zxid, cmd.Time, op, r)
	case wire.OpSetData:
		return f.setDataOp(zxid, cmd, op, r)
	case wire.OpSetACL:
		return f.setACL(cmd, op)
	case wire.OpCheck:
		return f.check(cmd, op)
	}
	return OpResult{Type: op.Type, Err: wire.ErrUnimplemented}
}

func (f *FSM) create(zxid int64, cmd *Command, op *Op, r *Result) OpResult {
	res := OpResult{Type: op.Type}
	parentPath := wire.ParentPath(op.Path)
	pid, ok := f.lookup(parentPath)
	if !ok {
		res.Err = wire.ErrNoNode
		return res
	}
	parent := f.chunks.at(pid)
	if !f.allowed(cmd, parent, wire.PermCreate) {
		res.Err = wire.ErrNoAuth
		return res
	}
	path := op.Path
	if op.Mode.IsSequential() {
		path += fmt.Sprintf("%010d", parent.cversion)
	}
	// ZooKeeper checks the full path syntax only now, with the suffix in
	// place: a malformed path whose parent is missing is NoNode.
	if wire.ValidatePath(path) != nil {
		res.Err = wire.ErrBadArguments
		return res
	}
	if _, exists := f.lookup(path); exists {
		res.Err = wire.ErrNodeExists
		return res
	}
	if parent.isEphemeral() {
		res.Err = wire.ErrNoChildrenForEphemerals
		return res
	}
	if res.Err = f.quotaCheck(path, 1, int64(len(op.Data)), cmd.EnforceQuota, r); res.Err != wire.OK {
		return res
	}
	t := node{czxid: zxid, mzxid: zxid, pzxid: zxid,
		ctime: cmd.Time, mtime: cmd.Time, aclRef: f.acls.ref(op.ACL)}
	switch {
	case op.Type == wire.OpCreateContainer || op.Mode.IsContainer():
		// As ZooKeeper's CreateContainerTxn, createContainer makes a
		// container whatever its (non-TTL) mode: an ephemeral or
		// sequential one too. (ZooKeeper makes a create with mode
		// CONTAINER a persistent node; Paddock keeps making it a
		// container, as logs written before this rule expect.)
		t.owner = wire.ContainerOwner
		f.setMember(f.containers, path, true)
	case op.Mode.IsEphemeral():
		if cmd.Session == 0 {
			res.Err = wire.ErrBadArguments
			return res
		}
		t.owner = cmd.Session
		f.setMember(f.sessions[cmd.Session].ephemerals0(), path, true)
	case op.Mode.IsTTL():
		t.owner = wire.TTLOwner(op.TTL)
		f.setMember(f.ttls, path, true)
	}
	id := f.putNode(path, pid, t, op.Data)
	p := f.mut(pid)
	p.cversion++
	p.pzxid = zxid
	pacl := p.aclRef
	f.quotaUpdate(path, 1, int64(len(op.Data)))
	f.quotaNodeChanged(path, false)
	r.Events = append(r.Events, Event{wire.EventNodeCreated, path, f.acls.get(t.aclRef)},
		Event{wire.EventNodeChildrenChanged, parentPath, f.acls.get(pacl)})
	res.Path, res.Stat = path, f.chunks.at(id).stat()
	return res
}

// ephemerals0 returns the session's ephemeral set, creating it if needed.
func (s *session) ephemerals0() map[string]struct{} {
	if s.ephemerals == nil {
		s.ephemerals = make(map[string]struct{})
	}
	return s.ephemerals
}

func (f *FSM) delete(zxid int64, cmd *Command, op *Op, r *Result) OpResult {
	res := OpResult{Type: op.Type}
	if isSystemPath(op.Path) {
		res.Err = wire.ErrBadArguments
		return res
	}
	// Deep paths cost a walk up the parent links per lookup: look up once
	// and pass ids on.
	var parent *node
	id, n := f.nodeID(op.Path)
	if n != nil {
		parent = f.chunks.at(n.parent)
	} else {
		_, parent = f.nodeID(wire.ParentPath(op.Path))
	}
	switch {
	case parent == nil:
		res.Err = wire.ErrNoNode
	case !f.allowed(cmd, parent, wire.PermDelete):
		res.Err = wire.ErrNoAuth
	case n == nil:
		res.Err = wire.ErrNoNode
	case op.Version != -1 && op.Version != n.version:
		res.Err = wire.ErrBadVersion
	case n.nkids > 0:
		res.Err = wire.ErrNotEmpty
	default:
		f.removeNode(zxid, op.Path, id, r)
	}
	return res
}

// reap deletes an empty container, or an empty TTL node whose TTL has
// passed since its mtime, re-checking what the reaper saw.
func (f *FSM) reap(zxid, now int64, op *Op, r *Result) OpResult {
	res := OpResult{Type: op.Type}
	id, ok := f.lookup(op.Path)
	if !ok {
		res.Err = wire.ErrNoNode
		return res
	}
	n := f.chunks.at(id)
	ttl, isTTL := n.ttl()
	switch {
	case !n.isContainer() && !isTTL:
		res.Err = wire.ErrBadArguments
	case n.nkids > 0:
		res.Err = wire.ErrNotEmpty
	case isTTL && now-n.mtime <= ttl:
		res.Err = wire.ErrBadVersion
	default:
		f.removeNode(zxid, op.Path, id, r)
	}
	return res
}

// removeNode deletes node id, at path, which has no children, and updates
// its parent, indexes and events.
func (f *FSM) removeNode(zxid int64, path string, id uint32, r *Result) {
	n := f.chunks.at(id)
	acl, size, pid := n.aclRef, n.dataLen(), n.parent
	switch {
	case n.isEphemeral():
		if s := f.sessions[n.owner]; s != nil {
			f.setMember(s.ephemerals0(), path, false)
		}
	case n.isContainer():
		f.setMember(f.containers, path, false)
	default:
		if _, ok := n.ttl(); ok {
			f.setMember(f.ttls, path, false)
		}
	}
	f.quotaUpdate(path, -1, -int64(size))
	f.quotaNodeChanged(path, true)
	f.deleteNode(path, id)
	parentPath := wire.ParentPath(path)
	p := f.mut(pid)
	if zxid > p.pzxid {
		p.pzxid = zxid
	}
	r.Events = append(r.Events, Event{wire.EventNodeDeleted, path, f.acls.get(acl)},
		Event{wire.EventNodeChildrenChanged, parentPath, f.acls.get(p.aclRef)})
}

func (f *FSM) setDataOp(zxid int64, cmd *Command, op *Op, r *Result) OpResult {
	res := OpResult{Type: op.Type}
	id, n := f.nodeID(op.Path)
	switch {
	case n == nil:
		res.Err = wire.ErrNoNode
	case !f.allowed(cmd, n, wire.PermWrite):
		res.Err = wire.ErrNoAuth
	default:
		res.Err = f.quotaCheck(op.Path, 0, int64(len(op.Data)-n.dataLen()), cmd.EnforceQuota, r)
	}
	if res.Err != wire.OK {
		return res
	}
	switch {
	case op.Version != -1 && op.Version != n.version:
		res.Err = wire.ErrBadVersion
	default:
		f.quotaUpdate(op.Path, 0, int64(len(op.Data)-n.dataLen()))
		n = f.mut(id)
		f.setData(n, op.Data)
		n.version++
		n.mzxid, n.mtime = zxid, cmd.Time
		f.quotaNodeChanged(op.Path, false)
		r.Events = append(r.Events, Event{wire.EventNodeDataChanged, op.Path, f.acls.get(n.aclRef)})
		res.Stat = n.stat()
	}
	return res
}

func (f *FSM) setACL(cmd *Command, op *Op) OpResult {
	res := OpResult{Type: op.Type}
	id, n := f.nodeID(op.Path)
	switch {
	case n == nil:
		res.Err = wire.ErrNoNode
	case !f.allowed(cmd, n, wire.PermAdmin):
		res.Err = wire.ErrNoAuth
	case op.Version != -1 && op.Version != n.aversion:
		res.Err = wire.ErrBadVersion
	default:
		n = f.mut(id)
		n.aclRef = f.acls.ref(op.ACL)
		n.aversion++
		res.Stat = n.stat()
	}
	return res
}

func (f *FSM) check(cmd *Command, op *Op) OpResult {
	res := OpResult{Type: op.Type}
	n := f.node(op.Path)
	switch {
	case n == nil:
		res.Err = wire.ErrNoNode
	case !f.allowed(cmd, n, wire.PermRead):
		res.Err = wire.ErrNoAuth
	case op.Version != -1 && op.Version != n.version:
		res.Err = wire.ErrBadVersion
	default:
		res.Stat = n.stat()
	}
	return res
}
