package fsm

import (
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func TestInitialTree(t *testing.T) {
	h := newHarness(t)
	kids, st, err := h.f.Children("/")
	require.NoError(t, err)
	require.Equal(t, []string{"zookeeper"}, kids)
	require.Equal(t, int32(1), st.NumChildren)
	kids, _, err = h.f.Children("/zookeeper")
	require.NoError(t, err)
	require.Equal(t, []string{"config", "quota"}, kids)
	acl, st, err := h.f.GetACL(ConfigPath)
	require.NoError(t, err)
	require.Equal(t, wire.ReadACLUnsafe, acl)
	require.Equal(t, int32(-1), st.Aversion)
	n, err := h.f.AllChildrenNumber("/")
	require.NoError(t, err)
	require.Equal(t, int32(3), n)
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		res := h.do(0, Op{Type: wire.OpDelete, Path: p, Version: -1})
		require.Equal(t, wire.ErrBadArguments, res.Err, p)
	}
}

func TestCreateStatBookkeeping(t *testing.T) {
	h := newHarness(t)
	_, before, _ := h.f.Get("/")
	res := h.create("/a", "hello", wire.ModePersistent)
	require.Equal(t, wire.OK, res.Err)
	zxid := int64(h.idx)
	st := res.Stat
	require.Equal(t, wire.Stat{Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: h.now, Mtime: h.now,
		DataLength: 5}, st)
	_, root, _ := h.f.Get("/")
	require.Equal(t, before.Cversion+1, root.Cversion)
	require.Equal(t, zxid, root.Pzxid)
	require.Equal(t, before.Mzxid, root.Mzxid, "parent mzxid unchanged by create")
	require.Equal(t, before.Mtime, root.Mtime)

	// setData: version+1, mzxid, mtime; czxid unchanged.
	set := h.do(0, Op{Type: wire.OpSetData, Path: "/a", Data: []byte("x"), Version: 0})
	require.Equal(t, wire.OK, set.Err)
	require.Equal(t, int32(1), set.Stat.Version)
	require.Equal(t, int64(h.idx), set.Stat.Mzxid)
	require.Equal(t, zxid, set.Stat.Czxid)
	require.Equal(t, h.now, set.Stat.Mtime)

	// setACL: aversion+1 only.
	acl := h.do(0, Op{Type: wire.OpSetACL, Path: "/a", ACL: wire.ReadACLUnsafe, Version: 0})
	require.Equal(t, wire.OK, acl.Err)
	require.Equal(t, int32(1), acl.Stat.Aversion)
	require.Equal(t, set.Stat.Mzxid, acl.Stat.Mzxid)
	got, _, _ := h.f.GetACL("/a")
	require.Equal(t, wire.ReadACLUnsafe, got)

	// delete: parent pzxid moves and, as in ZooKeeper 3.8, cversion too.
	_, root, _ = h.f.Get("/")
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: "/a", Version: -1}).Err)
	_, after, _ := h.f.Get("/")
	require.Equal(t, root.Cversion+1, after.Cversion)
	require.Equal(t, int64(h.idx), after.Pzxid)
}

func TestSequentialSuffix(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/q")
	require.Equal(t, "/q/n0000000000", h.create("/q/n", "", wire.ModePersistentSequential).Path)
	require.Equal(t, "/q/n0000000001", h.create("/q/n", "", wire.ModePersistentSequential).Path)
	h.mustCreate("/q/plain")
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: "/q/n0000000000", Version: -1}).Err)
	// The suffix counts creates only (observed on ZooKeeper 3.8): a delete
	// neither reuses nor skips a number; cversion counts both.
	require.Equal(t, "/q/0000000003", h.create("/q/", "", wire.ModePersistentSequential).Path)
	_, st, _ := h.f.Get("/q")
	require.Equal(t, int32(5), st.Cversion)
}

func TestSequentialOverflow(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/q")
	h.f.mutable("/q").cversion = 2147483647
	require.Equal(t, "/q/s2147483647", h.create("/q/s", "", wire.ModePersistentSequential).Path)
	require.Equal(t, "/q/s-2147483648", h.create("/q/s", "", wire.ModePersistentSequential).Path)
}

