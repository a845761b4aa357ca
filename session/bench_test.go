package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newBenchTracker(clock Clock, n int) *Tracker {
	tr := NewTracker(tick, clock)
	for id := range int64(n) {
		tr.Add(id, 10*time.Second)
	}
	return tr
}

// TestTouchDoesNotAllocate checks the BenchmarkTouch target: touching an
// existing session that stays in its bucket allocates nothing.
func TestTouchDoesNotAllocate(t *testing.T) {
	tr := newBenchTracker(NewManualClock(start), 1000)
	var id int64
	allocs := testing.AllocsPerRun(1000, func() {
		tr.Touch(id % 1000)
		id++
	})
	require.Zero(t, allocs)
}

// BenchmarkTouch touches existing sessions that stay in their bucket.
func BenchmarkTouch(b *testing.B) {
	tr := newBenchTracker(NewManualClock(start), 1000)
	b.ReportAllocs()
	var id int64
	for b.Loop() {
		tr.Touch(id % 1000)
		id++
	}
}

// BenchmarkTouchRealClock uses time.Now, so sessions move bucket each tick.
func BenchmarkTouchRealClock(b *testing.B) {
	tr := newBenchTracker(RealClock{}, 1000)
	b.ReportAllocs()
	var id int64
	for b.Loop() {
		tr.Touch(id % 1000)
		id++
	}
}

func BenchmarkTouchParallel(b *testing.B) {
	tr := newBenchTracker(RealClock{}, 1000)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var id int64
		for pb.Next() {
			tr.Touch(id % 1000)
			id++
		}
	})
}

func BenchmarkBatcherTouch(b *testing.B) {
	bt := NewBatcher(interval, RealClock{}, func([]int64) {})
	b.ReportAllocs()
	var id int64
	for b.Loop() {
		bt.Touch(id % 1000)
		id++
	}
}
