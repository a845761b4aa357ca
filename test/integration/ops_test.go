package integration_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// Section 1: every operation through go-zookeeper, with ZooKeeper's Stat
// rules (reference §2.1) and error codes (§2.2).

func TestCreateModes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	ttl := time.Hour
	cases := []struct {
		name      string
		create    func(parent string) (string, error)
		wantPath  string // relative to the case's parent
		wantOwner int64
	}{
		{"persistent", func(p string) (string, error) { return c.Create(p+"/n", []byte("d"), zk.FlagPersistent, openACL) },
			"/n", 0},
		{"ephemeral", func(p string) (string, error) { return c.Create(p+"/n", []byte("d"), zk.FlagEphemeral, openACL) },
			"/n", c.SessionID()},
		{"sequential", func(p string) (string, error) { return c.Create(p+"/n-", []byte("d"), zk.FlagSequence, openACL) },
			"/n-0000000000", 0},
		{"ephemeral sequential", func(p string) (string, error) {
			return c.Create(p+"/n-", []byte("d"), zk.FlagEphemeralSequential, openACL)
		}, "/n-0000000000", c.SessionID()},
		{"container", func(p string) (string, error) {
			return c.CreateContainer(p+"/n", []byte("d"), zk.FlagContainer, openACL)
		},
			"/n", 0}, // ZooKeeper shows containers' and TTL nodes' owner as 0
		{"ttl", func(p string) (string, error) { return c.CreateTTL(p+"/n", []byte("d"), zk.FlagTTL, openACL, ttl) },
			"/n", 0},
		{"ttl sequential", func(p string) (string, error) {
			return c.CreateTTL(p+"/n-", []byte("d"), zk.FlagPersistentSequentialWithTTL, openACL, ttl)
		}, "/n-0000000000", 0},
	}
	for i, tc := range cases {
		parent := "/mode" + string(rune('a'+i))
		mustCreate(t, c, parent, nil)
		got, err := tc.create(parent)
		require.NoError(t, err, tc.name)
		require.Equal(t, parent+tc.wantPath, got, tc.name)
		data, st, err := c.Get(got)
		require.NoError(t, err, tc.name)
		require.Equal(t, []byte("d"), data, tc.name)
		require.Equal(t, tc.wantOwner, st.EphemeralOwner, tc.name)
	}
}

func TestEphemeralsDeletedWithSession(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	owner := connect(t, srv)
	mustCreate(t, owner, "/keep", nil)
	for _, p := range []string{"/e1", "/keep/e2"} {
		_, err := owner.Create(p, nil, zk.FlagEphemeral, openACL)
		require.NoError(t, err)
	}
	owner.Close() // closeSession
	eventually(t, waitTimeout, func() bool { return len(srv.Sessions()) == 0 })
	tree := srv.Tree()
	require.Len(t, tree, 1)
	require.Equal(t, "/keep", tree[0].Path)
}

func TestContainerReapedOnceEmptied(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithReapInterval(time.Hour))
	c := connect(t, srv)
	_, err := c.CreateContainer("/c", nil, zk.FlagContainer, openACL)
	require.NoError(t, err)
	require.Zero(t, srv.Reap(), "a container that never had a child stays")
	mustCreate(t, c, "/c/x", nil)
	require.Zero(t, srv.Reap(), "a container with a child stays")
	require.NoError(t, c.Delete("/c/x", -1))
	require.Equal(t, 1, srv.Reap())
	ok, _, err := c.Exists("/c")
	require.NoError(t, err)
	require.False(t, ok)
}

// A sweep deletes at most MaxReapPerInterval nodes (zoo.cfg's
// znode.container.maxPerMinute, per sweep); the rest wait for the next.
func TestReapBoundedPerSweep(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithReapInterval(time.Hour), zktest.WithMaxReapPerInterval(2))
	c := connect(t, srv)
	for i := range 5 {
		p := fmt.Sprintf("/c%d", i)
		_, err := c.CreateContainer(p, nil, zk.FlagContainer, openACL)
		require.NoError(t, err)
		mustCreate(t, c, p+"/x", nil)
		require.NoError(t, c.Delete(p+"/x", -1))
	}
	require.Equal(t, []int{2, 2, 1, 0}, []int{srv.Reap(), srv.Reap(), srv.Reap(), srv.Reap()})
}

