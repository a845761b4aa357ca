package session

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// SessionInfo describes one tracked session, for admin output.
type SessionInfo struct {
	ID      int64
	Timeout time.Duration
	// Deadline is the time of the bucket the session sits in: it expires
	// once the clock reaches Deadline without a touch. Zero if Expiring.
	Deadline time.Time
	// Expiring is true once Expired (or Run) has handed the session out and
	// until Remove or Requeue is called.
	Expiring bool
}

// entry is the state of one tracked session.
type entry struct {
	timeout  time.Duration
	bucket   time.Duration // since epoch; meaningful when !expiring
	expiring bool
}

// maxFreeBuckets bounds the pool of emptied bucket sets kept for reuse.
const maxFreeBuckets = 64

// Tracker is the leader's expiry queue (ZooKeeper's ExpiryQueue and
// SessionTrackerImpl). See the package documentation for the contract.
// All methods are safe for concurrent use.
type Tracker struct {
	tick  time.Duration
	clock Clock
	epoch time.Time // clock.Now() at construction; times are kept as offsets

	mu       sync.Mutex
	sessions map[int64]*entry
	buckets  map[time.Duration]map[int64]struct{}
	free     []map[int64]struct{}

	// Run parks until waitUntil; parked is true while it does. A bucket
	// created earlier than waitUntil sends on wake so Run re-checks.
	parked    bool
	waitUntil time.Duration
	wake      chan struct{}
}

// NewTracker returns an empty Tracker whose buckets are tick apart. It
// panics if tick is not positive.
func NewTracker(tick time.Duration, clock Clock) *Tracker {
	if tick <= 0 {
		panic("session: NewTracker with a non-positive tick")
	}
	return &Tracker{
		tick:     tick,
		clock:    clock,
		epoch:    clock.Now(),
		sessions: make(map[int64]*entry),
		buckets:  make(map[time.Duration]map[int64]struct{}),
		wake:     make(chan struct{}, 1),
	}
}

// roundToNextInterval is ZooKeeper's ExpiryQueue.roundToNextInterval:
// (floor(t/tick)+1)*tick, the first bucket time strictly after t.
func roundToNextInterval(t, tick time.Duration) time.Duration {
	q := t / tick
	if t%tick < 0 {
		q-- // floor for negative t
	}
	return (q + 1) * tick
}

// now returns the clock as an offset from the epoch.
func (t *Tracker) now() time.Duration { return t.clock.Now().Sub(t.epoch) }

// Add starts tracking id with timeout, or updates the timeout of a tracked
// session, and touches it. A session handed out by Expired is tracked again
// as live.
func (t *Tracker) Add(id int64, timeout time.Duration) {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.sessions[id]
	if e == nil {
		e = &entry{expiring: true} // not in a bucket yet
		t.sessions[id] = e
	}
	e.timeout = timeout
	t.queueLocked(id, e, now)
}

// Touch records activity of id, moving it to the bucket after
// now+timeout. It reports false if id is not tracked or has already been
// handed out as expired.
func (t *Tracker) Touch(id int64) bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.sessions[id]
	if e == nil || e.expiring {
		return false
	}
	t.queueLocked(id, e, now)
	return true
}

// Requeue gives id a fresh full timeout and, if it was handed out by
// Expired, makes it live again. The server calls it when the expire
// proposal for id fails. It reports whether id is tracked.
func (t *Tracker) Requeue(id int64) bool {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.sessions[id]
	if e == nil {
		return false
	}
	t.queueLocked(id, e, now)
	return true
}

// Remove stops tracking id, live or expiring. Unknown ids are ignored.
func (t *Tracker) Remove(id int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.sessions[id]
	if e == nil {
		return
	}
	if !e.expiring {
		t.unbucketLocked(id, e.bucket)
	}
	delete(t.sessions, id)
}

// Has reports whether id is tracked (including while expiring).
func (t *Tracker) Has(id int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	_, ok := t.sessions[id]
	return ok
}

// Len returns the number of tracked sessions (including expiring ones).
func (t *Tracker) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// ResetAll gives every tracked session, expiring ones included, a fresh full
// timeout from now. A node calls it when it becomes leader.
func (t *Tracker) ResetAll() {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, e := range t.sessions {
		t.queueLocked(id, e, now)
	}
}

// Expired removes every bucket whose time is at or before now from the
// queue, marks its sessions as expiring and returns their ids, sorted. Each
// id is returned once; it stays tracked (Has is true, Touch is false) until
// Remove or Requeue.
func (t *Tracker) Expired() []int64 {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []int64
	for b := range t.buckets {
		if b <= now {
			ids = t.popBucketLocked(b, ids)
		}
	}
	slices.Sort(ids)
	return ids
}

// NextExpiry returns the time of the earliest bucket, due or not, and false
// if no live session is queued.
func (t *Tracker) NextExpiry() (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	b, ok := t.minBucketLocked()
	if !ok {
		return time.Time{}, false
	}
	return t.epoch.Add(b), true
}

// Sessions lists the tracked sessions sorted by id.
func (t *Tracker) Sessions() []SessionInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]SessionInfo, 0, len(t.sessions))
	for id, e := range t.sessions {
		si := SessionInfo{ID: id, Timeout: e.timeout, Expiring: e.expiring}
		if !e.expiring {
			si.Deadline = t.epoch.Add(e.bucket)
		}
		out = append(out, si)
	}
	slices.SortFunc(out, func(a, b SessionInfo) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// queueLocked puts e in the bucket after now+timeout, moving it only if the
// bucket changes, and clears its expiring mark.
func (t *Tracker) queueLocked(id int64, e *entry, now time.Duration) {
	b := roundToNextInterval(now+e.timeout, t.tick)
	if !e.expiring {
		if e.bucket == b {
			return
		}
		t.unbucketLocked(id, e.bucket)
	}
	set := t.buckets[b]
	if set == nil {
		if n := len(t.free); n > 0 {
			set = t.free[n-1]
			t.free = t.free[:n-1]
		} else {
			set = make(map[int64]struct{})
		}
		t.buckets[b] = set
	}
	set[id] = struct{}{}
	e.bucket = b
	e.expiring = false
	if t.parked && b < t.waitUntil {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
}

// unbucketLocked removes id from bucket b, dropping the bucket if empty.
func (t *Tracker) unbucketLocked(id int64, b time.Duration) {
	set := t.buckets[b]
	delete(set, id)
	if len(set) == 0 {
		delete(t.buckets, b)
		if set != nil && len(t.free) < maxFreeBuckets {
			t.free = append(t.free, set)
		}
	}
}

// popBucketLocked removes bucket b, marks its sessions expiring and appends
// their ids to ids.
func (t *Tracker) popBucketLocked(b time.Duration, ids []int64) []int64 {
	set := t.buckets[b]
	for id := range set {
		t.sessions[id].expiring = true
		ids = append(ids, id)
	}
	delete(t.buckets, b)
	if len(t.free) < maxFreeBuckets {
		clear(set)
		t.free = append(t.free, set)
	}
	return ids
}

// minBucketLocked returns the earliest bucket time. There are at most
// maxTimeout/tick+1 buckets, so a scan is cheap.
func (t *Tracker) minBucketLocked() (time.Duration, bool) {
	var lo time.Duration
	found := false
	for b := range t.buckets {
		if !found || b < lo {
			lo, found = b, true
		}
	}
	return lo, found
}
