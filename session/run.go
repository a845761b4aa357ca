package session

import (
	"context"
	"slices"
)

// Run is the expirer. It waits on the Clock until the earliest bucket is
// due, then removes that bucket, marks its sessions expiring and calls
// expire with their ids (sorted), once per due bucket, oldest first. With
// nothing tracked it waits one tick and re-checks; a bucket created earlier
// than the one it waits for (by Add, Touch, Requeue or ResetAll) makes it
// re-check at once. Since buckets are a tick apart it expires at most once
// per tick. Run returns when ctx is done.
//
// expire is called without the Tracker's lock held, so it may call any
// Tracker method: typically it proposes the expiry and calls Remove once it
// is applied, or Requeue if the proposal fails. Only the leader runs Run.
func (t *Tracker) Run(ctx context.Context, expire func(ids []int64)) {
	defer t.unpark()
	for {
		if ctx.Err() != nil {
			return
		}
		now := t.now()
		t.mu.Lock()
		b, ok := t.minBucketLocked()
		if ok && b <= now {
			ids := t.popBucketLocked(b, nil)
			t.mu.Unlock()
			slices.Sort(ids)
			expire(ids)
			continue
		}
		if !ok {
			b = now + t.tick
		}
		t.parked, t.waitUntil = true, b
		t.mu.Unlock()

		ch, stop := timerAt(t.clock, t.epoch.Add(b))
		select {
		case <-ctx.Done():
		case <-ch:
		case <-t.wake:
		}
		stop()
		t.unpark()
	}
}

func (t *Tracker) unpark() {
	t.mu.Lock()
	t.parked = false
	t.mu.Unlock()
}

// Settled reports whether Run has expired every session due by the
// clock's now and is waiting for a later bucket (tests with a manual
// clock: an Advance is complete once it is settled).
func (t *Tracker) Settled() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.parked && t.waitUntil > t.now()
}
