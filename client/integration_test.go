package client

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Integration tests: each body runs against every server of testServers
// (a real Apache ZooKeeper via $ZK_ORACLE, Paddock via $PADDOCK_ADDR).

func TestServerCRUD(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)
		p := root + "/a"

		got, stat, err := c.Create(ctx, p, []byte("one"), ModePersistent, nil)
		require.NoError(t, err)
		assert.Equal(t, p, got)
		assert.Equal(t, int32(0), stat.Version)
		assert.Equal(t, int32(3), stat.DataLength)
		assert.Equal(t, stat.Czxid, stat.Mzxid)

		_, _, err = c.Create(ctx, p, nil, ModePersistent, nil)
		assert.ErrorIs(t, err, ErrNodeExists)
		_, _, err = c.Create(ctx, root+"/missing/child", nil, ModePersistent, nil)
		assert.ErrorIs(t, err, ErrNoNode)

		data, stat, err := c.Get(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, "one", string(data))

		stat2, err := c.Set(ctx, p, []byte("two"), stat.Version)
		require.NoError(t, err)
		assert.Equal(t, int32(1), stat2.Version)
		_, err = c.Set(ctx, p, []byte("three"), stat.Version)
		assert.ErrorIs(t, err, ErrBadVersion)

		st, ok, err := c.Exists(ctx, p)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, int32(1), st.Version)
		st, ok, err = c.Exists(ctx, root+"/nope")
		require.NoError(t, err)
		assert.False(t, ok)
		assert.Nil(t, st)
		_, _, err = c.Get(ctx, root+"/nope")
		assert.ErrorIs(t, err, ErrNoNode)

		_, _, err = c.Create(ctx, p+"/kid", nil, ModePersistent, nil)
		require.NoError(t, err)
		children, pstat, err := c.Children(ctx, root)
		require.NoError(t, err)
		assert.Equal(t, []string{"a"}, children)
		assert.Equal(t, int32(1), pstat.NumChildren)
		n, err := c.GetAllChildrenNumber(ctx, root)
		require.NoError(t, err)
		assert.Equal(t, int32(2), n)

		assert.ErrorIs(t, c.Delete(ctx, p, -1), ErrNotEmpty)
		require.NoError(t, c.Delete(ctx, p+"/kid", -1))
		assert.ErrorIs(t, c.Delete(ctx, p, 0), ErrBadVersion)
		require.NoError(t, c.Delete(ctx, p, 1))
		assert.ErrorIs(t, c.Delete(ctx, p, -1), ErrNoNode)

		require.NoError(t, c.Sync(ctx, root))
		_, _, err = c.Get(ctx, "relative")
		assert.ErrorIs(t, err, ErrBadArguments)
	})
}

func TestServerNodeTypes(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)

		s1, _, err := c.Create(ctx, root+"/seq-", nil, ModePersistentSequential, nil)
		require.NoError(t, err)
		s2, _, err := c.Create(ctx, root+"/seq-", nil, ModePersistentSequential, nil)
		require.NoError(t, err)
		assert.Regexp(t, `/seq-\d{10}$`, s1)
		assert.Less(t, s1, s2)

		e, stat, err := c.Create(ctx, root+"/eph", nil, ModeEphemeral, nil)
		require.NoError(t, err)
		assert.Equal(t, c.SessionID(), stat.EphemeralOwner)
		es, _, err := c.Create(ctx, root+"/eseq-", nil, ModeEphemeralSequential, nil)
		require.NoError(t, err)
		_, _, err = c.Create(ctx, e+"/child", nil, ModePersistent, nil)
		assert.ErrorIs(t, err, ErrNoChildrenForEphemerals)
		eph, err := c.GetEphemerals(ctx, root)
		require.NoError(t, err)
		sort.Strings(eph)
		assert.Equal(t, []string{e, es}, eph)

		// ZooKeeper stores a special ephemeralOwner for containers and TTL
		// nodes but shows clients 0 (DataNode.getClientEphemeralOwner).
		_, stat, err = c.Create(ctx, root+"/container", nil, ModeContainer, nil)
		require.NoError(t, err)
		assert.Equal(t, int64(0), stat.EphemeralOwner)
		_, _, err = c.Create(ctx, root+"/container/kid", nil, ModePersistent, nil)
		require.NoError(t, err)

		_, stat, err = c.Create(ctx, root+"/ttl", nil, ModePersistentWithTTL, nil, WithTTL(time.Hour))
		require.NoError(t, err)
		assert.Equal(t, int64(0), stat.EphemeralOwner)
		stat, _, err = c.Exists(ctx, root+"/ttl")
		require.NoError(t, err)
		assert.Equal(t, int64(0), stat.EphemeralOwner)
		ts, _, err := c.Create(ctx, root+"/ttlseq-", nil, ModePersistentSequentialWithTTL, nil, WithTTL(time.Minute))
		require.NoError(t, err)
		assert.Regexp(t, `/ttlseq-\d{10}$`, ts)
		_, _, err = c.Create(ctx, root+"/ttl2", nil, ModePersistentWithTTL, nil)
		assert.ErrorIs(t, err, ErrBadArguments, "TTL mode without WithTTL")
		_, _, err = c.Create(ctx, root+"/ttl3", nil, ModePersistent, nil, WithTTL(time.Hour))
		assert.ErrorIs(t, err, ErrBadArguments, "WithTTL on a non-TTL mode")

		// Ephemerals go away with the session.
		c2 := connectTest(t, addrs)
		_, _, err = c2.Create(ctx, root+"/eph2", nil, ModeEphemeral, nil)
		require.NoError(t, err)
		require.NoError(t, c2.Close())
		_, ok, err := c.Exists(ctx, root+"/eph2")
		require.NoError(t, err)
		assert.False(t, ok, "closeSession deletes the ephemeral")
	})
}

