package diff_test

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestCRUDAndStat: create, create2, getData, exists, getChildren(2),
// setData, setACL, delete, sync, and what each does to the node's and the
// parent's Stat (versions, zxids, times, dataLength, numChildren).
func TestCRUDAndStat(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/p", "parent", wire.ModePersistent)
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: r.p("/p/plain"), Data: []byte("x"), ACL: openACL})
		r.create(c, "/p/a", "hello", wire.ModePersistent)
		r.get(c, "/p", false)
		r.get(c, "/p/a", false)
		r.exists(c, "/p/a", false)
		r.children(c, "/p", false)
		r.do(c, wire.OpGetChildren, &wire.PathWatchRequest{Path: r.p("/p")})
		r.children(c, "/p/a", false)

		r.note("setData: version+1, mzxid and mtime move, czxid and ctime stay")
		r.setData(c, "/p/a", "bye", -1)
		r.setData(c, "/p/a", "again", 1)
		r.setData(c, "/p/a", "", 2)
		r.get(c, "/p/a", false)
		r.setData(c, "/p/a", "stale", 1)

		r.note("null data and empty data")
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/p/null"), Data: nil, ACL: openACL})
		r.get(c, "/p/null", false)
		r.do(c, wire.OpSetData, &wire.SetDataRequest{Path: r.p("/p/null"), Data: nil, Version: -1})
		r.get(c, "/p/null", false)
		r.create(c, "/p/empty", "", wire.ModePersistent)
		r.get(c, "/p/empty", false)

		r.note("setACL: aversion+1 only")
		r.setACL(c, "/p/a", []wire.ACL{{Perms: wire.PermAll, ID: wire.AnyoneID}, {Perms: wire.PermRead, ID: wire.Id{Scheme: "ip", ID: "10.0.0.0/8"}}}, -1)
		r.setACL(c, "/p/a", openACL, 1)
		r.setACL(c, "/p/a", openACL, 0)
		r.getACL(c, "/p/a")
		r.get(c, "/p/a", false)

		r.note("child create and delete: parent cversion, pzxid, numChildren; parent mzxid unchanged")
		r.create(c, "/p/b", "", wire.ModePersistent)
		r.children(c, "/p", false)
		r.del(c, "/p/b", -1)
		r.children(c, "/p", false)
		r.del(c, "/p/a", 1)
		r.del(c, "/p/a", 4)
		r.del(c, "/p/a", 3)
		r.exists(c, "/p/a", false)
		r.get(c, "/p/a", false)
		r.children(c, "/p", false)
		r.del(c, "/p/plain", 0)
		r.del(c, "/p/null", -1)
		r.del(c, "/p/empty", -1)
		r.get(c, "/p", false)
		r.do(c, wire.OpSync, &wire.PathRequest{Path: r.p("/p")})
		r.do(c, wire.OpSync, &wire.PathRequest{Path: r.p("/missing")})

		r.note("deep tree: grandchildren do not touch the grandparent")
		r.create(c, "/p/x", "", wire.ModePersistent)
		r.create(c, "/p/x/y", "", wire.ModePersistent)
		r.create(c, "/p/x/y/z", "", wire.ModePersistent)
		r.children(c, "/p", false)
		r.children(c, "/p/x", false)
		r.del(c, "/p/x/y/z", -1)
		r.children(c, "/p/x", false)
		r.children(c, "/p/x/y", false)
		r.del(c, "/p", -1)
	})
}

