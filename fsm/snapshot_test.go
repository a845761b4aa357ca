package fsm

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func snapshotBytes(t testing.TB, f *FSM) []byte {
	s, err := f.Snapshot()
	require.NoError(t, err)
	defer s.Release()
	var buf bytes.Buffer
	require.NoError(t, s.(*snapshot).encode(&buf))
	return buf.Bytes()
}

func restore(t testing.TB, b []byte) *FSM {
	f := New()
	require.NoError(t, f.Restore(io.NopCloser(bytes.NewReader(b))))
	require.NoError(t, f.Check())
	return f
}

func TestSnapshotRoundTrip(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	h.mustCreate("/a")
	h.do(s, Op{Type: wire.OpCreate, Path: "/a/e", ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeral})
	h.do(0, Op{Type: wire.OpCreateContainer, Path: "/c", ACL: wire.OpenACLUnsafe, Mode: wire.ModeContainer})
	h.do(0, Op{Type: wire.OpCreateTTL, Path: "/t", ACL: wire.ReadACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 9})
	g := restore(t, snapshotBytes(t, h.f))
	require.Equal(t, h.f.Digest(), g.Digest())
	require.Equal(t, h.f.Password(s), g.Password(s))
	require.Equal(t, []string{"/a/e"}, g.Ephemerals(s, "/"))
	require.Equal(t, h.f.Stats(), g.Stats())
	// The restored FSM keeps working identically.
	h2 := &harness{t: t, f: g, idx: h.idx, now: h.now}
	require.Equal(t, h.session(), h2.session(), "session ids continue from the snapshot")
}

func TestSnapshotIsPointInTime(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/a")
	h.do(0, Op{Type: wire.OpSetData, Path: "/a", Data: []byte("v1"), Version: -1})
	want := h.f.Digest()
	snap, err := h.f.Snapshot()
	require.NoError(t, err)
	// Change everything the snapshot references before it is persisted.
	h.do(0, Op{Type: wire.OpSetData, Path: "/a", Data: []byte("v2"), Version: -1})
	h.do(0, Op{Type: wire.OpSetACL, Path: "/a", ACL: wire.ReadACLUnsafe, Version: -1})
	h.mustCreate("/a/b")
	h.do(0, Op{Type: wire.OpDelete, Path: "/a/b", Version: -1})
	var buf bytes.Buffer
	require.NoError(t, snap.(*snapshot).encode(&buf))
	snap.Release()
	require.Equal(t, want, restore(t, buf.Bytes()).Digest())
	data, _, _ := h.f.Get("/a")
	require.Equal(t, "v2", string(data))
}

func TestRestoreRejectsBadSnapshots(t *testing.T) {
	good := snapshotBytes(t, New())
	for name, b := range map[string][]byte{
		"empty":       {},
		"bad version": append([]byte{9}, good[1:]...),
		"truncated":   good[:len(good)/2],
		"garbage":     []byte{SnapshotVersion, 0xc1, 0xc1},
	} {
		f := New()
		h := newHarness(t)
		h.f = f
		h.mustCreate("/keep")
		err := f.Restore(io.NopCloser(bytes.NewReader(b)))
		require.ErrorIs(t, err, ErrBadSnapshot, name)
		_, ok := f.Exists("/keep")
		require.True(t, ok, "%s: a failed restore keeps the old state", name)
	}
}

func TestDeepTreeSnapshot(t *testing.T) {
	h := newHarness(t)
	const depth = 10000
	var b strings.Builder
	for i := 0; i < depth; i++ {
		b.WriteString("/d")
		h.mustCreate(b.String())
	}
	g := restore(t, snapshotBytes(t, h.f))
	require.Equal(t, h.f.Digest(), g.Digest())
	n, err := g.AllChildrenNumber("/d")
	require.NoError(t, err)
	require.Equal(t, int32(depth-1), n)
}

// TestRandomizedSnapshotReplica applies one random command stream to two
// FSMs; the second is replaced midway by a restore of the first's snapshot.
// Both must end with equal digests and valid invariants.
func TestRandomizedSnapshotReplica(t *testing.T) {
	for seed := int64(1); seed <= 5; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			a, b := newHarness(t), newHarness(t)
			gen := &cmdGen{rng: rng}
			const steps = 3000
			for i := 0; i < steps; i++ {
				cmd := gen.next(a.f)
				ra := a.apply(cmd)
				rb := b.apply(cloneCmd(cmd))
				if i != steps/2 {
					require.Equal(t, ra.Err, rb.Err)
				}
				if ra.Session != 0 {
					gen.sessions = append(gen.sessions, ra.Session)
				}
				if i == steps/2 {
					b.f = restore(t, snapshotBytes(t, a.f))
				}
				if i%500 == 0 {
					require.NoError(t, a.f.Check())
				}
			}
			require.NoError(t, b.f.Check())
			require.Equal(t, a.f.Digest(), b.f.Digest())
			t.Logf("seed %d: %d nodes, %d sessions", seed, a.f.Stats().Nodes, a.f.Stats().Sessions)
		})
	}
}

func cloneCmd(c *Command) *Command {
	b, err := EncodeCommand(c)
	if err != nil {
		panic(err)
	}
	out, err := DecodeCommand(b)
	if err != nil {
		panic(err)
	}
	return out
}

type cmdGen struct {
	rng      *rand.Rand
	sessions []int64
}

var genPaths = []string{"/a", "/b", "/a/x", "/a/y", "/b/x", "/a/x/1", "/c", "/c/q", "/t"}

func (g *cmdGen) path() string { return genPaths[g.rng.Intn(len(genPaths))] }

func (g *cmdGen) session() int64 {
	if len(g.sessions) == 0 || g.rng.Intn(10) == 0 {
		return 0
	}
	return g.sessions[g.rng.Intn(len(g.sessions))]
}

func (g *cmdGen) op() Op {
	p := g.path()
	ver := int32(g.rng.Intn(3) - 1)
	switch g.rng.Intn(9) {
	case 0, 1:
		return Op{Type: wire.OpCreate2, Path: p, Data: []byte{byte(g.rng.Intn(256))}, ACL: wire.OpenACLUnsafe,
			Mode: wire.CreateMode(g.rng.Intn(5))}
	case 2:
		return Op{Type: wire.OpCreateTTL, Path: p, ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 1000}
	case 3, 4:
		return Op{Type: wire.OpDelete, Path: p, Version: ver}
	case 5:
		return Op{Type: wire.OpSetData, Path: p, Data: []byte("d"), Version: ver}
	case 6:
		return Op{Type: wire.OpSetACL, Path: p, ACL: wire.ReadACLUnsafe, Version: ver}
	case 7:
		return Op{Type: wire.OpCheck, Path: p, Version: ver}
	}
	return Op{Type: wire.OpDeleteContainer, Path: p}
}

func (g *cmdGen) next(f *FSM) *Command {
	switch g.rng.Intn(12) {
	case 0:
		return &Command{Type: CmdCreateSession, Timeout: 4000}
	case 1:
		return &Command{Type: CmdCloseSession, Session: g.session()}
	case 2, 3:
		ops := make([]Op, 1+g.rng.Intn(4))
		for i := range ops {
			ops[i] = g.op()
		}
		return &Command{Type: CmdOps, Session: g.session(), Multi: true, Ops: ops}
	}
	return &Command{Type: CmdOps, Session: g.session(), Ops: []Op{g.op()}}
}