func TestServerMulti(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)

		res, err := c.Multi(ctx,
			CreateOp(root+"/m", []byte("1"), ModePersistent, nil),
			CreateOp(root+"/m/s-", nil, ModePersistentSequential, nil),
			SetDataOp(root+"/m", []byte("2"), 0),
			CheckOp(root+"/m", 1),
		)
		require.NoError(t, err)
		require.Len(t, res, 4)
		assert.Equal(t, root+"/m", res[0].Path)
		assert.Regexp(t, `/m/s-\d{10}$`, res[1].Path)
		assert.Equal(t, int32(1), res[2].Stat.Version)
		for _, r := range res {
			assert.NoError(t, r.Err)
		}

		res, err = c.Multi(ctx,
			SetDataOp(root+"/m", []byte("3"), -1),
			DeleteOp(root+"/nope", -1),
			CheckOp(root+"/m", -1),
		)
		require.ErrorIs(t, err, ErrNoNode)
		var me *MultiError
		require.ErrorAs(t, err, &me)
		assert.Equal(t, 1, me.Index)
		require.Len(t, res, 3)
		assert.NoError(t, res[0].Err)
		assert.ErrorIs(t, res[1].Err, ErrNoNode)
		assert.ErrorIs(t, res[2].Err, ErrRuntimeInconsistency)
		data, _, err := c.Get(ctx, root+"/m")
		require.NoError(t, err)
		assert.Equal(t, "2", string(data), "a failed multi applies nothing")

		reads, err := c.MultiRead(ctx, GetDataOp(root+"/m"), GetChildrenOp(root+"/m"), GetDataOp(root+"/nope"))
		require.NoError(t, err)
		require.Len(t, reads, 3)
		assert.Equal(t, "2", string(reads[0].Data))
		assert.Equal(t, int32(1), reads[0].Stat.Version)
		assert.Len(t, reads[1].Children, 1)
		assert.ErrorIs(t, reads[2].Err, ErrNoNode)
	})
}

func TestServerACLAndAuth(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)
		p := root + "/secret"

		acl := DigestACL(PermAll, "alice", "pw")
		_, _, err := c.Create(ctx, p, []byte("s"), ModePersistent, acl)
		require.NoError(t, err)
		_, _, err = c.Get(ctx, p)
		assert.ErrorIs(t, err, ErrNoAuth)

		require.NoError(t, c.AddAuth(ctx, "digest", []byte("alice:pw")))
		data, _, err := c.Get(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, "s", string(data))
		got, _, err := c.GetACL(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, acl, got)
		who, err := c.WhoAmI(ctx)
		require.NoError(t, err)
		assert.Contains(t, who, ClientInfo{AuthScheme: "digest", User: "alice"})

		stat, err := c.SetACL(ctx, p, WorldACL(PermRead|PermAdmin), 0)
		require.NoError(t, err)
		assert.Equal(t, int32(1), stat.Aversion)
		_, err = c.SetACL(ctx, p, WorldACL(PermAll), 0)
		assert.ErrorIs(t, err, ErrBadVersion)
		_, err = c.Set(ctx, p, nil, -1)
		assert.ErrorIs(t, err, ErrNoAuth)

		c2 := connectTest(t, addrs, WithAuth("digest", []byte("alice:pw")))
		_, err = c2.SetACL(ctx, p, acl, -1)
		require.NoError(t, err)
		_, _, err = c2.Get(ctx, p)
		require.NoError(t, err, "WithAuth credential")

		drainStates(c)
		err = c.AddAuth(ctx, "no-such-scheme", []byte("x"))
		require.ErrorIs(t, err, ErrAuthFailed)
		waitState(t, c, StateConnected)
		assert.Equal(t, []State{StateAuthFailed, StateDisconnected, StateConnected}, drainStates(c))
		_, _, err = c.Get(ctx, p)
		require.NoError(t, err, "the accepted credential was re-sent")
	})
}