// TestSequentialSuffixes: the suffix comes from the parent's counter of
// creates; deletes and failed creates do not reuse or skip numbers.
func TestSequentialSuffixes(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/q", "", wire.ModePersistent)
		r.create(c, "/q/s-", "", wire.ModePersistentSequential)
		r.create(c, "/q/s-", "", wire.ModePersistentSequential)
		r.create(c, "/q/t-", "", wire.ModeEphemeralSequential)
		r.children(c, "/q", false)
		r.del(c, "/q/s-0000000000", -1)
		r.del(c, "/q/t-0000000002", -1)
		r.children(c, "/q", false)
		r.create(c, "/q/s-", "", wire.ModePersistentSequential)
		r.create(c, "/q/", "", wire.ModePersistentSequential)
		r.create(c, "/q/plain", "", wire.ModePersistent)
		r.create(c, "/q/plain", "", wire.ModePersistent)
		r.create(c, "/q/s-", "", wire.ModePersistentSequential)
		r.create(c, "/q/missing/s-", "", wire.ModePersistentSequential)
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: r.p("/q/s-"), ACL: nil, Flags: wire.ModePersistentSequential})
		r.create(c, "/q/s-", "", wire.ModePersistentSequential)
		r.children(c, "/q", false)
		r.note("a node named like a future sequential child makes that create fail")
		r.create(c, "/q/u-0000000009", "", wire.ModePersistent)
		r.create(c, "/q/u-", "", wire.ModePersistentSequential)
		r.create(c, "/q/u-", "", wire.ModePersistentSequential)
		r.children(c, "/q", false)
		r.note("sequential creates inside one multi")
		r.doShapeDiffer(c, "ZooKeeper 3.8.0 answers create2 in a multi with a create result, without Stat (ZOOKEEPER-4026, fixed in 3.9)",
			"OK [create create]", "OK [create create2]", wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
				r.mCreate(wire.OpCreate, "/q/m-", "", wire.ModePersistentSequential),
				r.mCreate(wire.OpCreate2, "/q/m-", "", wire.ModeEphemeralSequential)}})
		r.children(c, "/q", false)
	})
}

// TestEphemerals: ephemeral and sequential-ephemeral nodes, their owner,
// NoChildrenForEphemerals, getEphemerals, and what closing the session
// deletes and notifies.
func TestEphemerals(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner, other := r.conn("owner"), r.conn("other")
		r.create(owner, "/e", "", wire.ModePersistent)
		r.create(owner, "/e/eph", "data", wire.ModeEphemeral)
		r.create(owner, "/e/seq-", "", wire.ModeEphemeralSequential)
		r.create(other, "/e/theirs", "", wire.ModeEphemeral)
		r.create(owner, "/e/dir", "", wire.ModePersistent)
		r.create(owner, "/e/dir/eph", "", wire.ModeEphemeral)
		r.get(other, "/e/eph", false)
		r.exists(other, "/e/seq-0000000001", false)
		r.create(owner, "/e/eph/child", "", wire.ModePersistent)
		r.create(other, "/e/eph/child", "", wire.ModeEphemeral)
		r.create(owner, "/e/eph/s-", "", wire.ModePersistentSequential)
		r.create(owner, "/e/eph", "", wire.ModeEphemeral)
		r.do(owner, wire.OpCreateContainer, &wire.CreateRequest{Path: r.p("/e/eph/c"), ACL: openACL, Flags: wire.ModeContainer})
		r.do(owner, wire.OpCreateTTL, &wire.CreateTTLRequest{Path: r.p("/e/eph/t"), ACL: openACL, Flags: wire.ModePersistentWithTTL, TTL: 60000})

		r.note("getEphemerals: the caller's own, by prefix")
		for _, prefix := range []string{"/", "", "  ", " / ", "\t/", r.p("/e"), r.p("/e/dir"), r.p("/e/se"), r.p("/nothing"),
			r.p("/e") + " ", " " + r.p("/e"), r.p("/e/")} {
			r.do(owner, wire.OpGetEphemerals, &wire.PathRequest{Path: prefix})
		}
		r.do(other, wire.OpGetEphemerals, &wire.PathRequest{Path: "/"})

		r.note("an ephemeral can be deleted by anyone; its parent's stats follow")
		r.del(other, "/e/dir/eph", -1)
		r.children(other, "/e/dir", false)
		r.do(owner, wire.OpGetEphemerals, &wire.PathRequest{Path: "/"})

		r.note("closing the session deletes its ephemerals and notifies")
		r.exists(other, "/e/eph", true)
		r.get(other, "/e/seq-0000000001", true)
		r.children(other, "/e", true)
		r.do(owner, wire.OpCloseSession, nil)
		r.eventsUnordered(other)
		r.children(other, "/e", false)
		r.exists(other, "/e/eph", false)
	})
}

