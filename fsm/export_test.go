package fsm

import (
	"bytes"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func exampleState(t *testing.T) (*harness, int64) {
	h := newHarness(t)
	s := h.session()
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	h.create("/a/b/big", strings.Repeat("x", 100), wire.ModePersistent)
	h.create("/a/seq-", "1", wire.ModePersistentSequential)
	h.do(s, Op{Type: wire.OpCreate, Path: "/a/e", Data: []byte("eph"), ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeral})
	h.do(0, Op{Type: wire.OpCreateContainer, Path: "/c", ACL: wire.OpenACLUnsafe, Mode: wire.ModeContainer})
	h.mustCreate("/c/kid")
	h.do(0, Op{Type: wire.OpCreateTTL, Path: "/t", Data: []byte("tt"), ACL: wire.ReadACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 9000})
	return h, s
}

func TestCaptureWriteReadRoundTrip(t *testing.T) {
	h, _ := exampleState(t)
	c := h.f.Capture()
	require.Equal(t, h.f.LastZxid(), c.LastZxid())
	require.Equal(t, h.f.Stats().Nodes, c.Nodes())
	// The capture is point-in-time: later writes do not show.
	want := h.f.Digest()
	h.mustCreate("/later")
	var buf bytes.Buffer
	n, err := c.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	c.Release()
	c.Release() // idempotent
	g, err := ReadSnapshotFile(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, want, g.Digest())

	buf.Reset()
	zxid, err := h.f.WriteSnapshot(&buf)
	require.NoError(t, err)
	require.Equal(t, h.f.LastZxid(), zxid)
	g, err = ReadSnapshotFile(&buf)
	require.NoError(t, err)
	require.Equal(t, h.f.Digest(), g.Digest())
	require.False(t, h.f.snapshotsActive())
}

func TestReadSnapshotFileRejectsBadInput(t *testing.T) {
	h, _ := exampleState(t)
	var buf bytes.Buffer
	_, err := h.f.WriteSnapshot(&buf)
	require.NoError(t, err)
	good := buf.Bytes()
	for name, b := range map[string][]byte{
		"empty":     {},
		"truncated": good[:len(good)-3],
		"garbage":   []byte("not a snapshot"),
	} {
		_, err := ReadSnapshotFile(bytes.NewReader(b))
		require.ErrorIs(t, err, ErrBadSnapshot, name)
	}
}

// stateOf lists f's nodes and sessions as a State.
func stateOf(f *FSM) *State {
	st := &State{LastZxid: f.lastZxid, NextSession: f.nextSession, Secret: f.secret, Sessions: f.Sessions()}
	f.chunks.walk(func(p string, _ uint32, n *node) {
		ns := NodeState{Path: p, Data: n.data(), ACL: f.acls.get(n.aclRef), Stat: n.stat(), Seq: n.cversion}
		ns.Stat.EphemeralOwner = n.owner // the stored owner, not the client's view
		st.Nodes = append(st.Nodes, ns)
	})
	return st
}

func TestBuildStateReproducesState(t *testing.T) {
	h, s := exampleState(t)
	g, err := BuildState(stateOf(h.f))
	require.NoError(t, err)
	require.Equal(t, h.f.Digest(), g.Digest())
	require.Equal(t, []string{"/a/e"}, g.Ephemerals(s, "/"))
	require.Equal(t, h.f.Stats(), g.Stats())
	// The container index was rebuilt: emptying /c makes it a candidate.
	h2 := &harness{t: t, f: g, idx: uint64(g.LastZxid()), now: h.now}
	require.Equal(t, wire.OK, h2.do(0, Op{Type: wire.OpDelete, Path: "/c/kid", Version: -1}).Err)
	require.Equal(t, []string{"/c"}, g.ReapCandidates(0, 0))
}

func TestBuildStateAddsBuiltinsAndValidates(t *testing.T) {
	f, err := BuildState(&State{LastZxid: 3, Nodes: []NodeState{
		{Path: "/", ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Cversion: 1, Pzxid: 2}, Seq: 1},
		{Path: "/x", Data: []byte("d"), ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Czxid: 2, Mzxid: 3, Pzxid: 2, Version: 1}},
	}})
	require.NoError(t, err)
	kids, _, err := f.Children("/")
	require.NoError(t, err)
	require.Equal(t, []string{"x", "zookeeper"}, kids)
	kids, _, _ = f.Children("/zookeeper")
	require.Equal(t, []string{"config", "quota"}, kids)
	acl, st, err := f.GetACL(ConfigPath)
	require.NoError(t, err)
	require.Equal(t, wire.ReadACLUnsafe, acl)
	require.Equal(t, int32(-1), st.Aversion)
	data, st, err := f.Get("/x")
	require.NoError(t, err)
	require.Equal(t, "d", string(data))
	require.Equal(t, int64(3), st.Mzxid)
	require.False(t, f.HasSecret())

	// Each bad state is otherwise valid: the root has counted its child.
	root := NodeState{Path: "/", ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Cversion: 1, Pzxid: 5}, Seq: 1}
	z := wire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1}
	for want, st := range map[string]*State{
		"has no parent":    {LastZxid: 5, Nodes: []NodeState{root, {Path: "/a/b", Stat: z}}},
		"/a/":              {LastZxid: 5, Nodes: []NodeState{root, {Path: "/a/", Stat: z}}},
		"listed twice":     {LastZxid: 5, Nodes: []NodeState{root, {Path: "/a", Stat: z}, {Path: "/a", Stat: z}}},
		"unlisted session": {LastZxid: 5, Nodes: []NodeState{root, {Path: "/e", Stat: wire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1, EphemeralOwner: 42}}}},
		"beyond last":      {LastZxid: 5, Nodes: []NodeState{root, {Path: "/n", Stat: wire.Stat{Czxid: 5, Mzxid: 6, Pzxid: 5}}}},
		"below child":      {LastZxid: 9, Nodes: []NodeState{root, {Path: "/p", Stat: wire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1, Cversion: 1}, Seq: 1}, {Path: "/p/k", Stat: wire.Stat{Czxid: 5, Mzxid: 5, Pzxid: 5}}}},
		"session 0x1":      {LastZxid: 5, Sessions: []SessionInfo{{ID: 1}, {ID: 1}}},
		"created children": {LastZxid: 5, Nodes: []NodeState{root, {Path: "/p", Stat: wire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1}}, {Path: "/p/k", Stat: z}}},
	} {
		_, err := BuildState(st)
		require.ErrorContains(t, err, want)
	}
	_, err = BuildState(&State{LastZxid: 5, Nodes: []NodeState{root, {Path: "/fine", Stat: z}}})
	require.NoError(t, err, "the bad states' common part is valid")
}