func TestTTLNodeReapedAfterTTL(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithReapInterval(time.Hour))
	c := connect(t, srv)
	_, err := c.CreateTTL("/long", nil, zk.FlagTTL, openACL, time.Hour)
	require.NoError(t, err)
	_, err = c.CreateTTL("/short", nil, zk.FlagTTL, openACL, time.Millisecond)
	require.NoError(t, err)
	eventually(t, waitTimeout, func() bool {
		srv.Reap()
		ok, _, err := c.Exists("/short")
		return err == nil && !ok
	})
	ok, _, err := c.Exists("/long")
	require.NoError(t, err)
	require.True(t, ok)
}

func TestDelete(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/d", nil)
	_, err := c.Set("/d", []byte("v"), 0)
	require.NoError(t, err)
	require.ErrorIs(t, c.Delete("/d", 0), zk.ErrBadVersion)
	require.NoError(t, c.Delete("/d", 1))
	mustCreate(t, c, "/d", nil)
	require.NoError(t, c.Delete("/d", -1))
	ok, _, err := c.Exists("/d")
	require.NoError(t, err)
	require.False(t, ok)
}

func TestExistsGetSet(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	ok, _, err := c.Exists("/x")
	require.NoError(t, err)
	require.False(t, ok)
	mustCreate(t, c, "/x", []byte("one"))
	ok, st, err := c.Exists("/x")
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 3, st.DataLength)

	data, st2, err := c.Get("/x")
	require.NoError(t, err)
	require.Equal(t, []byte("one"), data)
	require.Equal(t, *st, *st2)

	st3, err := c.Set("/x", []byte("three"), st.Version)
	require.NoError(t, err)
	require.EqualValues(t, 1, st3.Version)
	data, st4, err := c.Get("/x")
	require.NoError(t, err)
	require.Equal(t, []byte("three"), data)
	require.Equal(t, *st3, *st4)

	// Empty and null data both read back as empty.
	_, err = c.Set("/x", nil, -1)
	require.NoError(t, err)
	data, st, err = c.Get("/x")
	require.NoError(t, err)
	require.Empty(t, data)
	require.Zero(t, st.DataLength)
}

func TestGetACLSetACL(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	readWrite := zk.WorldACL(zk.PermRead | zk.PermWrite)
	_, err := c.Create("/a", nil, 0, readWrite)
	require.NoError(t, err)
	acl, st, err := c.GetACL("/a")
	require.NoError(t, err)
	require.Equal(t, readWrite, acl)
	require.Zero(t, st.Aversion)

	digest := zk.DigestACL(zk.PermAll, "alice", "secret")
	_, err = c.SetACL("/a", digest, 0)
	require.ErrorIs(t, err, zk.ErrNoAuth, "setACL needs ADMIN")
	_, err = c.Create("/a2", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	st, err = c.SetACL("/a2", digest, 0)
	require.NoError(t, err)
	require.EqualValues(t, 1, st.Aversion)
	_, _, err = c.GetACL("/a2")
	require.ErrorIs(t, err, zk.ErrNoAuth, "no READ or ADMIN for an unauthenticated caller")
	require.NoError(t, c.AddAuth("digest", []byte("alice:secret")))
	acl, st2, err := c.GetACL("/a2")
	require.NoError(t, err)
	require.Equal(t, digest, acl)
	require.Equal(t, *st, *st2)

	_, err = c.SetACL("/a2", openACL, 0)
	require.ErrorIs(t, err, zk.ErrBadVersion)
	_, err = c.SetACL("/a2", openACL, -1)
	require.NoError(t, err)

	// The initial /zookeeper/config node is world-readable only.
	acl, _, err = c.GetACL("/zookeeper/config")
	require.NoError(t, err)
	require.Equal(t, zk.WorldACL(zk.PermRead), acl)
}

func TestChildrenWithStat(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/p", nil)
	for _, n := range []string{"b", "a", "c"} {
		mustCreate(t, c, "/p/"+n, nil)
	}
	kids, st, err := c.Children("/p") // getChildren2
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "b", "c"}, kids)
	require.EqualValues(t, 3, st.NumChildren)
	require.EqualValues(t, 3, st.Cversion)
	_, cst, err := c.Exists("/p/c")
	require.NoError(t, err)
	require.Equal(t, cst.Czxid, st.Pzxid, "pzxid is the last child change")

	kids, _, err = c.Children("/p/a")
	require.NoError(t, err)
	require.Empty(t, kids)
	_, _, err = c.Children("/missing")
	require.ErrorIs(t, err, zk.ErrNoNode)
}

