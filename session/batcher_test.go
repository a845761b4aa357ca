package session

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const interval = tick / 2

func runBatcher(t *testing.T) (*Batcher, *ManualClock, <-chan []int64, func()) {
	t.Helper()
	c := NewManualClock(start)
	flushes := make(chan []int64, 100)
	b := NewBatcher(interval, c, func(ids []int64) { flushes <- ids })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.Run(ctx)
	}()
	stop := func() {
		cancel()
		recv(t, done)
	}
	t.Cleanup(stop)
	return b, c, flushes, stop
}

func TestBatcherBatchesAndDedups(t *testing.T) {
	b, c, flushes, stop := runBatcher(t)
	parked(t, c)
	for _, id := range []int64{3, 1, 3, 2, 1, 3} {
		b.Touch(id)
	}
	require.Equal(t, 3, b.Len())
	c.Advance(interval - 1)
	require.Equal(t, 1, c.Waiters())
	empty(t, flushes)
	c.Advance(1)
	require.Equal(t, []int64{1, 2, 3}, recv(t, flushes))
	require.Equal(t, 0, b.Len())

	// Nothing touched: no flush. Waiters is 0 from the moment the timer
	// fires until Run re-arms it, so 1 means the empty interval is done.
	parked(t, c)
	c.Advance(interval)
	parked(t, c)
	empty(t, flushes)

	b.Touch(7)
	c.Advance(interval)
	require.Equal(t, []int64{7}, recv(t, flushes))

	stop()
	require.Equal(t, 0, c.Waiters())
	b.Touch(8)
	c.Advance(time.Hour)
	empty(t, flushes)
}

func TestBatcherSkipsMissedIntervals(t *testing.T) {
	b, c, flushes, _ := runBatcher(t)
	parked(t, c)
	b.Touch(1)
	c.Advance(10*interval + interval/2)
	require.Equal(t, []int64{1}, recv(t, flushes))
	parked(t, c)
	// The next flush is on the interval grid, not ten times back to back.
	b.Touch(2)
	c.Advance(interval/2 - 1)
	require.Equal(t, 1, c.Waiters())
	empty(t, flushes)
	c.Advance(1)
	require.Equal(t, []int64{2}, recv(t, flushes))
}

func TestBatcherConcurrentTouches(t *testing.T) {
	b, c, flushes, stop := runBatcher(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				b.Touch(int64(g*1000 + i%100))
			}
		})
	}
	wg.Go(func() {
		for range 50 {
			c.Advance(interval)
		}
	})
	wg.Wait()
	stop()

	seen := map[int64]bool{}
	for len(flushes) > 0 {
		ids := <-flushes
		require.IsIncreasing(t, ids)
		for _, id := range ids {
			seen[id] = true
		}
	}
	// Every id was flushed or is still pending (dropped at stop).
	b.mu.Lock()
	for id := range b.pending {
		seen[id] = true
	}
	b.mu.Unlock()
	require.Len(t, seen, 800)
}

func TestNewBatcherRejectsBadInterval(t *testing.T) {
	require.Panics(t, func() { NewBatcher(0, RealClock{}, func([]int64) {}) })
}