func TestServerChroot(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		base := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, base)
		c := connectTest(t, addrs, WithChroot(root))

		p, _, err := c.Create(ctx, "/x", []byte("x"), ModePersistent, nil)
		require.NoError(t, err)
		assert.Equal(t, "/x", p)
		data, _, err := base.Get(ctx, root+"/x")
		require.NoError(t, err)
		assert.Equal(t, "x", string(data))

		_, _, w, err := c.GetW(ctx, "/x")
		require.NoError(t, err)
		rw, err := c.AddWatch(ctx, "/", true)
		require.NoError(t, err)
		_, err = base.Set(ctx, root+"/x", []byte("y"), -1)
		require.NoError(t, err)
		assert.Equal(t, "/x", recv(t, w).Path)
		assert.Equal(t, Event{Type: EventNodeDataChanged, State: StateConnected, Path: "/x"}, recv(t, rw.Events()))

		e, _, err := c.Create(ctx, "/e-", nil, ModeEphemeralSequential, nil)
		require.NoError(t, err)
		eph, err := c.GetEphemerals(ctx, "/")
		require.NoError(t, err)
		assert.Equal(t, []string{e}, eph)
		res, err := c.Multi(ctx, CreateOp("/m", nil, ModePersistent, nil))
		require.NoError(t, err)
		assert.Equal(t, "/m", res[0].Path)
		children, _, err := c.Children(ctx, "/")
		require.NoError(t, err)
		assert.ElementsMatch(t, []string{"x", "m", strings.TrimPrefix(e, "/")}, children)

		// The chroot node itself is "/" in events. (The child watch comes
		// last: ZooKeeper 3.8 files a recursive watch under the child
		// watches too, one mode per path, and a later addWatch would turn
		// the one-shot child watch into a recursive one.)
		rw2, err := c.AddWatch(ctx, "/", true)
		require.NoError(t, err)
		_, _, cw, err := c.ChildrenW(ctx, "/")
		require.NoError(t, err)
		_, err = base.Set(ctx, root, []byte("r"), -1)
		require.NoError(t, err)
		assert.Equal(t, Event{Type: EventNodeDataChanged, State: StateConnected, Path: "/"}, recv(t, rw2.Events()))
		_, _, err = base.Create(ctx, root+"/y", nil, ModePersistent, nil)
		require.NoError(t, err)
		assert.Equal(t, Event{Type: EventNodeChildrenChanged, State: StateConnected, Path: "/"}, recv(t, cw))
		assert.Equal(t, Event{Type: EventNodeCreated, State: StateConnected, Path: "/y"}, recv(t, rw2.Events()))
	})
}

func TestServerCloseAndPipelining(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		other := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, other)

		const n = 500
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			wg.Go(func() {
				p := fmt.Sprintf("%s/n%03d", root, i)
				if _, _, err := c.Create(ctx, p, []byte(p), ModeEphemeral, nil); err != nil {
					errs <- err
					return
				}
				data, _, err := c.Get(ctx, p)
				if err == nil && string(data) != p {
					err = fmt.Errorf("%s: got %q", p, data)
				}
				errs <- err
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		_, _, w, err := c.GetW(ctx, root)
		require.NoError(t, err)

		require.NoError(t, c.Close())
		require.NoError(t, c.Close())
		assert.ErrorIs(t, recv(t, w).Err, ErrClosed)
		_, _, err = c.Get(ctx, root)
		assert.ErrorIs(t, err, ErrClosed)
		children, _, err := other.Children(ctx, root)
		require.NoError(t, err)
		assert.Empty(t, children, "closeSession removed the ephemerals")
	})
}

func TestServerProtectedCreate(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		c := connectTest(t, addrs)
		ctx := testCtx(t)
		root := testRoot(t, c)
		p, err := c.CreateProtectedEphemeralSequential(ctx, root+"/lock-", []byte("x"), nil)
		require.NoError(t, err)
		assert.Regexp(t, `/_c_[0-9a-f]{32}-lock-\d{10}$`, p)
		_, stat, err := c.Get(ctx, p)
		require.NoError(t, err)
		assert.Equal(t, c.SessionID(), stat.EphemeralOwner)
	})
}
