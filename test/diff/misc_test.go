package diff_test

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestReadsOnMissingNodes: error codes of every read on a missing node,
// and which of them leave a watch behind (only exists does).
func TestReadsOnMissingNodes(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.create(c, "/m", "", wire.ModePersistent)
		for _, op := range []wire.OpCode{wire.OpExists, wire.OpGetData, wire.OpGetChildren, wire.OpGetChildren2} {
			r.do(w, op, &wire.PathWatchRequest{Path: r.p("/m/" + op.String()), Watch: true})
		}
		r.do(w, wire.OpGetACL, &wire.PathRequest{Path: r.p("/m/x")})
		r.do(w, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: r.p("/m/x")})
		r.do(w, wire.OpSync, &wire.PathRequest{Path: r.p("/m/x")})
		r.do(w, wire.OpGetEphemerals, &wire.PathRequest{Path: r.p("/m/x")})
		for _, op := range []wire.OpCode{wire.OpExists, wire.OpGetData, wire.OpGetChildren, wire.OpGetChildren2} {
			r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/m/" + op.String()), Type: wire.WatcherAny})
			r.create(c, "/m/"+op.String(), "", wire.ModePersistent)
			r.create(c, "/m/"+op.String()+"/kid", "", wire.ModePersistent)
			r.del(c, "/m/"+op.String()+"/kid", -1)
			r.del(c, "/m/"+op.String(), -1)
		}
		r.events(w)
	})
}

// TestGetAllChildrenNumber: descendants are counted at any depth; on "/"
// the count includes /zookeeper and its children. Other tests change the
// shared oracle's tree, so the "/" count is compared with a walk of the
// whole tree taken while nothing changed; the test is not parallel, so
// at least this package's other tests stay quiet meanwhile.
func TestGetAllChildrenNumber(t *testing.T) {
	both(t, func(r *run) {
		c := r.conn("c")
		for _, p := range []string{"/g", "/g/a", "/g/b", "/g/a/c", "/g/a/c/d", "/h"} {
			r.create(c, p, "", wire.ModePersistent)
		}
		r.create(c, "/g/a/e", "", wire.ModeEphemeral)
		for _, p := range []string{"", "/g", "/g/a", "/g/b", "/g/a/c/d", "/h", "/missing"} {
			r.do(c, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: r.p(p)})
		}
		r.do(c, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: "/zookeeper"})
		r.note("getAllChildrenNumber(/) minus the nodes below / found by a walk: %s", quiet(r, func() (string, bool) {
			res := c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: "/"})
			if res.code != wire.OK {
				return codeName(res.code), true
			}
			walked, stable := walkTree(r, c, res.zxid)
			return strconv.Itoa(int(res.resp.(*wire.GetAllChildrenNumberResponse).TotalNumber) - walked), stable
		}))
	})
}

// quiet returns what sample returns once two consecutive samples agree
// and each saw no write (sample's second result). ZooKeeper answers
// reads in parallel with other sessions' writes, so one sample at one
// reply zxid is not enough to know the tree stood still.
func quiet(r *run, sample func() (string, bool)) string {
	r.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	prev, prevOK := "", false
	for time.Now().Before(deadline) {
		v, ok := sample()
		if ok && prevOK && v == prev {
			return v
		}
		prev, prevOK = v, ok
	}
	r.t.Fatalf("the oracle's tree never stood still for two samples in a row")
	return ""
}

// walkTree counts the nodes below "/" level by level, pipelining each
// level's getChildren requests. stable reports whether every reply came
// at zxid.
func walkTree(r *run, c *conn, zxid int64) (count int, stable bool) {
	r.t.Helper()
	level := []string{"/"}
	for len(level) > 0 {
		xids := make([]int32, len(level))
		for i, p := range level {
			xid, err := c.send(0, wire.OpGetChildren, &wire.PathWatchRequest{Path: p})
			if err != nil {
				r.t.Fatalf("walk: %v", err)
			}
			xids[i] = xid
		}
		var next []string
		stable = true
		for i, xid := range xids {
			h, d, err := c.reply(xid)
			if err != nil {
				r.t.Fatalf("walk: %v", err)
			}
			if h.Zxid != zxid {
				stable = false
			}
			if h.Err != wire.OK {
				continue // deleted meanwhile; the walk is unstable anyway
			}
			var resp wire.GetChildrenResponse
			if err := resp.Decode(d); err != nil {
				r.t.Fatalf("walk: %v", err)
			}
			for _, k := range resp.Children {
				next = append(next, wire.JoinPath(level[i], k))
			}
		}
		if !stable {
			return 0, false
		}
		count += len(next)
		level = next
	}
	return count, true
}

