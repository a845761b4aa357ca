package session

import (
	"context"
	"slices"
	"sync"
	"time"
)

// Batcher collects the session ids touched on a follower and hands them to
// flush in batches, as ZooKeeper learners report their sessions to the
// leader. All methods are safe for concurrent use.
type Batcher struct {
	interval time.Duration
	clock    Clock
	flush    func(ids []int64)

	mu      sync.Mutex
	pending map[int64]struct{}
	spare   map[int64]struct{}
}

// NewBatcher returns a Batcher that, while Run runs, calls flush every
// interval (typically half a tick) with the ids touched since the previous
// call, sorted and without duplicates, unless there are none. It panics if
// interval is not positive.
func NewBatcher(interval time.Duration, clock Clock, flush func(ids []int64)) *Batcher {
	if interval <= 0 {
		panic("session: NewBatcher with a non-positive interval")
	}
	return &Batcher{
		interval: interval,
		clock:    clock,
		flush:    flush,
		pending:  make(map[int64]struct{}),
		spare:    make(map[int64]struct{}),
	}
}

// Touch adds id to the next batch.
func (b *Batcher) Touch(id int64) {
	b.mu.Lock()
	b.pending[id] = struct{}{}
	b.mu.Unlock()
}

// Len returns the number of distinct ids waiting for the next flush.
func (b *Batcher) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}

// Run flushes every interval until ctx is done. Touches still pending when
// ctx ends are dropped: the leader they were meant for is no longer ours.
// flush is called from Run's goroutine, without the Batcher's lock held.
func (b *Batcher) Run(ctx context.Context) {
	next := b.clock.Now()
	for {
		next = next.Add(b.interval)
		ch, stop := timerAt(b.clock, next)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-ch:
		}
		if late := b.clock.Now().Sub(next); late >= b.interval {
			// If flushing fell behind, skip missed intervals rather than
			// flushing back to back.
			next = next.Add(late / b.interval * b.interval)
		}
		if ids := b.take(); len(ids) > 0 {
			b.flush(ids)
		}
	}
}

// take swaps out the pending set and returns its ids, sorted.
func (b *Batcher) take() []int64 {
	b.mu.Lock()
	if len(b.pending) == 0 {
		b.mu.Unlock()
		return nil
	}
	set := b.pending
	b.pending, b.spare = b.spare, nil
	if b.pending == nil {
		b.pending = make(map[int64]struct{})
	}
	b.mu.Unlock()

	ids := make([]int64, 0, len(set))
	for id := range set {
		ids = append(ids, id)
	}
	clear(set)
	b.mu.Lock()
	b.spare = set
	b.mu.Unlock()
	slices.Sort(ids)
	return ids
}