// A container whose sequence has wrapped past 2^31-1 is still reaped once
// empty.
func TestContainerReapedAfterSequenceWrap(t *testing.T) {
	h := newHarness(t)
	require.Equal(t, wire.OK, h.create("/c", "", wire.ModeContainer).Err)
	h.f.mutable("/c").cversion = 2147483647
	kid := h.create("/c/s", "", wire.ModePersistentSequential)
	require.Equal(t, "/c/s2147483647", kid.Path)
	require.Empty(t, h.f.ReapCandidates(h.now, 0), "a container with a child")
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: kid.Path, Version: -1}).Err)
	require.Equal(t, []string{"/c"}, h.f.ReapCandidates(h.now, 0))
}

func TestOpErrors(t *testing.T) {
	h := newHarness(t)
	sess := h.session()
	h.mustCreate("/p")
	h.mustCreate("/p/c")
	require.Equal(t, wire.OK, h.do(sess, Op{Type: wire.OpCreate, Path: "/eph", ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeral}).Err)
	h.mustCreate("/empty")
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpCreate, Path: "/ro", ACL: wire.ReadACLUnsafe}).Err)
	ttlRes := h.do(0, Op{Type: wire.OpCreateTTL, Path: "/ttl", ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 60000})
	require.Equal(t, wire.OK, ttlRes.Err)
	open := wire.OpenACLUnsafe
	cases := []struct {
		name    string
		session int64
		op      Op
		want    wire.Code
	}{
		{"create bad path", 0, Op{Type: wire.OpCreate, Path: "a", ACL: open}, wire.ErrBadArguments},
		{"create trailing slash", 0, Op{Type: wire.OpCreate, Path: "/p/", ACL: open}, wire.ErrBadArguments},
		{"create malformed, parent missing", 0, Op{Type: wire.OpCreate, Path: "/a/", ACL: open}, wire.ErrNoNode},
		{"create NUL before acl", 0, Op{Type: wire.OpCreate, Path: "/a\x00"}, wire.ErrBadArguments},
		{"create malformed, acl first", 0, Op{Type: wire.OpCreate, Path: "/p/"}, wire.ErrInvalidACL},
		{"create malformed, parent without CREATE", sess, Op{Type: wire.OpCreate, Path: "/ro/", ACL: open}, wire.ErrNoAuth},
		{"create sequential malformed", 0, Op{Type: wire.OpCreate, Path: "/p//", ACL: open, Mode: wire.ModePersistentSequential}, wire.ErrNoNode},
		{"create empty acl", 0, Op{Type: wire.OpCreate, Path: "/x"}, wire.ErrInvalidACL},
		{"create bad acl scheme", 0, Op{Type: wire.OpCreate, Path: "/x", ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "nope", ID: "x"}}}}, wire.ErrInvalidACL},
		{"create world not anyone", 0, Op{Type: wire.OpCreate, Path: "/x", ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "bob"}}}}, wire.ErrInvalidACL},
		{"create unexpanded auth", 0, Op{Type: wire.OpCreate, Path: "/x", ACL: wire.CreatorAllACL}, wire.ErrInvalidACL},
		{"create bad ip", 0, Op{Type: wire.OpCreate, Path: "/x", ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "1.2.3.4/40"}}}}, wire.ErrInvalidACL},
		{"acl checked before parent", 0, Op{Type: wire.OpCreate, Path: "/missing/x"}, wire.ErrInvalidACL},
		{"create no parent", 0, Op{Type: wire.OpCreate, Path: "/missing/x", ACL: open}, wire.ErrNoNode},
		{"create exists", 0, Op{Type: wire.OpCreate, Path: "/p", ACL: open}, wire.ErrNodeExists},
		{"create root", 0, Op{Type: wire.OpCreate, Path: "/", ACL: open}, wire.ErrNodeExists},
		{"create under ephemeral", 0, Op{Type: wire.OpCreate, Path: "/eph/x", ACL: open}, wire.ErrNoChildrenForEphemerals},
		{"create bad mode", 0, Op{Type: wire.OpCreate, Path: "/x", ACL: open, Mode: 7}, wire.ErrBadArguments},
		{"create ttl mode without ttl op", 0, Op{Type: wire.OpCreate2, Path: "/x", ACL: open, Mode: wire.ModePersistentWithTTL}, wire.ErrBadArguments},
		{"createTTL zero ttl", 0, Op{Type: wire.OpCreateTTL, Path: "/x", ACL: open, Mode: wire.ModePersistentWithTTL}, wire.ErrBadArguments},
		{"createTTL ttl too big", 0, Op{Type: wire.OpCreateTTL, Path: "/x", ACL: open, Mode: wire.ModePersistentWithTTL, TTL: wire.MaxTTL + 1}, wire.ErrBadArguments},
		{"createTTL non-ttl mode", 0, Op{Type: wire.OpCreateTTL, Path: "/x", ACL: open, Mode: wire.ModePersistent, TTL: 5}, wire.ErrBadArguments},
		{"createContainer ttl mode", 0, Op{Type: wire.OpCreateContainer, Path: "/x", ACL: open, Mode: wire.ModePersistentWithTTL}, wire.ErrBadArguments},
		{"ephemeral without session", 0, Op{Type: wire.OpCreate, Path: "/x", ACL: open, Mode: wire.ModeEphemeral}, wire.ErrBadArguments},
		{"write by dead session", 424242, Op{Type: wire.OpCreate, Path: "/x", ACL: open}, wire.ErrSessionExpired},
		{"delete malformed path", 0, Op{Type: wire.OpDelete, Path: "/p//b", Version: -1}, wire.ErrNoNode},
		{"delete trailing slash", 0, Op{Type: wire.OpDelete, Path: "/p/", Version: -1}, wire.ErrNoNode},
		{"delete relative path", 0, Op{Type: wire.OpDelete, Path: "p", Version: -1}, wire.ErrBadArguments},
		{"delete NUL", 0, Op{Type: wire.OpDelete, Path: "/p\x00", Version: -1}, wire.ErrBadArguments},
		{"delete system node", 0, Op{Type: wire.OpDelete, Path: "/zookeeper/quota", Version: -1}, wire.ErrBadArguments},
		{"delete root", 0, Op{Type: wire.OpDelete, Path: "/", Version: -1}, wire.ErrBadArguments},
		{"delete missing", 0, Op{Type: wire.OpDelete, Path: "/nope", Version: -1}, wire.ErrNoNode},
		{"delete missing parent", 0, Op{Type: wire.OpDelete, Path: "/nope/x", Version: -1}, wire.ErrNoNode},
		{"delete bad version", 0, Op{Type: wire.OpDelete, Path: "/p/c", Version: 3}, wire.ErrBadVersion},
		{"delete not empty", 0, Op{Type: wire.OpDelete, Path: "/p", Version: -1}, wire.ErrNotEmpty},
		{"delete version before children", 0, Op{Type: wire.OpDelete, Path: "/p", Version: 9}, wire.ErrBadVersion},
		{"setData bad path", 0, Op{Type: wire.OpSetData, Path: "/./x", Version: -1}, wire.ErrBadArguments},
		{"setData missing", 0, Op{Type: wire.OpSetData, Path: "/nope", Version: -1}, wire.ErrNoNode},
		{"setData bad version", 0, Op{Type: wire.OpSetData, Path: "/p", Version: 1}, wire.ErrBadVersion},
		{"setACL empty", 0, Op{Type: wire.OpSetACL, Path: "/p", Version: -1}, wire.ErrInvalidACL},
		{"setACL missing", 0, Op{Type: wire.OpSetACL, Path: "/nope", ACL: open, Version: -1}, wire.ErrNoNode},
		{"setACL bad aversion", 0, Op{Type: wire.OpSetACL, Path: "/p", ACL: open, Version: 2}, wire.ErrBadVersion},
		{"check missing", 0, Op{Type: wire.OpCheck, Path: "/nope", Version: -1}, wire.ErrNoNode},
		{"check bad version", 0, Op{Type: wire.OpCheck, Path: "/p", Version: 1}, wire.ErrBadVersion},
		{"reap missing", 0, Op{Type: wire.OpDeleteContainer, Path: "/nope"}, wire.ErrNoNode},
		{"reap persistent", 0, Op{Type: wire.OpDeleteContainer, Path: "/empty"}, wire.ErrBadArguments},
		{"reap malformed path", 0, Op{Type: wire.OpDeleteContainer, Path: "/p/"}, wire.ErrBadArguments},
		{"reap live ttl", 0, Op{Type: wire.OpDeleteContainer, Path: "/ttl"}, wire.ErrBadVersion},
		{"unknown op", 0, Op{Type: wire.OpGetData, Path: "/p"}, wire.ErrUnimplemented},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := h.f.Digest()
			res := h.do(tc.session, tc.op)
			require.Equal(t, tc.want, res.Err)
			h.idx-- // the failed op changed nothing but lastZxid
			h.f.lastZxid = int64(h.idx)
			require.Equal(t, before, h.f.Digest(), "a failed op must not change state")
		})
	}
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpCheck, Path: "/p", Version: 0}).Err)
}