// TestEmptyPathReads: ZooKeeper's tree keeps the root under "" as well as
// "/", so reads of "" answer for the root. (The root's Stat is not
// compared: other tests change it. Not parallel, for the counts.)
func TestEmptyPathReads(t *testing.T) {
	both(t, func(r *run) {
		c := r.conn("c")
		res := c.call(wire.OpGetData, &wire.PathWatchRequest{Path: ""})
		r.note("getData \"\" -> %s", codeName(res.code))
		if res.code == wire.OK {
			r.note("the root's data: %s", dataString(res.resp.(*wire.GetDataResponse).Data))
		}
		for _, op := range []wire.OpCode{wire.OpExists, wire.OpGetChildren, wire.OpGetChildren2} {
			res := c.call(op, &wire.PathWatchRequest{Path: ""})
			r.note("%v \"\" -> %s", op, codeName(res.code))
		}
		for _, op := range []wire.OpCode{wire.OpGetACL, wire.OpSync} {
			res := c.call(op, &wire.PathRequest{Path: ""})
			r.note("%v \"\" -> %s %s", op, codeName(res.code), (&norm{}).body(r, aclOnly(res.resp)))
		}
		r.note("getAllChildrenNumber \"\" minus getAllChildrenNumber /: %s", quiet(r, func() (string, bool) {
			all := c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: ""})
			root := c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: "/"})
			if all.code != wire.OK || root.code != wire.OK {
				return codeName(all.code) + " " + codeName(root.code), true
			}
			n := all.resp.(*wire.GetAllChildrenNumberResponse).TotalNumber - root.resp.(*wire.GetAllChildrenNumberResponse).TotalNumber
			return strconv.Itoa(int(n)), all.zxid == root.zxid
		}))
		res = c.call(wire.OpMultiRead, &wire.MultiRequest{Ops: []wire.MultiOp{{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: ""}}}})
		r.note("multiRead [getData \"\"] -> %s", shape(res))
		res = c.call(wire.OpExists, &wire.PathWatchRequest{Path: "", Watch: true})
		r.note("exists \"\" watch -> %s", codeName(res.code))
	})
}

// aclOnly drops the root's Stat (other tests change it) from a getACL
// reply.
func aclOnly(resp wire.Record) wire.Record {
	if g, ok := resp.(*wire.GetACLResponse); ok {
		return &wire.GetACLResponse{ACL: g.ACL}
	}
	return resp
}

// TestSystemNodes: /zookeeper, /zookeeper/quota and /zookeeper/config as
// clients see them (/zookeeper's cversion is -2: Stat reports cversion as
// 2*creates-numChildren, and its two children were never "created"), and
// what writes to them answer (their data is empty, not null, on both).
func TestSystemNodes(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		for _, p := range []string{"/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
			res := c.call(wire.OpGetData, &wire.PathWatchRequest{Path: p})
			if res.code != wire.OK {
				r.t.Fatalf("getData %s: %v", p, res.code)
			}
			gd := res.resp.(*wire.GetDataResponse)
			r.note("%s data: %s", p, dataString(gd.Data))
			st := gd.Stat
			r.register(&wire.StatResponse{Stat: st})
			r.line(func(n *norm) string { return fmt.Sprintf("c: getData %s -> Stat %s", p, n.stat(st)) })
			r.do(c, wire.OpGetChildren, &wire.PathWatchRequest{Path: p})
			res = c.call(wire.OpGetACL, &wire.PathRequest{Path: p})
			r.note("c: getACL %s -> %s %s", p, codeName(res.code), (&norm{}).body(r, aclOnly(res.resp)))
			r.do(c, wire.OpSetData, &wire.SetDataRequest{Path: p, Version: 123456})
			r.do(c, wire.OpSetACL, &wire.SetACLRequest{Path: p, ACL: openACL, Version: 123456})
			r.do(c, wire.OpDelete, &wire.DeleteRequest{Path: p, Version: 123456})
		}
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: "/zookeeper/config", ACL: openACL})
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: "/zookeeper/config/x", ACL: openACL})
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: "/zookeeper", ACL: openACL})
	})
}

