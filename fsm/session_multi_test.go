package fsm

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func TestMultiAtomic(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/a")
	ok := h.apply(&Command{Type: CmdOps, Multi: true, Ops: []Op{
		createOp("/a/b"),
		createOp("/a/b/c"),
		{Type: wire.OpSetData, Path: "/a", Data: []byte("v"), Version: 0},
		{Type: wire.OpCheck, Path: "/a", Version: 1},
		{Type: wire.OpDelete, Path: "/a/b/c", Version: 0},
	}})
	require.Equal(t, wire.OK, ok.Err)
	for _, o := range ok.Ops {
		require.Equal(t, wire.OK, o.Err)
	}
	require.Equal(t, "/a/b/c", ok.Ops[1].Path)
	require.Equal(t, int64(h.idx), ok.Ops[1].Stat.Czxid, "one zxid for the whole multi")
	require.Len(t, ok.Events, 7)

	before := h.f.Digest()
	bad := h.apply(&Command{Type: CmdOps, Multi: true, Ops: []Op{
		createOp("/a/x"),
		{Type: wire.OpSetData, Path: "/a", Data: []byte("w"), Version: -1},
		{Type: wire.OpDelete, Path: "/a/b", Version: 5}, // fails: bad version
		createOp("/a/y"),
	}})
	require.Equal(t, wire.OK, bad.Err, "a failed multi reports per op")
	require.Empty(t, bad.Events)
	want := []OpResult{{Type: wire.OpError, Err: wire.OK}, {Type: wire.OpError, Err: wire.OK},
		{Type: wire.OpError, Err: wire.ErrBadVersion}, {Type: wire.OpError, Err: wire.ErrRuntimeInconsistency}}
	require.Equal(t, want, bad.Ops)
	h.f.lastZxid-- // only lastZxid moved
	require.Equal(t, before, h.f.Digest())
	h.f.lastZxid++

	// An op that depends on an earlier op of the same multi, then fails late:
	// everything including the sequential counter is rolled back.
	seqBefore := h.f.node("/a").cversion
	bad = h.apply(&Command{Type: CmdOps, Multi: true, Ops: []Op{
		{Type: wire.OpCreate, Path: "/a/s", ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentSequential},
		{Type: wire.OpDelete, Path: "/a/b", Version: -1},
		createOp("/a/b/late"),
	}})
	require.Equal(t, wire.ErrNoNode, bad.Ops[2].Err)
	require.Equal(t, seqBefore, h.f.node("/a").cversion)
	_, ok2 := h.f.Exists("/a/b")
	require.True(t, ok2)

	empty := h.apply(&Command{Type: CmdOps, Multi: true})
	require.Equal(t, wire.OK, empty.Err)
	require.Empty(t, empty.Ops)
}

func TestMultiSessionExpired(t *testing.T) {
	h := newHarness(t)
	r := h.apply(&Command{Type: CmdOps, Multi: true, Session: 99, Ops: []Op{createOp("/x")}})
	require.Equal(t, wire.ErrSessionExpired, r.Err)
}

func TestSessionsAndEphemerals(t *testing.T) {
	h := newHarness(t)
	s1, s2 := h.session(), h.session()
	require.NotEqual(t, s1, s2)
	require.Greater(t, s1, int64(0))
	require.Len(t, h.f.Password(s1), PasswordLen)
	require.NotEqual(t, h.f.Password(s1), h.f.Password(s2))
	require.True(t, h.f.CheckPassword(s1, h.f.Password(s1)))
	require.False(t, h.f.CheckPassword(s1, make([]byte, PasswordLen)))

	h.mustCreate("/app")
	for _, p := range []string{"/app/e1", "/app/e2", "/e3"} {
		res := h.do(s1, Op{Type: wire.OpCreate2, Path: p, ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeral})
		require.Equal(t, wire.OK, res.Err)
		require.Equal(t, s1, res.Stat.EphemeralOwner)
	}
	seq := h.do(s2, Op{Type: wire.OpCreate2, Path: "/app/s-", ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeralSequential})
	require.Equal(t, "/app/s-0000000002", seq.Path)

	require.Equal(t, []string{"/app/e1", "/app/e2", "/e3"}, h.f.Ephemerals(s1, "/"))
	require.Equal(t, []string{"/app/e1", "/app/e2", "/e3"}, h.f.Ephemerals(s1, ""))
	require.Equal(t, []string{"/app/e1", "/app/e2"}, h.f.Ephemerals(s1, "/app"))
	require.Equal(t, []string{}, h.f.Ephemerals(777, "/"))
	info, ok := h.f.Session(s1)
	require.True(t, ok)
	require.Equal(t, SessionInfo{ID: s1, Timeout: 10000, Ephemerals: 3}, info)

	// An ephemeral deleted explicitly leaves the index.
	require.Equal(t, wire.OK, h.do(s1, Op{Type: wire.OpDelete, Path: "/e3", Version: -1}).Err)

	r := h.apply(&Command{Type: CmdCloseSession, Session: s1})
	require.Equal(t, wire.OK, r.Err)
	require.Equal(t, []Event{
		{Type: wire.EventNodeDeleted, Path: "/app/e1"}, {Type: wire.EventNodeChildrenChanged, Path: "/app"},
		{Type: wire.EventNodeDeleted, Path: "/app/e2"}, {Type: wire.EventNodeChildrenChanged, Path: "/app"},
	}, plain(r.Events))
	_, ok = h.f.Session(s1)
	require.False(t, ok)
	require.Equal(t, wire.ErrSessionExpired, h.apply(&Command{Type: CmdCloseSession, Session: s1}).Err)
	require.Equal(t, wire.ErrSessionExpired, h.do(s1, createOp("/late")).Err)

	// Expiry from a stale term is ignored; from the current term it applies.
	h.idx++
	stale := h.f.ApplyCommand(h.idx, 5, &Command{Type: CmdExpireSession, Session: s2, Term: 4, Time: h.now})
	require.Equal(t, wire.ErrRuntimeInconsistency, stale.Err)
	_, ok = h.f.Session(s2)
	require.True(t, ok)
	h.idx++
	cur := h.f.ApplyCommand(h.idx, 5, &Command{Type: CmdExpireSession, Session: s2, Term: 5, Time: h.now})
	require.Equal(t, wire.OK, cur.Err)
	_, ok = h.f.Exists("/app/s-0000000002")
	require.False(t, ok)
	require.Equal(t, 0, h.f.Stats().Ephemerals)
}