func TestEventsPerOp(t *testing.T) {
	h := newHarness(t)
	r := h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/a")}})
	require.Equal(t, []Event{{Type: wire.EventNodeCreated, Path: "/a"}, {Type: wire.EventNodeChildrenChanged, Path: "/"}}, plain(r.Events))
	r = h.apply(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpSetData, Path: "/a", Version: -1}}})
	require.Equal(t, []Event{{Type: wire.EventNodeDataChanged, Path: "/a"}}, plain(r.Events))
	r = h.apply(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpSetACL, Path: "/a", ACL: wire.OpenACLUnsafe, Version: -1}}})
	require.Empty(t, r.Events, "setACL fires no watch")
	r = h.apply(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpDelete, Path: "/a", Version: -1}}})
	require.Equal(t, []Event{{Type: wire.EventNodeDeleted, Path: "/a"}, {Type: wire.EventNodeChildrenChanged, Path: "/"}}, plain(r.Events))
}

func TestOnApplyHook(t *testing.T) {
	h := newHarness(t)
	var seen []int64
	h.f.OnApply = func(r *Result) { seen = append(seen, r.Zxid) }
	h.mustCreate("/a")
	require.Equal(t, []int64{int64(h.idx)}, seen)
}

func TestCommandCodec(t *testing.T) {
	c := &Command{Type: CmdOps, Time: 5, Session: 7, Multi: true, Ops: []Op{
		{Type: wire.OpCreateTTL, Path: "/a", Data: []byte("d"), ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 9},
		{Type: wire.OpSetData, Path: "/b", Version: -1},
	}}
	b, err := EncodeCommand(c)
	require.NoError(t, err)
	require.Equal(t, CommandVersion, b[0])
	got, err := DecodeCommand(b)
	require.NoError(t, err)
	require.Equal(t, c, got)
	_, err = DecodeCommand(append([]byte{99}, b[1:]...))
	require.ErrorIs(t, err, ErrBadCommand)
	_, err = DecodeCommand(nil)
	require.ErrorIs(t, err, ErrBadCommand)
	_, err = DecodeCommand([]byte{CommandVersion, 0xc1})
	require.ErrorIs(t, err, ErrBadCommand)
}

