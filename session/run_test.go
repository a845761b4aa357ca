package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// runTracker starts tr.Run and returns the channel of expire calls and a
// stop function that cancels Run and waits for it to return.
func runTracker(t *testing.T, tr *Tracker, onExpire func([]int64)) (<-chan []int64, func()) {
	t.Helper()
	calls := make(chan []int64, 1000)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		tr.Run(ctx, func(ids []int64) {
			if onExpire != nil {
				onExpire(ids)
			}
			calls <- ids
		})
	}()
	stop := func() {
		cancel()
		recv(t, done)
	}
	t.Cleanup(stop)
	return calls, stop
}

// parked waits until Run is blocked on the clock.
func parked(t *testing.T, c *ManualClock) {
	t.Helper()
	waitFor(t, func() bool { return c.Waiters() == 1 }, "Run did not park")
}

func TestRunExpiresAtTheRightTime(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Second) // bucket 1.1s
	tr.Add(2, 3*time.Second)
	calls, stop := runTracker(t, tr, func(ids []int64) {
		for _, id := range ids {
			tr.Remove(id) // callbacks may use the tracker
		}
	})

	parked(t, c)
	c.Advance(1100*time.Millisecond - 1)
	// Run's timer has not fired, so it is still parked and cannot have
	// called expire.
	require.Equal(t, 1, c.Waiters())
	empty(t, calls)

	c.Advance(1)
	require.Equal(t, []int64{1}, recv(t, calls))
	parked(t, c) // the callback has returned and Run waits for 2
	require.False(t, tr.Has(1))
	require.True(t, tr.Touch(2))

	stop()
	require.Equal(t, 0, c.Waiters(), "Run left a timer behind")
	c.Advance(time.Hour)
	empty(t, calls)
}

func TestRunOneCallPerDueBucket(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(3, 500*time.Millisecond) // 0.6s
	tr.Add(1, 200*time.Millisecond) // 0.3s
	tr.Add(2, 200*time.Millisecond) // 0.3s
	calls, _ := runTracker(t, tr, nil)

	parked(t, c)
	c.Advance(time.Hour) // both buckets are due at once
	require.Equal(t, []int64{1, 2}, recv(t, calls))
	require.Equal(t, []int64{3}, recv(t, calls))
	empty(t, calls)
	require.Empty(t, tr.Expired(), "Run's ids are not handed out twice")
	require.False(t, tr.Touch(1))
}

func TestRunWakesEarlyForEarlierBucket(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, 10*time.Second) // 10.1s
	calls, _ := runTracker(t, tr, nil)
	parked(t, c)

	tr.Add(2, 150*time.Millisecond) // 0.2s, before the bucket Run waits for
	c.Advance(200 * time.Millisecond)
	require.Equal(t, []int64{2}, recv(t, calls))
	parked(t, c)
	empty(t, calls)
	require.True(t, tr.Touch(1))
}

func TestRunEmptyTrackerRechecksEveryTick(t *testing.T) {
	tr, c := newTestTracker()
	calls, stop := runTracker(t, tr, nil)
	for range 5 {
		parked(t, c)
		c.Advance(tick)
	}
	parked(t, c)
	empty(t, calls)

	tr.Add(1, 2*tick) // 0.5s+0.2s -> 0.8s
	c.Advance(3 * tick)
	require.Equal(t, []int64{1}, recv(t, calls))
	stop() // exits while parked on an empty tracker
}

func TestRunReturnsOnCancelledContext(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Nanosecond)
	c.Advance(time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	tr.Run(ctx, func([]int64) { t.Error("expire called after cancel") })
	require.True(t, tr.Touch(1), "cancelled Run must not pop buckets")
}

func TestRunRequeueAfterFailedProposal(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Second)
	calls, _ := runTracker(t, tr, func(ids []int64) {
		for _, id := range ids {
			tr.Requeue(id) // the proposal "failed"
		}
	})
	parked(t, c)
	c.Advance(1100 * time.Millisecond)
	require.Equal(t, []int64{1}, recv(t, calls))
	parked(t, c)
	require.Equal(t, start.Add(2200*time.Millisecond), deadline(t, tr, 1))
	c.Advance(1100 * time.Millisecond)
	require.Equal(t, []int64{1}, recv(t, calls))
}

// TestAbandonedAmongActive: 1000 sessions touched every half tick never
// expire; one abandoned session expires in the bucket after its timeout.
func TestAbandonedAmongActive(t *testing.T) {
	const (
		active    = 1000
		abandoned = int64(active + 1)
		timeout   = time.Second
	)
	tr, c := newTestTracker()
	for id := int64(1); id <= active+1; id++ {
		tr.Add(id, timeout)
	}
	calls, _ := runTracker(t, tr, nil)

	var expiredAt time.Duration
	for step := 1; step <= 60; step++ { // 3s in half ticks
		parked(t, c)
		c.Advance(tick / 2)
		for id := int64(1); id <= active; id++ {
			require.True(t, tr.Touch(id), "active session %d expired", id)
		}
		// Once Run is parked again, any expiry for this step has been
		// delivered.
		parked(t, c)
		select {
		case ids := <-calls:
			require.Equal(t, []int64{abandoned}, ids)
			require.Zero(t, expiredAt, "expired twice")
			expiredAt = c.Now().Sub(start)
		default:
		}
	}
	require.Equal(t, 1100*time.Millisecond, expiredAt)
	require.Equal(t, active+1, tr.Len())
	checkInvariants(t, tr)
}