func TestSync(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/s", nil)
	p, err := c.Sync("/s")
	require.NoError(t, err)
	require.Equal(t, "/s", p)
}

func TestMultiSuccess(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	res, err := c.Multi(
		&zk.CreateRequest{Path: "/m", Data: []byte("x"), Acl: openACL},
		&zk.CreateRequest{Path: "/m/a", Acl: openACL},
		&zk.CreateRequest{Path: "/m/seq-", Acl: openACL, Flags: zk.FlagSequence},
		&zk.SetDataRequest{Path: "/m", Data: []byte("y"), Version: 0},
		&zk.CheckVersionRequest{Path: "/m", Version: 1},
		&zk.DeleteRequest{Path: "/m/a", Version: 0},
	)
	require.NoError(t, err)
	require.Len(t, res, 6)
	for i, r := range res {
		require.NoError(t, r.Error, "op %d", i)
	}
	require.Equal(t, "/m", res[0].String)
	require.Equal(t, "/m/a", res[1].String)
	require.Equal(t, "/m/seq-0000000001", res[2].String)
	require.EqualValues(t, 1, res[3].Stat.Version)

	data, st, err := c.Get("/m")
	require.NoError(t, err)
	require.Equal(t, []byte("y"), data)
	_, seq, err := c.Exists("/m/seq-0000000001")
	require.NoError(t, err)
	require.Equal(t, st.Czxid, seq.Czxid, "a multi is one transaction with one zxid")
	require.Equal(t, st.Czxid, st.Mzxid)
	ok, _, err := c.Exists("/m/a")
	require.NoError(t, err)
	require.False(t, ok)
}

func TestMultiFailureIsAtomic(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/f", []byte("orig"))
	_, before, err := c.Exists("/f")
	require.NoError(t, err)

	res, err := c.Multi(
		&zk.CreateRequest{Path: "/f/a", Acl: openACL},
		&zk.SetDataRequest{Path: "/f", Data: []byte("changed"), Version: -1},
		&zk.CheckVersionRequest{Path: "/f", Version: 7}, // fails: version is 1 by now
		&zk.CreateRequest{Path: "/f/b", Acl: openACL},
	)
	require.ErrorIs(t, err, zk.ErrBadVersion, "go-zookeeper reports the first failing op")
	require.Len(t, res, 4)
	require.NoError(t, res[0].Error)
	require.NoError(t, res[1].Error)
	require.ErrorIs(t, res[2].Error, zk.ErrBadVersion)
	require.Error(t, res[3].Error)

	data, after, err := c.Get("/f")
	require.NoError(t, err)
	require.Equal(t, []byte("orig"), data, "nothing of a failed multi is applied")
	require.Equal(t, *before, *after)
	kids, _, err := c.Children("/f")
	require.NoError(t, err)
	require.Empty(t, kids)
}

func TestMultiFailurePerOpCodes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	create := func(p string) wire.MultiOp {
		return wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: p, ACL: wire.OpenACLUnsafe}}
	}
	req := &wire.MultiRequest{Ops: []wire.MultiOp{
		create("/a"),
		create("/b"),
		{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/missing", Version: -1}},
		create("/c"),
		{Op: wire.OpDelete, Req: &wire.DeleteRequest{Path: "/a", Version: -1}},
	}}
	var resp wire.MultiResponse
	require.Equal(t, wire.OK, c.call(wire.OpMulti, req, &resp), "a failed multi's header carries no error")
	require.Len(t, resp.Results, 5)
	want := []wire.Code{wire.OK, wire.OK, wire.ErrNoNode, wire.ErrRuntimeInconsistency, wire.ErrRuntimeInconsistency}
	for i, r := range resp.Results {
		require.Equal(t, wire.OpError, r.Op, "op %d is an error result", i)
		require.Equal(t, want[i], r.Err, "op %d", i)
	}
	require.Empty(t, srv.Tree(), "nothing applied")

	// An empty multi succeeds with no results.
	resp = wire.MultiResponse{}
	require.Equal(t, wire.OK, c.call(wire.OpMulti, &wire.MultiRequest{}, &resp))
	require.Empty(t, resp.Results)
}