// TestEmptyDataIsNotNull: ZooKeeper returns an empty buffer for a node
// created with empty data and null only for null data (kazoo's Counter
// decodes the data and breaks on null).
func TestEmptyDataIsNotNull(t *testing.T) {
	h := newHarness(t)
	for path, data := range map[string][]byte{"/empty": {}, "/null": nil} {
		cmd := cloneCmd(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpCreate, Path: path, Data: data, ACL: wire.OpenACLUnsafe}}})
		require.Equal(t, wire.OK, h.apply(cmd).Err)
		got, _, err := h.f.Get(path)
		require.NoError(t, err)
		require.Equal(t, data == nil, got == nil, path)
	}
	g := restore(t, snapshotBytes(t, h.f))
	got, _, _ := g.Get("/empty")
	require.NotNil(t, got, "a snapshot keeps empty data empty")
}

// TestCreateContainerByOpcode: as ZooKeeper (CreateContainerTxn),
// createContainer with any non-TTL mode makes a container (sequential
// modes add a suffix; ephemeral ones do not make it ephemeral). A create
// with mode CONTAINER makes one too (ZooKeeper: a persistent node).
func TestCreateContainerByOpcode(t *testing.T) {
	h := newHarness(t)
	sess := h.session()
	for _, mode := range []wire.CreateMode{wire.ModePersistent, wire.ModeEphemeral, wire.ModePersistentSequential,
		wire.ModeEphemeralSequential, wire.ModeContainer} {
		res := h.do(sess, Op{Type: wire.OpCreateContainer, Path: "/c-" + mode.String(), ACL: wire.OpenACLUnsafe, Mode: mode})
		require.Equal(t, wire.OK, res.Err, mode)
		require.Equal(t, mode.IsSequential(), res.Path != "/c-"+mode.String(), "%v: %s", mode, res.Path)
		require.True(t, h.f.node(res.Path).isContainer(), "%v makes a container", mode)
		require.Zero(t, res.Stat.EphemeralOwner, mode)
	}
	require.Empty(t, h.f.Ephemerals(sess, "/"))
	res := h.do(sess, Op{Type: wire.OpCreate2, Path: "/flag", ACL: wire.OpenACLUnsafe, Mode: wire.ModeContainer})
	require.Equal(t, wire.OK, res.Err)
	require.True(t, h.f.node("/flag").isContainer(), "create with mode CONTAINER makes a container")
}

