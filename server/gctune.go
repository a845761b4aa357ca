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
	// collection, at least. A busy server allocates ~200 MiB/s (mostly in
	// Raft and its log store), and each collection costs it throughput
	// even with the arena tree's cheap marking: with 32 MiB, writes at 64
	// clients ran ~15% slower with p99 4.5 → 6 ms (README, Performance);
	// 256 MiB keeps it to about one collection per second. The headroom
	// is given back when the server falls idle (DefaultGCIdleAlloc).
	DefaultGCMinHeadroom = 256 << 20
	// DefaultGCPercent is the headroom as a percentage of the live heap
	// once that is larger than DefaultGCMinHeadroom: a tree of 2 GiB runs
	// in about 2.5 GiB, not 4.
	DefaultGCPercent = 25
	// DefaultGCTuneInterval is how often the live heap is sampled.
	DefaultGCTuneInterval = time.Second
	// DefaultGCIdleAlloc is the allocation per interval below which the
	// server counts as idle. On the first idle interval after a busy one
	// TuneGC collects and returns the free heap to the operating system
	// (debug.FreeOSMemory), as JVMs do when idle (JEP 346): the headroom
	// pays for throughput only while there is load, and a server at rest
	// holds little more than its live data. A busy server allocates
	// hundreds of MiB per second; one serving a few requests, well under
	// 1 MiB.
	DefaultGCIdleAlloc = 4 << 20
	// DefaultGCIdleAfter is how long a server must stay idle before it
	// returns its free heap. The heap's headroom, once returned, is
	// faulted back in page by page as the next load allocates, and on a
	// virtual machine that costs dearly (~30 µs a page on the machine of
	// README's results, 2 s of CPU for 256 MiB): on a 3-node cluster,
	// 16-client writes after a 4 s pause ran at 2.8–3.5k/s where a server
	// that had kept its heap ran at 4.2–5.1k/s. A pause shorter than this
	// is a lull, not rest. (The JVM collectors that give memory back, ZGC
	// and Shenandoah, wait five minutes.)
	DefaultGCIdleAfter = time.Minute
	// DefaultGCIdleMinGap is the least time between two such returns, so
	// that a load coming in bursts does not pay for a collection and the
	// regrowth of the heap after every burst.
	DefaultGCIdleMinGap = 30 * time.Second
	// maxGCPercent bounds the setting for a nearly empty heap.
	maxGCPercent = 10000
)

// GCTuning configures TuneGC.
type GCTuning struct {
	MinHeadroom uint64
	Percent     int
	Interval    time.Duration
	// IdleAlloc is DefaultGCIdleAlloc's setting; 0 never returns memory
	// early (the runtime's scavenger still does, slowly).
	IdleAlloc uint64
	// IdleAfter is DefaultGCIdleAfter's setting; 0 returns memory on the
	// first idle interval.
	IdleAfter time.Duration
	// IdleMinGap is DefaultGCIdleMinGap's setting.
	IdleMinGap time.Duration
}

// DefaultGCTuning is the tuning `paddock server` runs with.
func DefaultGCTuning() GCTuning {
	return GCTuning{MinHeadroom: DefaultGCMinHeadroom, Percent: DefaultGCPercent,
		Interval: DefaultGCTuneInterval, IdleAlloc: DefaultGCIdleAlloc, IdleAfter: DefaultGCIdleAfter,
		IdleMinGap: DefaultGCIdleMinGap}
}

// TuneGC adjusts the collector's percentage every t.Interval so that the
// heap may grow by max(t.MinHeadroom, t.Percent% of the live heap) between
// collections, and returns the free heap to the operating system when the
// server has been idle (t.IdleAlloc) for t.IdleAfter, until ctx ends. The setting is
// process-wide, so a program embedding several servers (tests) should not
// call it; GOGC in the environment disables it (the operator chose).
func TuneGC(ctx context.Context, t GCTuning) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	if t.Interval <= 0 {
		t.Interval = DefaultGCTuneInterval
	}
	samples := []rtmetrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/gc/heap/allocs:bytes"}}
	value := func(i int) uint64 {
		if samples[i].Value.Kind() == rtmetrics.KindUint64 {
			return samples[i].Value.Uint64()
		}
		return 0
	}
	tick := time.NewTicker(t.Interval)
	defer tick.Stop()
	last := -1
	idle := idleTracker{threshold: t.IdleAlloc, after: int(t.IdleAfter / t.Interval),
		minGap: int(t.IdleMinGap / t.Interval)}
	for {
		rtmetrics.Read(samples)
		if p := gcPercentFor(value(0), t); p != last {
			debug.SetGCPercent(p)
			last = p
		}
		if idle.fellIdle(value(1)) {
			debug.FreeOSMemory()
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// idleTracker tells when a server falls idle, from its cumulative
// allocation sampled once per interval.
type idleTracker struct {
	threshold uint64 // 0: never
	after     int    // idle intervals in a row that make a report, at least one
	minGap    int    // intervals between two idle reports, at least
	prev      uint64 // cumulative allocation at the last sample
	started   bool
	busy      bool // allocated at least threshold since the last report
	idleFor   int  // idle intervals in a row
	since     int  // intervals since the last report
}

// fellIdle records a sample and reports whether this interval completes
// the first run of after idle intervals since a busy one, minGap
// intervals or more after the last report.
func (t *idleTracker) fellIdle(allocs uint64) bool {
	delta := allocs - t.prev
	first := !t.started
	t.prev, t.started = allocs, true
	t.since++
	if t.threshold == 0 || first {
		t.since = t.minGap // the gap is between two reports, not from the start
		return false
	}
	if delta >= t.threshold {
		t.busy, t.idleFor = true, 0
		return false
	}
	t.idleFor++
	if t.busy && t.idleFor >= max(t.after, 1) && t.since >= t.minGap {
		t.busy, t.since = false, 0
		return true
	}
	return false
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