// TestStatFields checks every Stat field against ZooKeeper's rules
// (reference §2.1).
func TestStatFields(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	lastZxid := func() int64 { return srv.Server().FSM().LastZxid() }
	stat := func(p string) zk.Stat {
		t.Helper()
		_, st, err := c.Exists(p)
		require.NoError(t, err)
		return *st
	}

	root0 := stat("/")
	mustCreate(t, c, "/s", []byte("abc"))
	z := lastZxid()
	s := stat("/s")
	require.Equal(t, z, s.Czxid)
	require.Equal(t, z, s.Mzxid)
	require.Equal(t, z, s.Pzxid)
	require.Positive(t, s.Ctime)
	require.Equal(t, s.Ctime, s.Mtime)
	require.Zero(t, s.Version)
	require.Zero(t, s.Cversion)
	require.Zero(t, s.Aversion)
	require.Zero(t, s.EphemeralOwner)
	require.EqualValues(t, 3, s.DataLength)
	require.Zero(t, s.NumChildren)
	root := stat("/")
	require.Equal(t, root0.Cversion+1, root.Cversion, "create bumps the parent's cversion")
	require.Equal(t, z, root.Pzxid, "create sets the parent's pzxid")
	require.Equal(t, root0.Mzxid, root.Mzxid, "create leaves the parent's mzxid")
	require.Equal(t, root0.Mtime, root.Mtime)
	require.Equal(t, root0.NumChildren+1, root.NumChildren)

	_, err := c.Set("/s", []byte("abcdef"), -1)
	require.NoError(t, err)
	z = lastZxid()
	s2 := stat("/s")
	require.EqualValues(t, 1, s2.Version)
	require.Equal(t, z, s2.Mzxid)
	require.GreaterOrEqual(t, s2.Mtime, s.Mtime)
	require.Equal(t, s.Czxid, s2.Czxid)
	require.Equal(t, s.Ctime, s2.Ctime)
	require.Equal(t, s.Pzxid, s2.Pzxid, "setData leaves pzxid")
	require.EqualValues(t, 6, s2.DataLength)

	_, err = c.SetACL("/s", zk.WorldACL(zk.PermAll), -1)
	require.NoError(t, err)
	s3 := stat("/s")
	require.EqualValues(t, 1, s3.Aversion)
	require.Equal(t, s2.Mzxid, s3.Mzxid, "setACL leaves mzxid")
	require.Equal(t, s2.Mtime, s3.Mtime, "setACL leaves mtime")
	require.Equal(t, s2.Version, s3.Version)

	mustCreate(t, c, "/s/c", nil)
	zc := lastZxid()
	s4 := stat("/s")
	require.EqualValues(t, 1, s4.Cversion)
	require.EqualValues(t, 1, s4.NumChildren)
	require.Equal(t, zc, s4.Pzxid)
	require.Equal(t, s3.Mzxid, s4.Mzxid)

	require.NoError(t, c.Delete("/s/c", -1))
	zd := lastZxid()
	s5 := stat("/s")
	require.Equal(t, zd, s5.Pzxid, "delete sets the parent's pzxid")
	require.EqualValues(t, 2, s5.Cversion, "ZooKeeper 3.8 counts a child delete in cversion")
	require.Zero(t, s5.NumChildren)
	require.Equal(t, s3.Mzxid, s5.Mzxid)

	_, err = c.Create("/eph", nil, zk.FlagEphemeral, openACL)
	require.NoError(t, err)
	require.Equal(t, c.SessionID(), stat("/eph").EphemeralOwner)
}

