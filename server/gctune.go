package server

import (
	"context"
	"os"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"time"
)

// The Go collector's default (GOGC=100) lets the heap grow to twice the
// live data before collecting. For a server that holds its whole tree in
// memory that is the wrong trade at both ends: with a small tree it
// collects very often (the live heap is small, the allocation rate of a
// busy server is not), and with a large tree it doubles the memory the
// tree needs. TuneGC sizes the headroom in bytes instead.
const (
	// DefaultGCMinHeadroom is the garbage the heap may gather before a
	// collection, at least. Marking a tree of a few hundred thousand
	// znodes is most of a busy server's GC cost, so collecting it every
	// 64 MiB of garbage cost a third of the write throughput at 64 clients
	// (README, Performance); 256 MiB keeps it to a few collections per
	// second.
	DefaultGCMinHeadroom = 256 << 20
	// DefaultGCPercent is the headroom as a percentage of the live heap
	// once that is larger than DefaultGCMinHeadroom: a tree of 2 GiB runs
	// in about 2.5 GiB, not 4.
	DefaultGCPercent = 25
	// DefaultGCTuneInterval is how often the live heap is sampled.
	DefaultGCTuneInterval = time.Second
	// maxGCPercent bounds the setting for a nearly empty heap.
	maxGCPercent = 10000
)

// GCTuning configures TuneGC.
type GCTuning struct {
	MinHeadroom uint64
	Percent     int
	Interval    time.Duration
}

// DefaultGCTuning is the tuning `paddock server` runs with.
func DefaultGCTuning() GCTuning {
	return GCTuning{MinHeadroom: DefaultGCMinHeadroom, Percent: DefaultGCPercent, Interval: DefaultGCTuneInterval}
}

// TuneGC adjusts the collector's percentage every t.Interval so that the
// heap may grow by max(t.MinHeadroom, t.Percent% of the live heap) between
// collections, until ctx ends. The setting is process-wide, so a program
// embedding several servers (tests) should not call it; GOGC in the
// environment disables it (the operator chose).
func TuneGC(ctx context.Context, t GCTuning) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	if t.Interval <= 0 {
		t.Interval = DefaultGCTuneInterval
	}
	sample := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}}
	tick := time.NewTicker(t.Interval)
	defer tick.Stop()
	last := -1
	for {
		rtmetrics.Read(sample)
		var live uint64
		if sample[0].Value.Kind() == rtmetrics.KindUint64 {
			live = sample[0].Value.Uint64()
		}
		if p := gcPercentFor(live, t); p != last {
			debug.SetGCPercent(p)
			last = p
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// gcPercentFor is the GOGC percentage that gives a live heap of live
// bytes the headroom t asks for.
func gcPercentFor(live uint64, t GCTuning) int {
	if live == 0 {
		return maxGCPercent
	}
	p := t.MinHeadroom * 100 / live
	if p > maxGCPercent {
		return maxGCPercent
	}
	return max(int(p), t.Percent)
}
