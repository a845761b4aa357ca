package diff_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
)

// randomSeeds are the seeds TestRandomOperations always runs; set
// DIFF_RANDOM_SEEDS=N to add N fresh ones (each logged in its subtest's
// name, so a divergence can be replayed with DIFF_RANDOM_SEED=S).
var randomSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

// randomOps is the number of requests in one random scenario.
const randomOps = 400

// TestRandomOperations plays seeded random sequences of requests on
// three sessions against both servers and compares the transcripts, as
// every scenario of this suite: creates of every mode but container and
// TTL (their reapers run on timers), setData, delete and setACL with
// right and wrong versions, reads with and without watches, multi and
// multiRead with failing sub-operations, removeWatches, sync,
// getAllChildrenNumber, getEphemerals, pipelines of two to five reads and
// writes sent before any reply is read, and sessions closed (their
// ephemerals deleted, with notifications) and replaced. Paths come from a
// small set of names three deep, so requests meet each other's nodes
// (and missing parents, non-empty nodes, ephemeral parents). What the
// two servers are known to answer differently (README "Where Paddock
// deliberately differs") is left out: create2 inside a multi,
// checkWatches, one connection holding one-shot and persistent watches
// on one path, ACLs that take READ away.
func TestRandomOperations(t *testing.T) {
	forEachSeed(t, func(t *testing.T, seed uint64) {
		both(t, func(r *run) { newRandomScenario(r, seed).play(randomOps) })
	})
}

// forEachSeed runs test for each of scenarioSeeds, as parallel subtests.
func forEachSeed(t *testing.T, test func(t *testing.T, seed uint64)) {
	t.Parallel()
	for _, seed := range scenarioSeeds(t) {
		t.Run("seed="+strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel()
			test(t, seed)
		})
	}
}

// TestRandomOperationsOnAFollower plays the same scenarios with every
// connection on one follower of a 3-node Paddock cluster: its clients'
// writes are forwarded to the leader and answered once the follower has
// applied them, so one node's clients see what ZooKeeper's standalone
// server shows its clients, and the transcripts must be equal too.
func TestRandomOperationsOnAFollower(t *testing.T) {
	forEachSeed(t, func(t *testing.T, seed uint64) {
		bothWith(t, followerOfACluster, func(r *run) { newRandomScenario(r, seed).play(randomOps) })
	})
}

// TestRandomOperationsAcrossACluster plays the scenarios with the
// connections spread over the three nodes of a Paddock cluster, each
// session moved to the next node when it re-attaches, and a sync before
// every read and every look at the notifications (ZooKeeper's way to read
// another server's clients' writes; on the oracle, a standalone server,
// the syncs change nothing): the transcripts must still be equal.
func TestRandomOperationsAcrossACluster(t *testing.T) {
	forEachSeed(t, func(t *testing.T, seed uint64) {
		bothWith(t, func(t *testing.T) string { return strings.Join(testCluster(t).Servers(), ",") },
			func(r *run) {
				g := newRandomScenario(r, seed)
				g.syncReads = true
				g.play(randomOps)
			})
	})
}

// TestRandomOperationsWhileLeadershipMoves is
// TestRandomOperationsAcrossACluster with the cluster's leadership handed
// to another node now and then between two requests (ZooKeeper's side
// only notes it), once every node knows the new leader: a transfer must
// then cost Paddock's clients nothing they can see, no error, no lost
// watch, no session moved. (Pipelined writes that a node forwards to the
// old leader before it has heard of the new one fail with ConnectionLoss,
// as ZooKeeper's clients' do on every change of leader, hence the wait;
// test/cluster's TestClusterOldLeaderServesRightAfterATransfer and
// TestClusterLoneWriteThroughALaggingFollowerAfterATransfer cover what is
// sent at once.)
func TestRandomOperationsWhileLeadershipMoves(t *testing.T) {
	forEachSeed(t, func(t *testing.T, seed uint64) {
		var cl *zktest.Cluster
		bothWith(t, func(t *testing.T) string {
			cl = testCluster(t)
			return strings.Join(cl.Servers(), ",")
		}, func(r *run) {
			g := newRandomScenario(r, seed)
			g.syncReads = true
			g.between = func() {
				r.note("leadership moves")
				if !r.zk {
					moveLeadership(r.t, cl)
				}
			}
			g.play(randomOps)
		})
	})
}

