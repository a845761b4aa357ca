package diff_test

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestMulti: successful multis (one zxid for every op, per-op result
// types), failing multis (ops before the failure OK, the failing op's
// code, RuntimeInconsistency after, nothing applied, no event), and an
// empty multi.
func TestMulti(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.create(c, "/m", "", wire.ModePersistent)
		r.create(c, "/m/a", "a", wire.ModePersistent)
		r.children(w, "/m", true)
		r.get(w, "/m/a", true)

		r.note("success: every result type, one zxid")
		r.multi(c,
			r.mCreate(wire.OpCreate, "/m/b", "b", wire.ModePersistent),
			r.mCreate(wire.OpCreate, "/m/s-", "", wire.ModePersistentSequential),
			r.mSetData("/m/a", "a2", 0),
			r.mCheck("/m/a", 1),
			r.mCheck("/m/b", 0),
			r.mSetData("/m/b", "b2", -1),
			r.mDelete("/m/b", 1),
			r.mCreate(wire.OpCreate, "/m/e", "", wire.ModeEphemeral))
		r.events(w)
		r.children(c, "/m", false)
		r.get(c, "/m/a", false)

		r.note("failure at each position: nothing applied, no event")
		r.children(w, "/m", true)
		r.get(w, "/m/a", true)
		r.multi(c, r.mSetData("/m/a", "x", -1), r.mCreate(wire.OpCreate, "/m/a", "", wire.ModePersistent), r.mDelete("/m/e", -1))
		r.multi(c, r.mCheck("/m/a", 99), r.mSetData("/m/a", "x", -1))
		r.multi(c, r.mSetData("/m/a", "x", -1), r.mDelete("/m/e", -1), r.mCheck("/m/e", 0), r.mDelete("/m/nothing", -1))
		r.multi(c, r.mDelete("/m", -1), r.mSetData("/m/a", "x", -1))
		r.multi(c, r.mCreate(wire.OpCreate, "/m/e/x", "", wire.ModePersistent))
		r.multi(c, r.mCreate(wire.OpCreate, "/m/bad/", "", wire.ModePersistent), r.mCheck("/m/a", -1))
		r.multi(c, wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: r.p("/m/noacl")}}, r.mCheck("/m/a", -1))
		r.multi(c, r.mSetData("/m/a", "x", 5), r.mSetData("/m/a", "x", 5))
		r.events(w)
		r.get(c, "/m/a", false)
		r.children(c, "/m", false)

		r.note("later ops see earlier ones")
		r.multi(c, r.mCreate(wire.OpCreate, "/m/n", "", wire.ModePersistent), r.mCreate(wire.OpCreate, "/m/n/n", "", wire.ModePersistent),
			r.mSetData("/m/n", "1", 0), r.mCheck("/m/n", 1), r.mDelete("/m/n/n", 0), r.mDelete("/m/n", 1),
			r.mCreate(wire.OpCreate, "/m/n", "again", wire.ModePersistent))
		r.multi(c, r.mDelete("/m/e", -1), r.mCreate(wire.OpCreate, "/m/e", "", wire.ModePersistent), r.mCreate(wire.OpCreate, "/m/e/kid", "", wire.ModePersistent))
		r.events(w)
		r.children(c, "/m", false)
		r.get(c, "/m/n", false)

		r.note("empty multi")
		r.multi(c)
	})
}

// TestMultiCreateOpcodes: how a create inside a multi is typed. ZooKeeper
// 3.8 re-derives a sub-create's opcode from its flags (a create2 becomes a
// create, so it gets no Stat; flags CONTAINER make any create a
// container); Paddock keeps create2 and createContainer as sent, as
// ZooKeeper 3.9 does (ZOOKEEPER-4026).
func TestMultiCreateOpcodes(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/o", "", wire.ModePersistent)
		r.multi(c, r.mCreate(wire.OpCreate, "/o/container-flag", "", wire.ModeContainer),
			r.mCreate(wire.OpCreate2, "/o/container-flag2", "", wire.ModeContainer))
		r.doShapeDiffer(c, "ZooKeeper 3.8.0 answers create2 in a multi with a create result (ZOOKEEPER-4026, fixed in 3.9)",
			"OK [create]", "OK [create2]", wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{r.mCreate(wire.OpCreate2, "/o/c2", "", wire.ModePersistent)}})
		r.doShapeDiffer(c, "ZooKeeper 3.8.0 turns a createContainer with ephemeral flags in a multi into an ephemeral create",
			"OK [create]", "OK [create2]", wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{r.mCreate(wire.OpCreateContainer, "/o/ce", "", wire.ModeEphemeral)}})
		res := c.call(wire.OpGetEphemerals, &wire.PathRequest{Path: r.p("/o")})
		r.differ("getEphemerals after a createContainer with ephemeral flags in a multi", fmtEphemerals(r, res), "[~/o/ce]", "[]")
		r.multi(c, r.mCreate(wire.OpCreate, "/o/badflags", "", 9))
		r.children(c, "/o", false)

		r.note("TTL flags and createTTL in a multi (under ~/t, not compared further)")
		r.create(c, "/t", "", wire.ModePersistent)
		r.doShapeDiffer(c, "ZooKeeper 3.8.0 turns a createTTL without TTL flags in a multi into a create, ignoring the TTL",
			"OK [create]", "OK [error:BadArguments]", wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{{Op: wire.OpCreateTTL,
				Req: &wire.CreateTTLRequest{Path: r.p("/t/ttl0"), ACL: openACL, Flags: wire.ModePersistent, TTL: 5000}}}})
		r.doShapeDiffer(c, "ZooKeeper 3.8.0 re-types a create with TTL flags in a multi as createTTL without a TTL and fails the whole request",
			"MarshallingError", "OK [error:BadArguments]", wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
				r.mCreate(wire.OpCreate, "/t/ttlflags", "", wire.ModePersistentWithTTL)}})
	})
}

func fmtEphemerals(r *run, res result) string {
	if res.code != wire.OK {
		return codeName(res.code)
	}
	ps := res.resp.(*wire.GetEphemeralsResponse).Ephemerals
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = r.rel(p)
	}
	return sortedList(out)
}

// TestMultiRead: each sub-read succeeds or fails on its own; no watch is
// set.
func TestMultiRead(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.create(c, "/r", "data", wire.ModePersistent)
		r.create(c, "/r/a", "", wire.ModePersistent)
		r.create(c, "/r/b", "", wire.ModePersistent)
		r.createACL(c, "/r/secret", []wire.ACL{{Perms: wire.PermWrite, ID: wire.AnyoneID}})
		r.multiRead(w, r.mGetData("/r"), r.mGetChildren("/r"), r.mGetData("/missing"), r.mGetChildren("/missing"),
			r.mGetChildren("/r/a"), r.mGetData("/r/secret"), r.mGetChildren("/r/secret"), r.mGetData("/r/a"))
		r.multiRead(w)
		r.multiRead(w, wire.MultiOp{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: r.p("/r"), Watch: true}},
			wire.MultiOp{Op: wire.OpGetChildren, Req: &wire.PathWatchRequest{Path: r.p("/r"), Watch: true}})
		r.setData(c, "/r", "changed", -1)
		r.create(c, "/r/c", "", wire.ModePersistent)
		r.events(w)
		r.multiRead(w, wire.MultiOp{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: r.p("/r/")}},
			wire.MultiOp{Op: wire.OpGetChildren, Req: &wire.PathWatchRequest{Path: r.p("/r/\x00")}})
	})
}