// TestApplyRefusesUnknownEntries: a replica must not skip a committed entry
// it cannot read (it would diverge); it stops with a clear message.
func TestApplyRefusesUnknownEntries(t *testing.T) {
	f := New()
	require.PanicsWithValue(t,
		"fsm: cannot apply log entry 7 (term 2): fsm: bad command: unknown format version 99; is a newer Paddock writing to this cluster?",
		func() { f.Apply(&raft.Log{Index: 7, Term: 2, Data: []byte{99, 1, 2}}) })
}

// Apply takes node times from the entry's AppendedAt, the leader's clock,
// replicated with the entry, rather than from the proposer's stamp.
func TestApplyTakesTimeFromTheLeadersAppend(t *testing.T) {
	f := New()
	apply := func(idx uint64, cmd *Command, at time.Time) {
		b, err := EncodeCommand(cmd)
		require.NoError(t, err)
		f.Apply(&raft.Log{Index: idx, Term: 1, Type: raft.LogCommand, Data: b, AppendedAt: at})
	}
	leader := time.UnixMilli(1_700_000_123_456)
	apply(1, &Command{Type: CmdInit, Time: 5, Secret: []byte("s")}, leader)
	apply(2, &Command{Type: CmdOps, Time: 42, Ops: []Op{createOp("/a")}}, leader)
	_, st, err := f.Get("/a")
	require.NoError(t, err)
	require.Equal(t, leader.UnixMilli(), st.Ctime)
	apply(3, &Command{Type: CmdOps, Time: 42, Ops: []Op{createOp("/b")}}, time.Time{})
	_, st, err = f.Get("/b")
	require.NoError(t, err)
	require.EqualValues(t, 42, st.Ctime, "without AppendedAt the proposer's stamp")
}

// TestSessionIDServerByte: the first session's command sets the top byte
// of every session id (ZooKeeper's server id: 1 standalone), the time
// the bits below it; later ids count on from it, whatever their
// commands carry. A command encoded before ServerID existed (nil in its
// slot) decodes with ServerID 0.
func TestSessionIDServerByte(t *testing.T) {
	for _, sv := range []int64{0, 1} {
		h := newHarness(t)
		first := h.apply(&Command{Type: CmdCreateSession, Timeout: 10000, ServerID: sv}).Session
		require.Equal(t, sv, first>>56)
		require.Equal(t, int64(uint64(h.now<<24)>>8), first&(1<<56-1))
		next := h.apply(&Command{Type: CmdCreateSession, Timeout: 10000, ServerID: 5}).Session
		require.Equal(t, first+1, next)
	}
	c := &Command{Type: CmdCreateSession, Time: 9, Timeout: 4000, ServerID: 1}
	b, err := EncodeCommand(c)
	require.NoError(t, err)
	got, err := DecodeCommand(b)
	require.NoError(t, err)
	require.Equal(t, c, got)
	c.ServerID = 0
	b, err = EncodeCommand(c)
	require.NoError(t, err)
	require.Equal(t, byte(0xc0), b[len(b)-1], "ServerID 0 is encoded as the reserved slot was: nil")
}