// moveLeadership hands cl's leadership to another node and waits until
// every node names the new leader.
func moveLeadership(t *testing.T, cl *zktest.Cluster) {
	t.Helper()
	if err := cl.Node(cl.Leader()).Server().TransferLeadership(""); err != nil {
		t.Fatalf("leadership transfer: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := cl.Node(cl.Leader()).Server().Leader()
		agree := l != ""
		for i := range cl.Size() {
			agree = agree && cl.Node(i).Server().Leader() == l
		}
		if agree {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the nodes do not agree on a leader after a transfer")
		}
		time.Sleep(time.Millisecond) // a poll interval: no notice of a follower learning its leader
	}
}

// followerOfACluster starts a 3-node cluster and returns a follower's
// client address.
func followerOfACluster(t *testing.T) string {
	c := testCluster(t)
	return c.Servers()[(c.Leader()+1)%c.Size()]
}

// testCluster starts a 3-node cluster with both's settings.
func testCluster(t *testing.T) *zktest.Cluster {
	return zktest.StartCluster(t, 3, paddockOptions()...)
}

// scenarioSeeds is randomSeeds, DIFF_RANDOM_SEED alone if set, plus
// DIFF_RANDOM_SEEDS fresh ones.
func scenarioSeeds(t *testing.T) []uint64 {
	if s := os.Getenv("DIFF_RANDOM_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("DIFF_RANDOM_SEED=%q: %v", s, err)
		}
		return []uint64{seed}
	}
	seeds := append([]uint64(nil), randomSeeds...)
	if s := os.Getenv("DIFF_RANDOM_SEEDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("DIFF_RANDOM_SEEDS=%q: %v", s, err)
		}
		for range n {
			seeds = append(seeds, rand.Uint64())
		}
	}
	return seeds
}

// randomScenario draws requests from its seed. The requests depend on
// the seed and on answers both servers gave alike (the names of
// sequential nodes), so the two runs send the same requests up to the
// first difference, which the transcripts show.
type randomScenario struct {
	r      *run
	rng    *rand.Rand
	conns  []*conn // the sessions taking one-shot watches
	names  []string
	closed int // sessions closed so far, for fresh names
	// watcher holds persistent and persistent-recursive watches only,
	// one mode per path (modes, as ZooKeeper 3.8 keeps them).
	watcher *conn
	modes   map[string]wire.AddWatchMode
	seq     []string // sequential nodes created (relative paths)
	zxids   []int64  // the reply zxids seen, in order
	// syncReads sends a sync before every read, every watch set or
	// removed and every look at the notifications: the sessions are on
	// different servers, and a server serves what it has applied.
	syncReads bool
	// between, if set, runs now and then between two requests.
	between func()
	synced  bool // the request being sent follows a sync (syncReads)
}

func newRandomScenario(r *run, seed uint64) *randomScenario {
	g := &randomScenario{r: r, rng: rand.New(rand.NewPCG(seed, 0x5eed))}
	g.names = []string{"c0", "c1", "c2"}
	for _, n := range g.names {
		g.conns = append(g.conns, r.conn(n))
	}
	r.auth(g.conns[2], "digest", "alice:secret") // c2 is alice too
	g.watcher, g.modes = r.conn("pw"), map[string]wire.AddWatchMode{}
	return g
}

// play sends n random requests, recording the notifications each
// connection got now and then and at the end.
func (g *randomScenario) play(n int) {
	for range n {
		if g.rng.IntN(50) == 0 && g.between != nil {
			g.between()
		}
		g.step()
		if g.rng.IntN(4) == 0 {
			g.events(g.any())
		}
	}
	for _, c := range g.conns {
		g.events(c)
	}
	g.events(g.watcher)
}

// fresh syncs c first when its server may lag behind the writes of
// another server's clients (syncReads).
func (g *randomScenario) fresh(c *conn) {
	if g.syncReads {
		g.r.do(c, wire.OpSync, &wire.PathRequest{Path: g.r.base})
		g.synced = true
	}
}

