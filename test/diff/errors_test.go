package diff_test

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// malformed are path tails appended to the scenario's base node (so that
// a server accepting one by mistake creates it where cleanup finds it).
var malformed = []string{
	"/", "//", "//x", "/x/", "/x//y", "/.", "/..", "/x/.", "/x/..", "/./x", "/../x", "/x/./y",
	"/\x00", "/x\x00y", "/\x01", "/x\x1f", "/x\ty", "/\x7f", "/\u0080", "/\u009f",
	"/\ud7ff\ue000", "/\ue000", "/\uf8ff", "/\ufff0", "/\ufffd", "/\uffff", "/\U0001F600", "/\xff",
}

// wellFormed are unusual but valid names.
var wellFormed = []string{"/.x", "/..x", "/x.", "/...", "/\u00a0", "/\ud7ff", "/\uf900", "/é", "/日本", "/x y", "/zookeeper"}

// TestPathValidation: which paths each write accepts, and with which
// error it refuses the others; reads never validate.
func TestPathValidation(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/x", "", wire.ModePersistent)
		r.create(c, "/x/y", "", wire.ModePersistent)
		for _, tail := range wellFormed {
			r.create(c, tail, "", wire.ModePersistent)
			r.get(c, tail, false)
			r.del(c, tail, -1)
		}
		for _, tail := range malformed {
			p := r.p(tail)
			r.create(c, tail, "", wire.ModePersistent)
			r.create(c, tail, "", wire.ModePersistentSequential)
			r.setData(c, tail, "", -1)
			r.setACL(c, tail, openACL, -1)
			r.multi(c, r.mCheck(tail, -1))
			r.do(c, wire.OpGetData, &wire.PathWatchRequest{Path: p})
			r.do(c, wire.OpExists, &wire.PathWatchRequest{Path: p})
			r.do(c, wire.OpGetChildren, &wire.PathWatchRequest{Path: p})
			r.do(c, wire.OpGetACL, &wire.PathRequest{Path: p})
			r.do(c, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: p})
		}
		r.note("paths that are not under the base node")
		for _, p := range []string{"", "x", "x/y", "/", "//"} {
			r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: p, ACL: openACL})
			r.do(c, wire.OpSetData, &wire.SetDataRequest{Path: p, Version: 123456})
			r.do(c, wire.OpSetACL, &wire.SetACLRequest{Path: p, ACL: openACL, Version: 123456})
			r.do(c, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{{Op: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: p, Version: 123456}}}})
			r.do(c, wire.OpDelete, &wire.DeleteRequest{Path: p, Version: 123456})
		}
		r.note("sequential prefixes are checked with the suffix in place")
		for _, tail := range []string{"/x/", "/x//", "/x/.", "/x/..", "/x/.."} {
			r.create(c, tail, "", wire.ModePersistentSequential)
		}
		r.children(c, "/x", false)
	})
}

// TestDeletePaths: delete does not validate its path as the other writes
// do: ZooKeeper refuses only a path without '/', with NUL or one of the
// system nodes (BadArguments) and answers NoNode (or whatever the parent
// lookup gives) for any other malformed path.
func TestDeletePaths(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/x", "", wire.ModePersistent)
		r.create(c, "/x/y", "", wire.ModePersistent)
		for _, tail := range malformed {
			r.del(c, tail, -1)
			r.multi(c, r.mDelete(tail, -1))
		}
		for _, p := range []string{"", "x", "/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config", "/zookeeper/", "/zookeeper/nothing"} {
			r.do(c, wire.OpDelete, &wire.DeleteRequest{Path: p, Version: -1})
			r.do(c, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{{Op: wire.OpDelete, Req: &wire.DeleteRequest{Path: p, Version: -1}}}})
		}
		r.note("a malformed path whose parent is missing or unreadable")
		r.del(c, "/missing/", -1)
		r.createACL(c, "/locked", []wire.ACL{{Perms: wire.PermRead, ID: wire.AnyoneID}})
		r.del(c, "/locked/", -1)
		r.del(c, "/locked/x/", -1)
		r.children(c, "/x", false)
	})
}