func TestSecretSetOnce(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	p := h.f.Password(s)
	h.apply(&Command{Type: CmdInit, Secret: []byte("other")})
	require.Equal(t, p, h.f.Password(s))
	require.True(t, h.f.HasSecret())
}

func TestContainersAndTTL(t *testing.T) {
	h := newHarness(t)
	c := h.do(0, Op{Type: wire.OpCreateContainer, Path: "/c", ACL: wire.OpenACLUnsafe, Mode: wire.ModeContainer})
	require.Equal(t, int64(0), c.Stat.EphemeralOwner, "clients see 0 for containers, as in ZooKeeper")
	require.Equal(t, wire.ContainerOwner, h.f.node("/c").owner)
	ttl := h.do(0, Op{Type: wire.OpCreateTTL, Path: "/t", ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 5000})
	require.Equal(t, wire.OK, ttl.Err)
	require.Equal(t, int64(0), ttl.Stat.EphemeralOwner)
	got, ok := wire.TTLOf(h.f.node("/t").owner)
	require.True(t, ok)
	require.Equal(t, int64(5000), got)

	// A never-used container is not a candidate; a TTL node before its TTL neither.
	require.Empty(t, h.f.ReapCandidates(h.now, 0))
	h.mustCreate("/c/child")
	require.Empty(t, h.f.ReapCandidates(h.now, 0))
	require.Equal(t, wire.ErrNotEmpty, h.do(0, Op{Type: wire.OpDeleteContainer, Path: "/c"}).Err)
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: "/c/child", Version: -1}).Err)
	require.Equal(t, []string{"/c"}, h.f.ReapCandidates(h.now, 0))
	require.Equal(t, []string{"/c", "/t"}, h.f.ReapCandidates(h.now+10_000, 0))
	require.Equal(t, []string{"/c"}, h.f.ReapCandidates(h.now+10_000, 1))

	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDeleteContainer, Path: "/c"}).Err)
	r := h.apply(&Command{Type: CmdOps, Time: h.now + 10_000, Ops: []Op{{Type: wire.OpDeleteContainer, Path: "/t"}}})
	require.Equal(t, wire.OK, r.Err)
	require.Empty(t, h.f.ReapCandidates(h.now+100_000, 0))
}

func TestAllChildrenNumber(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	h.mustCreate("/a/b/c")
	h.mustCreate("/a/d")
	n, err := h.f.AllChildrenNumber("/a")
	require.NoError(t, err)
	require.Equal(t, int32(3), n)
	n, _ = h.f.AllChildrenNumber("/")
	require.Equal(t, int32(7), n)
	_, err = h.f.AllChildrenNumber("/nope")
	require.ErrorIs(t, err, wire.ErrNoNode)
}

func TestSetConfig(t *testing.T) {
	h := newHarness(t)
	cfg := []byte("server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=100000000")
	r := h.apply(&Command{Type: CmdSetConfig, Data: cfg})
	require.Equal(t, []Event{{Type: wire.EventNodeDataChanged, Path: ConfigPath}}, plain(r.Events))
	data, st, err := h.f.Get(ConfigPath)
	require.NoError(t, err)
	require.Equal(t, cfg, data)
	require.Equal(t, int32(1), st.Version)
	require.Equal(t, int64(h.idx), st.Mzxid)
}

// With TTL nodes disabled (NoTTL), a TTL create inside a multi fails in
// its place with Unimplemented, as ZooKeeper's validateCreateRequest runs
// for every sub-op: the earlier op's result is OK, the later one's
// RuntimeInconsistency, and nothing is created.
func TestMultiTTLCreateRefusedWithoutTTL(t *testing.T) {
	h := newHarness(t)
	ttl := Op{Type: wire.OpCreateTTL, Path: "/t", ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 5000}
	r := h.apply(&Command{Type: CmdOps, Multi: true, NoTTL: true, Ops: []Op{createOp("/a"), ttl, createOp("/b")}})
	require.Len(t, r.Ops, 3)
	require.Equal(t, []wire.Code{wire.OK, wire.ErrUnimplemented, wire.ErrRuntimeInconsistency},
		[]wire.Code{r.Ops[0].Err, r.Ops[1].Err, r.Ops[2].Err})
	_, ok := h.f.Exists("/a")
	require.False(t, ok)
	r = h.apply(&Command{Type: CmdOps, Multi: true, Ops: []Op{ttl}})
	require.Equal(t, wire.OK, r.Ops[0].Err, "TTL nodes enabled")
}

// NoTTL survives the log's encoding, and an entry written before it
// existed (a nil in its slot) reads as false.
func TestNoTTLRoundTrips(t *testing.T) {
	for _, want := range []bool{true, false} {
		b, err := EncodeCommand(&Command{Type: CmdOps, Multi: true, NoTTL: want, Ops: []Op{createOp("/a")}})
		require.NoError(t, err)
		c, err := DecodeCommand(b)
		require.NoError(t, err)
		require.Equal(t, want, c.NoTTL)
	}
}