// events records c's notifications, once c's server has caught up.
func (g *randomScenario) events(c *conn) {
	g.fresh(c)
	g.r.events(c)
}

// eventsUnordered is events for a batch in an order ZooKeeper leaves open.
func (g *randomScenario) eventsUnordered(c *conn) {
	g.fresh(c)
	g.r.eventsUnordered(c)
}

func (g *randomScenario) any() *conn { return g.conns[g.rng.IntN(len(g.conns))] }

// path is a relative path one to three names deep, or now and then a
// sequential node created before.
func (g *randomScenario) path() string {
	if len(g.seq) > 0 && g.rng.IntN(6) == 0 {
		return g.seq[g.rng.IntN(len(g.seq))]
	}
	depth := 1
	switch x := g.rng.IntN(20); {
	case x >= 17:
		depth = 3
	case x >= 10:
		depth = 2
	}
	var b strings.Builder
	for range depth {
		b.WriteString("/" + []string{"a", "b", "c"}[g.rng.IntN(3)])
	}
	return b.String()
}

func (g *randomScenario) version() int32 {
	if g.rng.IntN(3) == 0 {
		return -1
	}
	return int32(g.rng.IntN(3))
}

func (g *randomScenario) data() string {
	return []string{"", "x", "yy", "v" + strconv.Itoa(g.rng.IntN(100))}[g.rng.IntN(4)]
}

func (g *randomScenario) mode() wire.CreateMode {
	return []wire.CreateMode{wire.ModePersistent, wire.ModePersistent, wire.ModeEphemeral,
		wire.ModePersistentSequential, wire.ModeEphemeralSequential}[g.rng.IntN(5)]
}

// acl is open, or one that keeps READ for everyone (and so exists,
// notifications and reads alike on both servers) but takes some of the
// rest away, or all of it from everyone but alice (c2).
func (g *randomScenario) acl() []wire.ACL {
	switch g.rng.IntN(6) {
	case 0, 1, 2:
		return openACL
	case 3:
		return []wire.ACL{{Perms: wire.PermAll, ID: alice}, {Perms: wire.PermRead, ID: wire.Id{Scheme: "world", ID: "anyone"}}}
	}
	perms := []wire.Perm{wire.PermAll, wire.PermRead | wire.PermWrite, wire.PermRead | wire.PermCreate,
		wire.PermRead | wire.PermDelete | wire.PermAdmin}[g.rng.IntN(4)]
	return []wire.ACL{{Perms: perms, ID: wire.Id{Scheme: "world", ID: "anyone"}}}
}

// step sends one random request and notes the zxid of its reply.
func (g *randomScenario) step() {
	r, c := g.r, g.any()
	g.synced = false // a look at the notifications may have synced
	var res result
	switch x := g.rng.IntN(108); {
	case x < 24:
		res = g.create(c, g.path())
	case x < 35:
		res = r.setData(c, g.path(), g.data(), g.version())
	case x < 46:
		res = r.del(c, g.path(), g.version())
	case x < 55:
		g.fresh(c)
		res = r.get(c, g.path(), g.rng.IntN(2) == 0)
	case x < 62:
		g.fresh(c)
		res = r.exists(c, g.path(), g.rng.IntN(2) == 0)
	case x < 69:
		g.fresh(c)
		res = r.children(c, g.path(), g.rng.IntN(2) == 0)
	case x < 72:
		g.fresh(c)
		res = r.do(c, wire.OpGetChildren, &wire.PathWatchRequest{Path: r.p(g.path()), Watch: g.rng.IntN(2) == 0})
	case x < 80:
		res = g.multi(c)
	case x < 82:
		g.fresh(c)
		res = r.multiRead(c, g.readOps()...)
	case x < 85:
		res = r.setACL(c, g.path(), g.acl(), g.version())
	case x < 87:
		g.fresh(c)
		res = r.getACL(c, g.path())
	case x < 90:
		typ := []wire.WatcherType{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny}[g.rng.IntN(3)]
		g.fresh(c)
		res = r.do(c, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p(g.path()), Type: typ})
	case x < 92:
		res = g.addWatch()
	case x < 93:
		res = r.do(c, wire.OpSync, &wire.PathRequest{Path: r.p(g.path())})
	case x < 95:
		g.fresh(c)
		res = r.do(c, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: r.p(g.path())})
	case x < 96:
		g.fresh(c)
		res = r.do(c, wire.OpGetEphemerals, &wire.PathRequest{Path: r.p(g.path())})
	case x < 98:
		g.reattach()
	case x < 100:
		g.closeSession()
	default:
		g.pipelined(c)
	}
	g.noteZxid(res)
}

