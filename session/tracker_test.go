package session

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func newTestTracker() (*Tracker, *ManualClock) {
	c := NewManualClock(start)
	return NewTracker(tick, c), c
}

func deadline(t *testing.T, tr *Tracker, id int64) time.Time {
	t.Helper()
	for _, s := range tr.Sessions() {
		if s.ID == id {
			return s.Deadline
		}
	}
	t.Fatalf("session %d not tracked", id)
	return time.Time{}
}

func TestRoundToNextInterval(t *testing.T) {
	for _, c := range []struct{ in, want time.Duration }{
		{0, 100}, {1, 100}, {99, 100}, {100, 200}, {101, 200}, {250, 300},
		{-1, 0}, {-100, 0}, {-101, -100},
	} {
		require.Equal(t, c.want, roundToNextInterval(c.in, 100), "round(%d)", c.in)
	}
}

func TestNewTrackerRejectsBadTick(t *testing.T) {
	require.Panics(t, func() { NewTracker(0, NewManualClock(start)) })
}

func TestBucketMath(t *testing.T) {
	offsets := []time.Duration{0, 1, 37 * time.Millisecond, tick - 1, tick, 250 * time.Millisecond}
	timeouts := []time.Duration{2 * tick, 250 * time.Millisecond, time.Second, time.Second + 1, 20 * tick}
	for _, off := range offsets {
		for _, to := range timeouts {
			tr, c := newTestTracker()
			c.Advance(off)
			touched := c.Now()
			tr.Add(7, to)

			dl := deadline(t, tr, 7)
			require.Equal(t, start.Add(roundToNextInterval(off+to, tick)), dl)
			// Expires within (T, T+tick] of the touch.
			require.Greater(t, dl.Sub(touched), to, "off=%v T=%v", off, to)
			require.LessOrEqual(t, dl.Sub(touched), to+tick, "off=%v T=%v", off, to)
			next, ok := tr.NextExpiry()
			require.True(t, ok)
			require.Equal(t, dl, next)

			c.Advance(dl.Sub(c.Now()) - 1)
			require.Empty(t, tr.Expired(), "off=%v T=%v: due early", off, to)
			c.Advance(1)
			require.Equal(t, []int64{7}, tr.Expired(), "off=%v T=%v", off, to)
			checkInvariants(t, tr)
		}
	}
}

func TestTouchMovesBucket(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Second) // bucket 1.1s
	require.Equal(t, start.Add(1100*time.Millisecond), deadline(t, tr, 1))

	c.Advance(50 * time.Millisecond) // 1.05s rounds to the same bucket
	require.True(t, tr.Touch(1))
	require.Equal(t, start.Add(1100*time.Millisecond), deadline(t, tr, 1))
	require.Len(t, tr.buckets, 1)

	c.Advance(60 * time.Millisecond) // 1.11s: next bucket
	require.True(t, tr.Touch(1))
	require.Equal(t, start.Add(1200*time.Millisecond), deadline(t, tr, 1))
	require.Len(t, tr.buckets, 1, "old bucket must be dropped")
	checkInvariants(t, tr)

	c.Advance(1100*time.Millisecond - c.Now().Sub(start))
	require.Empty(t, tr.Expired(), "moved session expired from its old bucket")
	c.Advance(100 * time.Millisecond)
	require.Equal(t, []int64{1}, tr.Expired())

	require.False(t, tr.Touch(99), "unknown session")
}

func TestRemove(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Second)
	tr.Add(2, time.Second)
	tr.Remove(1)
	tr.Remove(42) // unknown: ignored
	require.False(t, tr.Has(1))
	require.True(t, tr.Has(2))
	require.Equal(t, 1, tr.Len())
	require.False(t, tr.Touch(1))
	checkInvariants(t, tr)

	c.Advance(2 * time.Second)
	require.Equal(t, []int64{2}, tr.Expired())
	tr.Remove(2) // removing an expiring session
	require.Equal(t, 0, tr.Len())
	_, ok := tr.NextExpiry()
	require.False(t, ok)
	require.Empty(t, tr.Sessions())
	checkInvariants(t, tr)
}

func TestExpiredReturnsEachIDOnce(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(30, 500*time.Millisecond) // 0.6s
	tr.Add(10, 200*time.Millisecond) // 0.3s
	tr.Add(20, 200*time.Millisecond) // 0.3s
	tr.Add(40, 5*time.Second)        // 5.1s

	require.Empty(t, tr.Expired())
	c.Advance(300 * time.Millisecond)
	require.Equal(t, []int64{10, 20}, tr.Expired())
	require.Empty(t, tr.Expired())

	c.Advance(time.Second) // past 0.6s; 10 and 20 are not handed out again
	require.Equal(t, []int64{30}, tr.Expired())
	require.Empty(t, tr.Expired())

	for _, id := range []int64{10, 20, 30} {
		require.False(t, tr.Touch(id), "touch of expiring %d", id)
		require.True(t, tr.Has(id), "expiring %d stays until Remove", id)
	}
	require.True(t, tr.Touch(40))
	require.Equal(t, 4, tr.Len())

	ss := tr.Sessions()
	require.Len(t, ss, 4)
	require.Equal(t, SessionInfo{ID: 10, Timeout: 200 * time.Millisecond, Expiring: true}, ss[0])
	require.Equal(t, int64(40), ss[3].ID)
	require.False(t, ss[3].Expiring)
	require.Equal(t, start.Add(6400*time.Millisecond), ss[3].Deadline) // touched at 1.3s
	checkInvariants(t, tr)
}