// TestWriteErrorPrecedence: every error code of every write, and which
// wins when a request has several faults.
func TestWriteErrorPrecedence(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		readOnly := []wire.ACL{{Perms: wire.PermRead, ID: wire.AnyoneID}}
		noRead := []wire.ACL{{Perms: wire.PermAll &^ wire.PermRead, ID: wire.AnyoneID}}
		r.create(c, "/n", "", wire.ModePersistent)
		r.create(c, "/n/child", "", wire.ModePersistent)
		r.create(c, "/eph", "", wire.ModeEphemeral)
		r.createACL(c, "/ro", readOnly)
		r.createACL(c, "/nr", noRead)
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/ro/kid"), ACL: openACL}) // refused: no CREATE
		r.setACL(c, "/ro", readOnly, -1)                                                 // refused: no ADMIN

		r.note("create")
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/bad/"), ACL: nil, Flags: 9})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/bad/"), ACL: nil})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/missing/x"), ACL: nil})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/missing/x"), ACL: openACL, Flags: 9})
		r.do(c, wire.OpCreateTTL, &wire.CreateTTLRequest{Path: r.p("/missing/x"), ACL: openACL, Flags: wire.ModePersistentWithTTL})
		r.do(c, wire.OpCreateTTL, &wire.CreateTTLRequest{Path: r.p("/bad/"), ACL: nil, Flags: wire.ModePersistentWithTTL, TTL: 10})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/ro/x"), ACL: nil})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/ro/x"), ACL: openACL})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/n"), ACL: openACL})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/n"), ACL: nil})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/eph/x"), ACL: openACL})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/eph/x-"), ACL: openACL, Flags: wire.ModeEphemeralSequential})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/eph"), ACL: openACL})
		r.setACL(c, "/eph", readOnly, -1)
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/eph/x"), ACL: openACL})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/nr/x"), ACL: openACL})

		r.note("delete")
		r.del(c, "/missing/x", -1)
		r.del(c, "/ro/x", 5)
		r.del(c, "/nr/x", 5)
		r.del(c, "/n/nothing", 5)
		r.del(c, "/n", 5)
		r.del(c, "/n", 0)
		r.del(c, "/n", -1)
		r.del(c, "/n/child", 1)
		r.del(c, "/n/child", -2)

		r.note("setData")
		r.setData(c, "/missing", "", 5)
		r.setData(c, "/ro", "", 5)
		r.setData(c, "/n", "", 5)
		r.setData(c, "/n", "", -2)
		r.setData(c, "/nr", "", 0)

		r.note("setACL")
		r.setACL(c, "/bad/", nil, 5)
		r.setACL(c, "/missing", nil, 5)
		r.setACL(c, "/missing", openACL, 5)
		r.setACL(c, "/ro", nil, 5)
		r.setACL(c, "/ro", openACL, 5)
		r.setACL(c, "/n", openACL, 5)
		r.setACL(c, "/n", openACL, 0)
		r.setACL(c, "/n", openACL, 0)
		r.setACL(c, "/nr", noRead, 0)

		r.note("check (inside multi)")
		r.multi(c, r.mCheck("/missing", 5))
		r.multi(c, r.mCheck("/nr", 5))
		r.multi(c, r.mCheck("/nr", -1))
		r.multi(c, r.mCheck("/ro", 5))
		r.multi(c, r.mCheck("/n", 5))
		r.multi(c, r.mCheck("/n", 0))
		r.multi(c, r.mCheck("/n", -1))
		r.multi(c, r.mCheck("/bad/", 0))

		r.note("createContainer flags")
		for i, mode := range []wire.CreateMode{wire.ModePersistentWithTTL, wire.ModePersistentSequentialWithTTL, 7, -1} {
			r.do(c, wire.OpCreateContainer, &wire.CreateRequest{Path: r.p("/cont" + string(rune('a'+i))), ACL: openACL, Flags: mode})
		}
	})
}

// TestCreateContainerFlags: createContainer (19) makes a container
// whatever non-TTL flags it carries (sequential ones add a suffix), as
// ZooKeeper's PrepRequestProcessor chooses the node type by opcode.
func TestCreateContainerFlags(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/k", "", wire.ModePersistent)
		for _, mode := range []wire.CreateMode{wire.ModePersistent, wire.ModeEphemeral, wire.ModePersistentSequential,
			wire.ModeEphemeralSequential, wire.ModeContainer} {
			res := r.do(c, wire.OpCreateContainer, &wire.CreateRequest{Path: r.p("/k/" + mode.String()), ACL: openACL, Flags: mode})
			if res.code == wire.OK {
				r.create(c, res.resp.(*wire.Create2Response).Path[len(r.base):]+"/kid", "", wire.ModePersistent)
			}
		}
		r.children(c, "/k", false)
		r.do(c, wire.OpGetEphemerals, &wire.PathRequest{Path: r.p("/k")})
	})
}