func TestBuildStateRecomputesQuotaStats(t *testing.T) {
	z := func(cz int64) wire.Stat { return wire.Stat{Czxid: cz, Mzxid: cz, Pzxid: cz} }
	st := &State{LastZxid: 9, Nodes: []NodeState{
		{Path: "/", ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Cversion: 1, Pzxid: 3}, Seq: 1},
		{Path: QuotaPath, ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Cversion: 1, Pzxid: 4}, Seq: 1},
		{Path: QuotaPath + "/a", ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Czxid: 4, Mzxid: 4, Pzxid: 6, Cversion: 2}, Seq: 2},
		{Path: QuotaPath + "/a/zookeeper_limits", Data: []byte("count=3,bytes=-1"), ACL: wire.OpenACLUnsafe, Stat: z(5)},
		{Path: QuotaPath + "/a/zookeeper_stats", Data: []byte("count=0,bytes=0"), ACL: wire.OpenACLUnsafe, Stat: z(6)},
		{Path: "/a", ACL: wire.OpenACLUnsafe, Stat: wire.Stat{Czxid: 3, Mzxid: 3, Pzxid: 7, Cversion: 1}, Seq: 1},
		{Path: "/a/b", Data: []byte("xyz"), ACL: wire.OpenACLUnsafe, Stat: z(7)},
	}}
	f, err := BuildState(st)
	require.NoError(t, err)
	data, _, err := f.Get(QuotaPath + "/a/zookeeper_stats")
	require.NoError(t, err)
	require.Equal(t, "count=2,bytes=3", string(data))
	// Paddock keeps them up to date from there.
	h := &harness{t: t, f: f, idx: 9, now: 1_800_000_000_000}
	h.create("/a/c", "12", wire.ModePersistent)
	data, _, _ = f.Get(QuotaPath + "/a/zookeeper_stats")
	require.Equal(t, "count=3,bytes=5", string(data))
}

func TestInspect(t *testing.T) {
	h, _ := exampleState(t)
	in := h.f.Inspect(3)
	st := h.f.Stats()
	require.Equal(t, st.LastZxid, in.LastZxid)
	require.Equal(t, st.Nodes, in.Znodes)
	require.Equal(t, 1, in.Ephemerals)
	require.Equal(t, 1, in.Sessions)
	require.Equal(t, 1, in.Containers)
	require.Equal(t, 1, in.TTLNodes)
	require.Equal(t, st.DataSize, in.DataBytes+in.PathBytes)
	require.Equal(t, int64(100+1+3+2), in.DataBytes)
	require.Equal(t, []PathStat{
		{Path: "/a", SubtreeNodes: 5, SubtreeBytes: 104, DataBytes: 0},
		{Path: "/zookeeper", SubtreeNodes: 3, SubtreeBytes: 0},
		{Path: "/a/b", SubtreeNodes: 2, SubtreeBytes: 100},
	}, in.TopBySubtree)
	require.Equal(t, "/a/b/big", in.TopByData[0].Path)
	require.Equal(t, 100, in.TopByData[0].DataBytes)
	require.Equal(t, "/a/e", in.TopByData[1].Path)
	require.Len(t, in.TopByData, 3)
	require.Len(t, h.f.Inspect(100).TopBySubtree, st.Nodes-1)
}
