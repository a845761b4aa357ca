package diff_test

import "github.com/paddockzk/paddock/internal/wire"

// Shorthands for the requests scenarios send most. Paths are relative to
// the scenario's base node ("/a" is base+"/a"); every call is recorded.

var openACL = wire.OpenACLUnsafe

func (r *run) create(c *conn, rel, data string, mode wire.CreateMode) result {
	r.t.Helper()
	return r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p(rel), Data: []byte(data), ACL: openACL, Flags: mode})
}

func (r *run) createACL(c *conn, rel string, acl []wire.ACL) result {
	r.t.Helper()
	return r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p(rel), Data: []byte{}, ACL: acl})
}

func (r *run) setData(c *conn, rel, data string, version int32) result {
	r.t.Helper()
	return r.do(c, wire.OpSetData, &wire.SetDataRequest{Path: r.p(rel), Data: []byte(data), Version: version})
}

func (r *run) del(c *conn, rel string, version int32) result {
	r.t.Helper()
	return r.do(c, wire.OpDelete, &wire.DeleteRequest{Path: r.p(rel), Version: version})
}

func (r *run) get(c *conn, rel string, watch bool) result {
	r.t.Helper()
	return r.do(c, wire.OpGetData, &wire.PathWatchRequest{Path: r.p(rel), Watch: watch})
}

func (r *run) exists(c *conn, rel string, watch bool) result {
	r.t.Helper()
	return r.do(c, wire.OpExists, &wire.PathWatchRequest{Path: r.p(rel), Watch: watch})
}

// children sends getChildren2 (children and the parent's Stat).
func (r *run) children(c *conn, rel string, watch bool) result {
	r.t.Helper()
	return r.do(c, wire.OpGetChildren2, &wire.PathWatchRequest{Path: r.p(rel), Watch: watch})
}

func (r *run) getACL(c *conn, rel string) result {
	r.t.Helper()
	return r.do(c, wire.OpGetACL, &wire.PathRequest{Path: r.p(rel)})
}

func (r *run) setACL(c *conn, rel string, acl []wire.ACL, version int32) result {
	r.t.Helper()
	return r.do(c, wire.OpSetACL, &wire.SetACLRequest{Path: r.p(rel), ACL: acl, Version: version})
}

// auth sends an AuthPacket (xid -4).
func (r *run) auth(c *conn, scheme, cred string) result {
	r.t.Helper()
	return r.doXid(c, wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: scheme, Auth: []byte(cred)})
}

func (r *run) addWatch(c *conn, rel string, mode wire.AddWatchMode) result {
	r.t.Helper()
	return r.do(c, wire.OpAddWatch, &wire.AddWatchRequest{Path: r.p(rel), Mode: mode})
}

func (r *run) multi(c *conn, ops ...wire.MultiOp) result {
	r.t.Helper()
	return r.do(c, wire.OpMulti, &wire.MultiRequest{Ops: ops})
}

func (r *run) multiRead(c *conn, ops ...wire.MultiOp) result {
	r.t.Helper()
	return r.do(c, wire.OpMultiRead, &wire.MultiRequest{Ops: ops})
}

// Multi sub-operations.

func (r *run) mCreate(op wire.OpCode, rel, data string, mode wire.CreateMode) wire.MultiOp {
	return wire.MultiOp{Op: op, Req: &wire.CreateRequest{Path: r.p(rel), Data: []byte(data), ACL: openACL, Flags: mode}}
}

func (r *run) mDelete(rel string, version int32) wire.MultiOp {
	return wire.MultiOp{Op: wire.OpDelete, Req: &wire.DeleteRequest{Path: r.p(rel), Version: version}}
}

func (r *run) mSetData(rel, data string, version int32) wire.MultiOp {
	return wire.MultiOp{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: r.p(rel), Data: []byte(data), Version: version}}
}

func (r *run) mCheck(rel string, version int32) wire.MultiOp {
	return wire.MultiOp{Op: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: r.p(rel), Version: version}}
}

func (r *run) mGetData(rel string) wire.MultiOp {
	return wire.MultiOp{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: r.p(rel)}}
}

func (r *run) mGetChildren(rel string) wire.MultiOp {
	return wire.MultiOp{Op: wire.OpGetChildren, Req: &wire.PathWatchRequest{Path: r.p(rel)}}
}