// TestWhoAmI: the identities each connection holds.
func TestWhoAmI(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.do(c, wire.OpWhoAmI, nil)
		r.auth(c, "digest", "alice:secret")
		r.do(c, wire.OpWhoAmI, nil)
		r.auth(c, "digest", superAuth)
		r.do(c, wire.OpWhoAmI, nil)
		r.auth(c, "digest", "alice:other")
		r.do(c, wire.OpWhoAmI, nil)
	})
}

// TestServerOps: reconfig on a standalone server, a check (13) outside a
// multi (which no client library sends: ZooKeeper 3.8 never replies to one
// that succeeds, Paddock answers OK), sasl without SASL configured, and
// opcodes no client may send.
func TestServerOps(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.do(c, wire.OpReconfig, &wire.ReconfigRequest{JoiningServers: "server.2=127.0.0.1:2888:3888;2181", CurConfigID: -1})
		r.do(c, wire.OpReconfig, &wire.ReconfigRequest{NewMembers: "server.1=127.0.0.1:2888:3888;2181", CurConfigID: 5})
		r.note("reconfig: connection still open: %v", c.alive())

		r.note("check (13) outside a multi: a failing one is answered; ZooKeeper never answers one that succeeds")
		r.create(c, "/chk", "", wire.ModePersistent)
		for i, req := range []*wire.CheckVersionRequest{{Path: r.p("/chk"), Version: -1}, {Path: r.p("/chk"), Version: 0},
			{Path: r.p("/chk"), Version: 3}, {Path: r.p("/missing"), Version: -1}, {Path: r.p("/chk/"), Version: -1}} {
			k := r.conn("check" + strconv.Itoa(i))
			xid, _ := k.send(0, wire.OpCheck, req)
			_, _ = k.send(wire.XidPing, wire.OpPing, nil)
			first := firstReply(r, k, xid)
			if req.Version == 3 || req.Path != r.p("/chk") {
				r.note("%s: first reply after a check and a ping: %s", r.desc(wire.OpCheck, req), first)
			} else {
				r.differ("first reply after a successful "+r.desc(wire.OpCheck, req)+" and a ping", first, "ping", "check OK")
			}
			k.closed = true // a late reply would break the xid order
		}

		s := r.conn("s")
		r.do(s, wire.OpSASL, &wire.SASLRequest{Token: []byte{}})
		r.do(s, wire.OpSASL, &wire.SASLRequest{Token: []byte("token")})
		r.note("sasl: connection still open: %v", s.alive())
		r.do(s, wire.OpWhoAmI, nil)

		for _, op := range []wire.OpCode{999, wire.OpNotification, wire.OpSetWatches2 + 100} {
			u := r.conn("op" + op.String())
			r.do(u, op, nil)
			r.note("%v: connection still open: %v", op, u.stillOpen())
		}
	})
}

// firstReply reads the next reply on k and names it: "ping", or "check"
// with its code for the reply to xid.
func firstReply(r *run, k *conn, xid int32) string {
	r.t.Helper()
	for {
		b, err := k.readFrame()
		if err != nil {
			return "error: " + err.Error()
		}
		var h wire.ReplyHeader
		if err := h.Decode(wire.NewDecoder(b)); err != nil {
			r.t.Fatalf("%s: %v", k.name, err)
		}
		switch h.Xid {
		case wire.XidNotification:
			continue
		case wire.XidPing:
			return "ping"
		case xid:
			return "check " + codeName(h.Err)
		}
		return "xid " + strconv.Itoa(int(h.Xid))
	}
}

// TestInternalOpcodes: createSession (-10) and deleteContainer (20) are
// server-internal. ZooKeeper answers a client that sends them with an
// error and keeps the connection; Paddock answers Unimplemented and
// closes it. Either way nothing happens.
func TestInternalOpcodes(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.do(c, wire.OpCreateContainer, &wire.CreateRequest{Path: r.p("/c"), ACL: openACL, Flags: wire.ModeContainer})
		a := r.conn("a")
		res := a.call(wire.OpCreateSession, nil)
		r.differ("createSession answer", codeName(res.code), "MarshallingError", "Unimplemented")
		b := r.conn("b")
		res = b.call(wire.OpDeleteContainer, &wire.PathRequest{Path: r.p("/c")})
		r.differ("deleteContainer answer", codeName(res.code), "BadArguments", "Unimplemented")
		r.exists(c, "/c", false)
	})
}