// noteZxid keeps res's reply zxid for a later setWatches. With syncReads
// only a reply right after a sync: elsewhere a server's zxid may lag the
// others' writes (a write answered at the door by a follower), which
// ZooKeeper's single server never shows.
func (g *randomScenario) noteZxid(res result) {
	if res.zxid > 0 && (!g.syncReads || g.synced) {
		g.zxids = append(g.zxids, res.zxid)
	}
	g.synced = false
}

// create sends a create2 and notes the name of a sequential node made.
func (g *randomScenario) create(c *conn, rel string) result {
	q := g.createReq(rel)
	res := g.r.do(c, q.op, q.req)
	g.learn(q, res)
	return res
}

func (g *randomScenario) createReq(rel string) request {
	return request{wire.OpCreate2, &wire.CreateRequest{Path: g.r.p(rel), Data: []byte(g.data()), ACL: g.acl(), Flags: g.mode()}}
}

// learn notes the sequential nodes q made.
func (g *randomScenario) learn(q request, res result) {
	if res.code != wire.OK {
		return
	}
	switch x := res.resp.(type) {
	case *wire.Create2Response:
		if q.req.(*wire.CreateRequest).Flags.IsSequential() {
			g.seq = append(g.seq, strings.TrimPrefix(x.Path, g.r.base))
		}
	case *wire.MultiResponse:
		ops := q.req.(*wire.MultiRequest).Ops
		for i, mr := range x.Results {
			if cr, ok := mr.Resp.(*wire.CreateResponse); ok && ops[i].Req.(*wire.CreateRequest).Flags.IsSequential() {
				g.seq = append(g.seq, strings.TrimPrefix(cr.Path, g.r.base))
			}
		}
	}
}

// addWatch adds a persistent or persistent-recursive watch on watcher,
// in the mode the path was first watched in.
func (g *randomScenario) addWatch() result {
	rel := g.path()
	mode, ok := g.modes[rel]
	if !ok {
		mode = []wire.AddWatchMode{wire.AddWatchPersistent, wire.AddWatchPersistentRecursive}[g.rng.IntN(2)]
		g.modes[rel] = mode
	}
	g.fresh(g.watcher) // a watch starts from what its server has applied
	return g.r.addWatch(g.watcher, rel, mode)
}

// multi sends two to four write sub-operations, any of which may fail.
func (g *randomScenario) multi(c *conn) result {
	q := g.multiReq()
	res := g.r.do(c, q.op, q.req)
	g.learn(q, res)
	return res
}

func (g *randomScenario) multiReq() request {
	ops := make([]wire.MultiOp, 2+g.rng.IntN(3))
	for i := range ops {
		switch g.rng.IntN(4) {
		case 0:
			ops[i] = g.r.mCreate(wire.OpCreate, g.path(), g.data(), g.mode())
		case 1:
			ops[i] = g.r.mDelete(g.path(), g.version())
		case 2:
			ops[i] = g.r.mSetData(g.path(), g.data(), g.version())
		default:
			ops[i] = g.r.mCheck(g.path(), g.version())
		}
	}
	return request{wire.OpMulti, &wire.MultiRequest{Ops: ops}}
}

