package fsm

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

func benchHarness(b *testing.B) *harness {
	h := &harness{t: b, f: New(), now: 1}
	h.apply(&Command{Type: CmdInit, Secret: []byte("s")})
	return h
}

func BenchmarkApplyCreate(b *testing.B) {
	h := benchHarness(b)
	h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/b")}})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/b/n" + strconv.Itoa(i))}})
	}
}

func BenchmarkApplySetData(b *testing.B) {
	h := benchHarness(b)
	h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/b")}})
	data := make([]byte, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.apply(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpSetData, Path: "/b", Data: data, Version: -1}}})
	}
}

func BenchmarkApplyDelete(b *testing.B) {
	h := benchHarness(b)
	h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/b")}})
	for i := 0; i < b.N; i++ {
		h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/b/n" + strconv.Itoa(i))}})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.apply(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpDelete, Path: "/b/n" + strconv.Itoa(i), Version: -1}}})
	}
}

// BenchmarkApplyEncoded includes msgpack decoding of the command, as Raft
// delivers it.
func BenchmarkApplyEncoded(b *testing.B) {
	f := New()
	data, _ := EncodeCommand(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpSetData, Path: "/zookeeper", Data: make([]byte, 100), Version: -1}}})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		cmd, _ := DecodeCommand(data)
		f.ApplyCommand(uint64(i+1), 1, cmd)
	}
}

// fillTree creates n small znodes under 1,000 parents: /bench/pNNN/nNNNNNNN.
func fillTree(f *FSM, n int) {
	idx := uint64(1)
	apply := func(op Op) {
		f.ApplyCommand(idx, 1, &Command{Type: CmdOps, Time: int64(idx), Ops: []Op{op}})
		idx++
	}
	apply(createOp("/bench"))
	for p := 0; p < 1000; p++ {
		apply(createOp(fmt.Sprintf("/bench/p%03d", p)))
	}
	for i := 0; i < n; i++ {
		apply(createOp(fmt.Sprintf("/bench/p%03d/n%07d", i%1000, i)))
	}
}

// BenchmarkMemoryPerZnode reports live heap bytes per znode for 1M small
// znodes, beyond the bytes of their paths and data (arena tree: ~117;
// the map-of-pointers tree it replaced: ~226).
func BenchmarkMemoryPerZnode(b *testing.B) {
	const n = 1_000_000
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f := New()
		fillTree(f, n)
		runtime.GC()
		runtime.ReadMemStats(&after)
		st := f.Stats()
		total := float64(after.HeapAlloc - before.HeapAlloc)
		b.ReportMetric(total/float64(st.Nodes), "heap-B/znode")
		b.ReportMetric((total-float64(st.DataSize))/float64(st.Nodes), "overhead-B/znode")
		runtime.KeepAlive(f)
	}
}

// BenchmarkSnapshotRestore1M measures capture+persist and restore of 1M
// small znodes; it reports the snapshot size.
func BenchmarkSnapshotRestore1M(b *testing.B) {
	f := New()
	fillTree(f, 1_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _ := f.Snapshot()
		var buf bytes.Buffer
		if err := s.(*snapshot).encode(&buf); err != nil {
			b.Fatal(err)
		}
		s.Release()
		b.ReportMetric(float64(buf.Len()), "snapshot-bytes")
		g := New()
		if err := g.Restore(io.NopCloser(&buf)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet reads random znodes of a 100,000-node tree
// (/bench/pNNN/nNNNNNNN, three levels) under the read lock, as getData does.
func BenchmarkGet(b *testing.B) {
	const n = 100_000
	f := New()
	fillTree(f, n)
	paths := make([]string, 4096)
	for i := range paths {
		j := (i * 7919) % n
		paths[i] = fmt.Sprintf("/bench/p%03d/n%07d", j%1000, j)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := f.Get(paths[i%len(paths)]); err != nil {
			b.Fatal(err)
		}
	}
}