func TestSequentialSuffixFromParentCversion(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/q", nil)
	seq := func(prefix string) string {
		t.Helper()
		p, err := c.Create(prefix, nil, zk.FlagSequence, openACL)
		require.NoError(t, err)
		return p
	}
	require.Equal(t, "/q/lock-0000000000", seq("/q/lock-"))
	require.Equal(t, "/q/lock-0000000001", seq("/q/lock-"))
	mustCreate(t, c, "/q/plain", nil) // cversion 2 -> 3
	require.NoError(t, c.Delete("/q/plain", -1))
	require.NoError(t, c.Delete("/q/lock-0000000000", -1))
	// The suffix counts creates only (as ZooKeeper 3.8), so suffixes never
	// repeat; cversion counts the deletes too.
	require.Equal(t, "/q/other-0000000003", seq("/q/other-"))
	// A sequential prefix may end in "/".
	require.Equal(t, "/q/0000000004", seq("/q/"))
	_, st, err := c.Exists("/q")
	require.NoError(t, err)
	require.EqualValues(t, 7, st.Cversion)
}

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/e", []byte("v"))
	mustCreate(t, c, "/e/child", nil)
	_, err := c.Create("/eph", nil, zk.FlagEphemeral, openACL)
	require.NoError(t, err)

	cases := []struct {
		name string
		op   func() error
		want error
	}{
		{"get missing", func() error { _, _, err := c.Get("/nope"); return err }, zk.ErrNoNode},
		{"set missing", func() error { _, err := c.Set("/nope", nil, -1); return err }, zk.ErrNoNode},
		{"delete missing", func() error { return c.Delete("/nope", -1) }, zk.ErrNoNode},
		{"getACL missing", func() error { _, _, err := c.GetACL("/nope"); return err }, zk.ErrNoNode},
		{"setACL missing", func() error { _, err := c.SetACL("/nope", openACL, -1); return err }, zk.ErrNoNode},
		{"children missing", func() error { _, _, err := c.Children("/nope"); return err }, zk.ErrNoNode},
		{"create without parent", func() error { _, err := c.Create("/nope/x", nil, 0, openACL); return err }, zk.ErrNoNode},
		{"create existing", func() error { _, err := c.Create("/e", nil, 0, openACL); return err }, zk.ErrNodeExists},
		{"set bad version", func() error { _, err := c.Set("/e", nil, 5); return err }, zk.ErrBadVersion},
		{"delete bad version", func() error { return c.Delete("/e/child", 5) }, zk.ErrBadVersion},
		{"setACL bad version", func() error { _, err := c.SetACL("/e", openACL, 5); return err }, zk.ErrBadVersion},
		{"delete non-empty", func() error { return c.Delete("/e", -1) }, zk.ErrNotEmpty},
		{"child of ephemeral", func() error { _, err := c.Create("/eph/x", nil, 0, openACL); return err },
			zk.ErrNoChildrenForEphemerals},
		{"delete root", func() error { return c.Delete("/", -1) }, zk.ErrBadArguments},
		{"delete /zookeeper", func() error { return c.Delete("/zookeeper", -1) }, zk.ErrBadArguments},
		{"delete /zookeeper/config", func() error { return c.Delete("/zookeeper/config", -1) }, zk.ErrBadArguments},
		{"empty ACL", func() error { _, err := c.Create("/acl1", nil, 0, []zk.ACL{}); return err }, zk.ErrInvalidACL},
		{"auth ACL without auth", func() error { _, err := c.Create("/acl2", nil, 0, zk.AuthACL(zk.PermAll)); return err },
			zk.ErrInvalidACL},
		{"bad world id", func() error {
			_, err := c.Create("/acl3", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "world", ID: "someone"}})
			return err
		}, zk.ErrInvalidACL},
		{"bad digest id", func() error {
			_, err := c.Create("/acl4", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "digest", ID: "nocolon"}})
			return err
		}, zk.ErrInvalidACL},
		{"bad ip id", func() error {
			_, err := c.Create("/acl5", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "not-an-ip"}})
			return err
		}, zk.ErrInvalidACL},
		{"unknown scheme", func() error {
			_, err := c.Create("/acl6", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "nosuch", ID: "x"}})
			return err
		}, zk.ErrInvalidACL},
		{"setACL empty", func() error { _, err := c.SetACL("/e", []zk.ACL{}, -1); return err }, zk.ErrInvalidACL},
	}
	for _, tc := range cases {
		require.ErrorIs(t, tc.op(), tc.want, tc.name)
	}
	// None of the failed writes changed anything.
	paths := []string{}
	for _, n := range srv.Tree() {
		paths = append(paths, n.Path)
	}
	require.Equal(t, []string{"/e", "/e/child", "/eph"}, paths)
}