// pipelined sends two to five requests on c before reading any reply
// (after a sync, with syncReads): each must be answered as if sent alone,
// in order, a read seeing the writes before it.
func (g *randomScenario) pipelined(c *conn) {
	var reqs []request
	if g.syncReads {
		reqs = append(reqs, request{wire.OpSync, &wire.PathRequest{Path: g.r.base}})
	}
	for range 2 + g.rng.IntN(4) {
		reqs = append(reqs, g.plainReq())
	}
	for i, res := range g.r.doPipelined(c, reqs) {
		g.learn(reqs[i], res)
		g.synced = g.syncReads && i > 0 // behind the pipeline's sync
		g.noteZxid(res)
	}
}

// plainReq draws a request of one connection's own: a write or a read.
func (g *randomScenario) plainReq() request {
	p := g.r.p(g.path())
	watch := g.rng.IntN(2) == 0
	switch x := g.rng.IntN(10); {
	case x < 3:
		return g.createReq(g.path())
	case x < 4:
		return request{wire.OpSetData, &wire.SetDataRequest{Path: p, Data: []byte(g.data()), Version: g.version()}}
	case x < 5:
		return request{wire.OpDelete, &wire.DeleteRequest{Path: p, Version: g.version()}}
	case x < 6:
		return g.multiReq()
	case x < 7:
		return request{wire.OpGetData, &wire.PathWatchRequest{Path: p, Watch: watch}}
	case x < 8:
		return request{wire.OpExists, &wire.PathWatchRequest{Path: p, Watch: watch}}
	case x < 9:
		return request{wire.OpGetChildren2, &wire.PathWatchRequest{Path: p, Watch: watch}}
	default:
		return request{wire.OpMultiRead, &wire.MultiRequest{Ops: g.readOps()}}
	}
}

func (g *randomScenario) readOps() []wire.MultiOp {
	ops := make([]wire.MultiOp, 1+g.rng.IntN(3))
	for i := range ops {
		if g.rng.IntN(2) == 0 {
			ops[i] = g.r.mGetData(g.path())
		} else {
			ops[i] = g.r.mGetChildren(g.path())
		}
	}
	return ops
}

// reattach moves one of the sessions to a new connection, as a client
// does after losing one (the server closes the old connection; its
// one-shot watches and its authentication go with it): half the time it
// restores random watches, and alice's connection authenticates again.
func (g *randomScenario) reattach() {
	i := g.rng.IntN(len(g.conns))
	old := g.conns[i]
	g.events(old)
	k := g.r.reattach(old, old.name+"'")
	old.closed = true
	g.conns[i] = k
	if i == 2 && g.rng.IntN(2) == 0 {
		g.r.auth(k, "digest", "alice:secret") // as clients do; without it, the connection is anonymous
	}
	if g.rng.IntN(2) == 0 {
		g.setWatches(k)
	}
}

// setWatches restores random one-shot watches on c as of a zxid seen
// before (or 0): a watched node changed since fires at once.
func (g *randomScenario) setWatches(c *conn) {
	var rel int64
	if len(g.zxids) > 0 && g.rng.IntN(4) != 0 {
		rel = g.zxids[g.rng.IntN(len(g.zxids))]
	}
	paths := func() []string {
		ps := make([]string, g.rng.IntN(3))
		for i := range ps {
			ps[i] = g.r.p(g.path())
		}
		return ps
	}
	g.fresh(c)
	g.r.do(c, wire.OpSetWatches, &wire.SetWatches{RelativeZxid: rel,
		DataWatches: paths(), ExistWatches: paths(), ChildWatches: paths()})
	g.events(c)
}

// closeSession closes one of the sessions (its ephemerals go, in an order
// ZooKeeper leaves open, so every other connection's notifications are
// recorded unordered) and opens a fresh one in its place.
func (g *randomScenario) closeSession() {
	i := g.rng.IntN(len(g.conns))
	g.r.do(g.conns[i], wire.OpCloseSession, nil)
	g.conns[i].closed = true
	for j, c := range g.conns {
		if j != i {
			g.eventsUnordered(c)
		}
	}
	g.eventsUnordered(g.watcher)
	g.closed++
	g.conns[i] = g.r.conn(fmt.Sprintf("%s.%d", g.names[i], g.closed))
	if i == 2 {
		g.r.auth(g.conns[i], "digest", "alice:secret")
	}
}