// TestContainersAndTTL: createContainer and createTTL as clients see the
// nodes (ephemeralOwner 0), their argument checks, and their use in multi.
func TestContainersAndTTL(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		cont := func(rel string, mode wire.CreateMode) result {
			return r.do(c, wire.OpCreateContainer, &wire.CreateRequest{Path: r.p(rel), Data: []byte("c"), ACL: openACL, Flags: mode})
		}
		ttl := func(rel string, mode wire.CreateMode, ttl int64) result {
			return r.do(c, wire.OpCreateTTL, &wire.CreateTTLRequest{Path: r.p(rel), Data: []byte("t"), ACL: openACL, Flags: mode, TTL: ttl})
		}
		cont("/c", wire.ModeContainer)
		r.get(c, "/c", false)
		r.create(c, "/c/child", "", wire.ModePersistent)
		r.children(c, "/c", false)
		r.del(c, "/c/child", -1)
		r.get(c, "/c", false)
		cont("/c", wire.ModeContainer)
		cont("/c/s-", wire.ModeContainer)

		ttl("/t", wire.ModePersistentWithTTL, 60000)
		ttl("/ts-", wire.ModePersistentSequentialWithTTL, 1)
		r.get(c, "/t", false)
		r.setData(c, "/t", "x", -1)
		r.create(c, "/t/child", "", wire.ModePersistent)
		r.children(c, "/t", false)

		r.note("TTL argument checks")
		ttl("/bad", wire.ModePersistentWithTTL, 0)
		ttl("/bad", wire.ModePersistentWithTTL, -5)
		ttl("/bad", wire.ModePersistentWithTTL, wire.MaxTTL)
		ttl("/bad2", wire.ModePersistentWithTTL, wire.MaxTTL+1)
		ttl("/bad", wire.ModePersistent, 1000)
		ttl("/bad", wire.ModeEphemeral, 1000)
		ttl("/bad", wire.ModeContainer, 1000)
		ttl("/bad", wire.CreateMode(7), 1000)
		ttl("/missing/x", wire.ModePersistentWithTTL, 1000)
		ttl("/t", wire.ModePersistentWithTTL, 1000)
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: r.p("/bad"), ACL: openACL, Flags: wire.ModePersistentWithTTL})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/bad"), ACL: openACL, Flags: wire.ModePersistentSequentialWithTTL})
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: r.p("/bad"), ACL: openACL, Flags: wire.CreateMode(7)})
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: r.p("/bad"), ACL: openACL, Flags: wire.CreateMode(-1)})

		r.note("container and TTL creates inside multi")
		r.multi(c, wire.MultiOp{Op: wire.OpCreateContainer, Req: &wire.CreateRequest{Path: r.p("/mc"), ACL: openACL, Flags: wire.ModeContainer}},
			wire.MultiOp{Op: wire.OpCreateTTL, Req: &wire.CreateTTLRequest{Path: r.p("/mt"), ACL: openACL, Flags: wire.ModePersistentWithTTL, TTL: 5000}},
			r.mCreate(wire.OpCreate, "/mc/x", "", wire.ModePersistent))
		r.multi(c, wire.MultiOp{Op: wire.OpCreateTTL, Req: &wire.CreateTTLRequest{Path: r.p("/mt2"), ACL: openACL, Flags: wire.ModePersistentWithTTL, TTL: 0}})
		r.get(c, "/mc", false)
		r.get(c, "/mt", false)
	})
}
