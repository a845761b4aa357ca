package fsm

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"testing"
	"unsafe"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// TestPathIndexAgainstMap drives the index with random inserts and
// removes in a small table (so probe runs wrap around and collide) and
// compares every lookup with a map.
func TestPathIndexAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	x := newPathIndex()
	keys := make([]string, 4000) // id -> path
	for i := range keys {
		keys[i] = fmt.Sprintf("/k%d", i)
	}
	want := map[string]uint32{}
	match := func(p string) func(uint32) bool { return func(id uint32) bool { return keys[id] == p } }
	for step := 0; step < 50000; step++ {
		id := uint32(rng.Intn(len(keys)))
		p := keys[id]
		if _, ok := want[p]; ok {
			x.remove(x.fragment(p), id)
			delete(want, p)
		} else {
			x.insert(x.fragment(p), id)
			want[p] = id
		}
		if step%1000 == 0 {
			for i, k := range keys {
				got, ok := x.find(x.fragment(k), match(k))
				w, wok := want[k]
				require.Equal(t, wok, ok, "step %d key %d", step, i)
				require.Equal(t, w, got, "step %d key %d", step, i)
			}
			require.Equal(t, len(want), x.n)
		}
	}
}

func TestCyclicBetween(t *testing.T) {
	for _, c := range []struct {
		i, k, j uint32
		want    bool
	}{
		{2, 3, 5, true}, {2, 5, 5, true}, {2, 2, 5, false}, {2, 6, 5, false},
		{6, 7, 1, true}, {6, 0, 1, true}, {6, 1, 1, true}, {6, 2, 1, false}, {6, 6, 1, false},
	} {
		require.Equal(t, c.want, cyclicBetween(c.i, c.k, c.j), "%+v", c)
	}
}

// TestRandomizedOpenSnapshots applies a random command stream over enough
// paths to span several arena chunks while snapshots stay open across
// hundreds of commands (so chunks are copied on write, also inside multis
// that roll back). Each snapshot, encoded only at release, must restore to
// the digest the state had when it was taken.
func TestRandomizedOpenSnapshots(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	h := newHarness(t)
	var paths []string
	for a := 0; a < 12; a++ {
		paths = append(paths, fmt.Sprintf("/p%d", a))
		for b := 0; b < 200; b++ {
			paths = append(paths, fmt.Sprintf("/p%d/c%d", a, b))
		}
	}
	gen := &cmdGen{rng: rng}
	type open struct {
		s      *snapshot
		digest [32]byte
		until  int
	}
	var snaps []open
	for step := 0; step < 40000; step++ {
		if step%2500 == 0 {
			s, err := h.f.Snapshot()
			require.NoError(t, err)
			snaps = append(snaps, open{s.(*snapshot), h.f.Digest(), step + 1000 + rng.Intn(3000)})
		}
		cmd := gen.next(h.f)
		if cmd.Type == CmdOps {
			// Mostly creates over the wide path set, so the tree grows
			// past several chunks and deletes free records for reuse.
			for i := range cmd.Ops {
				cmd.Ops[i].Path = paths[rng.Intn(len(paths))]
				if rng.Intn(3) > 0 {
					cmd.Ops[i].Type, cmd.Ops[i].Mode = wire.OpCreate, wire.ModePersistent
					cmd.Ops[i].ACL = wire.OpenACLUnsafe
				}
			}
		}
		if r := h.apply(cmd); r.Session != 0 {
			gen.sessions = append(gen.sessions, r.Session)
		}
		snaps = slices.DeleteFunc(snaps, func(o open) bool {
			if step < o.until {
				return false
			}
			var buf bytes.Buffer
			require.NoError(t, o.s.encode(&buf))
			o.s.Release()
			require.Equal(t, o.digest, restore(t, buf.Bytes()).Digest(), "snapshot released at step %d", step)
			return true
		})
	}
	require.NoError(t, h.f.Check())
	require.Greater(t, int(h.f.hw), 2*chunkSize, "the test spans several chunks")
	t.Logf("%d nodes, %d ids, %d free", h.f.count, h.f.hw, len(h.f.free))
}