func TestExpiredSeveralBucketsSorted(t *testing.T) {
	tr, c := newTestTracker()
	for id := int64(100); id > 0; id-- {
		tr.Add(id, time.Duration(id)*10*time.Millisecond)
	}
	c.Advance(time.Hour)
	ids := tr.Expired()
	require.Len(t, ids, 100)
	require.IsIncreasing(t, ids)
	require.Empty(t, tr.buckets)
}

func TestRequeue(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Second)
	c.Advance(1100 * time.Millisecond)
	require.Equal(t, []int64{1}, tr.Expired())
	require.False(t, tr.Touch(1))

	c.Advance(30 * time.Millisecond)
	require.True(t, tr.Requeue(1)) // the expire proposal failed
	require.Equal(t, start.Add(2200*time.Millisecond), deadline(t, tr, 1))
	require.True(t, tr.Touch(1))
	require.False(t, tr.Requeue(2))
	checkInvariants(t, tr)

	c.Advance(2200*time.Millisecond - c.Now().Sub(start) - 1)
	require.Empty(t, tr.Expired())
	c.Advance(1)
	require.Equal(t, []int64{1}, tr.Expired(), "requeued session is handed out again")
}

func TestAddExisting(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, 5*time.Second)
	tr.Add(1, time.Second) // timeout update
	require.Equal(t, 1, tr.Len())
	require.Equal(t, start.Add(1100*time.Millisecond), deadline(t, tr, 1))
	require.Equal(t, time.Second, tr.Sessions()[0].Timeout)
	checkInvariants(t, tr)

	c.Advance(2 * time.Second)
	require.Equal(t, []int64{1}, tr.Expired())
	tr.Add(1, time.Second) // re-added: live again
	require.True(t, tr.Touch(1))
	checkInvariants(t, tr)
}

func TestResetAllGivesFreshFullTimeout(t *testing.T) {
	tr, c := newTestTracker()
	tr.Add(1, time.Second)
	tr.Add(2, 2*time.Second)
	c.Advance(900 * time.Millisecond)
	tr.Add(3, 4*time.Second)
	c.Advance(1100 * time.Millisecond) // 2.0s: 1 is due, 2 is not
	require.Equal(t, []int64{1}, tr.Expired())

	// 2 is one tick from its deadline; the new leader must not expire it.
	tr.ResetAll()
	now := c.Now().Sub(start)
	for _, s := range tr.Sessions() {
		require.False(t, s.Expiring, "session %d", s.ID)
		require.Equal(t, start.Add(roundToNextInterval(now+s.Timeout, tick)), s.Deadline, "session %d", s.ID)
	}
	require.True(t, tr.Touch(1))
	checkInvariants(t, tr)

	c.Advance(time.Second) // before any fresh deadline
	require.Empty(t, tr.Expired())
	c.Advance(100 * time.Millisecond)
	require.Equal(t, []int64{1}, tr.Expired())
}

func TestNextExpiry(t *testing.T) {
	tr, c := newTestTracker()
	_, ok := tr.NextExpiry()
	require.False(t, ok)
	tr.Add(1, 3*time.Second)
	tr.Add(2, time.Second)
	next, ok := tr.NextExpiry()
	require.True(t, ok)
	require.Equal(t, start.Add(1100*time.Millisecond), next)

	c.Advance(500 * time.Millisecond)
	tr.Touch(2)
	next, _ = tr.NextExpiry()
	require.Equal(t, start.Add(1600*time.Millisecond), next)
}

// TestConcurrentUse hammers every method from several goroutines while the
// clock moves and Run expires; run it with -race.
func TestConcurrentUse(t *testing.T) {
	tr, c := newTestTracker()
	ctx := t.Context()
	var expired sync.Map
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		tr.Run(ctx, func(ids []int64) {
			for _, id := range ids {
				if _, dup := expired.LoadOrStore(id, true); dup {
					t.Errorf("session %d handed out twice", id)
				}
				tr.Remove(id)
			}
		})
	}()

	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 1))
			for i := range 600 {
				id := int64(g*1_000_000 + i)
				tr.Add(id, time.Duration(1+r.IntN(20))*tick)
				tr.Touch(int64(g*1_000_000 + r.IntN(i+1)))
				switch r.IntN(10) {
				case 0:
					tr.Remove(id)
				case 1:
					tr.Requeue(id)
				case 2:
					if i%50 == 0 {
						_ = tr.Sessions()
					}
				case 3:
					tr.NextExpiry()
				case 4:
					tr.Expired() // never returns anything Run also returns
				}
			}
		})
	}
	wg.Go(func() {
		for range 500 {
			c.Advance(tick / 7)
			if tr.Len() == 0 {
				tr.ResetAll()
			}
		}
	})
	wg.Wait()
	checkInvariants(t, tr)
}