// TestRestoreAcceptsAnyNodeOrder: snapshots written before the arena tree
// listed nodes in map order, children often before their parents.
func TestRestoreAcceptsAnyNodeOrder(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	for _, p := range []string{"/a", "/a/b", "/a/b/c", "/z"} {
		h.mustCreate(p)
	}
	h.do(s, Op{Type: wire.OpCreate, Path: "/a/b/e", ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeral})
	good := snapshotBytes(t, h.f)

	// Re-encode with the nodes reversed: deepest first, root last.
	dec := msgpack.NewDecoder(bufio.NewReader(bytes.NewReader(good[1:])))
	var hdr snapHeader
	require.NoError(t, dec.Decode(&hdr))
	nodes := make([]snapNode, hdr.Nodes)
	for i := range nodes {
		require.NoError(t, dec.Decode(&nodes[i]))
	}
	slices.Reverse(nodes)
	g := restore(t, encodeSnapshot(t, hdr, nodes))
	require.Equal(t, h.f.Digest(), g.Digest())
	require.Equal(t, []string{"/a/b/e"}, g.Ephemerals(s, "/"))

	// A node listed twice (also when both copies wait for a parent that
	// comes after them), or one whose parent never comes, is refused.
	for _, c := range []struct {
		want   string
		mutate func([]snapNode) []snapNode
	}{
		{"listed twice", func(ns []snapNode) []snapNode { return append(ns, ns[0]) }},
		{"listed twice", func(ns []snapNode) []snapNode {
			return append([]snapNode{{Path: "/n/m"}, {Path: "/n/m"}}, append(ns, snapNode{Path: "/n"})...)
		}},
		{"has no parent", func(ns []snapNode) []snapNode { return append(ns, snapNode{Path: "/q/r"}) }},
	} {
		_, err := ReadSnapshotFile(bytes.NewReader(encodeSnapshot(t, hdr, c.mutate(slices.Clone(nodes)))))
		require.ErrorIs(t, err, ErrBadSnapshot, c.want)
		require.ErrorContains(t, err, c.want)
	}
}

// encodeSnapshot writes a snapshot of hdr (its node count set) and nodes.
func encodeSnapshot(t *testing.T, hdr snapHeader, nodes []snapNode) []byte {
	var buf bytes.Buffer
	buf.WriteByte(SnapshotVersion)
	enc := msgpack.NewEncoder(&buf)
	hdr.Nodes = len(nodes)
	require.NoError(t, enc.Encode(&hdr))
	for i := range nodes {
		require.NoError(t, enc.Encode(&nodes[i]))
	}
	return buf.Bytes()
}

// TestDeletedRecordsAreReused: churn does not grow the arena.
func TestDeletedRecordsAreReused(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/q")
	for i := 0; i < 3*chunkSize; i++ {
		p := h.create("/q/n-", "x", wire.ModePersistentSequential).Path
		require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: p, Version: -1}).Err)
	}
	require.Len(t, h.f.chunks, 1, "ids are reused")
	kids, st, err := h.f.Children("/q")
	require.NoError(t, err)
	require.Empty(t, kids)
	require.Equal(t, int32(0), st.NumChildren)
}

func TestNodeRecordSize(t *testing.T) {
	// 104 bytes on 64-bit platforms: 1M znodes cost 104 MB of records.
	// Growing the record is a memory regression. Chunks must stay a whole
	// number of 8 KiB pages everywhere.
	if strconv.IntSize == 64 {
		require.Equal(t, uintptr(104), unsafe.Sizeof(node{}))
	}
	require.Zero(t, unsafe.Sizeof(chunk{})%8192)
}

// TestLookupNeedsExactPaths: only "/" finds the root, and a path that ends
// like a node's but starts elsewhere finds nothing.
func TestLookupNeedsExactPaths(t *testing.T) {
	h := newHarness(t)
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	for _, p := range []string{"", "a", "a/b", "/a/b/", "x/a/b", "//a/b", "/b"} {
		_, ok := h.f.lookup(p)
		require.False(t, ok, "%q", p)
	}
	for _, p := range []string{"/", "/a", "/a/b"} {
		_, ok := h.f.lookup(p)
		require.True(t, ok, "%q", p)
	}
}
