package session

import (
	"sync"
	"time"
)

// Clock is the time source of a Tracker or a Batcher.
//
// Implementations must be monotonic: Now never goes backwards, and the
// difference between two readings is elapsed time, not a wall-clock
// difference. time.Now satisfies this because its results carry a monotonic
// reading (do not strip it with Round(0), UTC, Local or In before handing a
// time to this package). A wall-clock jump must never expire a session.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// After returns a channel that receives the time once at least d has
	// passed, like time.After.
	After(d time.Duration) <-chan time.Time
}

// timerClock is implemented by the clocks of this package. It arms a timer
// for an absolute deadline and returns a function that releases it, so that
// a loop woken early leaves no pending timer behind and so that, with a
// ManualClock, computing the wait and arming the timer is one atomic step.
type timerClock interface {
	timerAt(deadline time.Time) (<-chan time.Time, func())
}

// timerAt arms a timer on c for deadline.
func timerAt(c Clock, deadline time.Time) (<-chan time.Time, func()) {
	if tc, ok := c.(timerClock); ok {
		return tc.timerAt(deadline)
	}
	return c.After(deadline.Sub(c.Now())), func() {}
}

// RealClock is the Clock of package time. Its zero value is ready to use.
type RealClock struct{}

// Now returns time.Now(), which carries a monotonic reading.
func (RealClock) Now() time.Time { return time.Now() }

// After is time.After.
func (RealClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

func (RealClock) timerAt(deadline time.Time) (<-chan time.Time, func()) {
	tm := time.NewTimer(time.Until(deadline))
	return tm.C, func() { tm.Stop() }
}

// ManualClock is a Clock that moves only when Advance is called. It is meant
// for tests and for fake servers. It is safe for concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters map[*manualWaiter]struct{}
}

type manualWaiter struct {
	deadline time.Time
	ch       chan time.Time
}

// NewManualClock returns a ManualClock whose time is start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start, waiters: make(map[*manualWaiter]struct{})}
}

// Now returns the clock's current time.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After returns a channel that receives the clock's time once Advance has
// moved it at least d past the current time. If d <= 0 the channel is ready
// at once.
func (c *ManualClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, _ := c.addLocked(c.now.Add(d))
	return ch
}

func (c *ManualClock) timerAt(deadline time.Time) (<-chan time.Time, func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch, w := c.addLocked(deadline)
	return ch, func() {
		if w == nil {
			return
		}
		c.mu.Lock()
		delete(c.waiters, w)
		c.mu.Unlock()
	}
}

// addLocked registers a waiter for deadline, or fires at once if it has
// passed (then the returned waiter is nil).
func (c *ManualClock) addLocked(deadline time.Time) (<-chan time.Time, *manualWaiter) {
	ch := make(chan time.Time, 1)
	if !deadline.After(c.now) {
		ch <- c.now
		return ch, nil
	}
	w := &manualWaiter{deadline: deadline, ch: ch}
	c.waiters[w] = struct{}{}
	return ch, w
}

// Advance moves the clock forward by d and fires every After channel whose
// deadline is now reached. It panics if d is negative: time is monotonic.
func (c *ManualClock) Advance(d time.Duration) {
	if d < 0 {
		panic("session: ManualClock.Advance with a negative duration")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for w := range c.waiters {
		if !w.deadline.After(c.now) {
			w.ch <- c.now // buffered, capacity 1, sent once
			delete(c.waiters, w)
		}
	}
}

// Waiters returns the number of timers that have not fired yet. Tests use it
// to wait until a goroutine is blocked on the clock before advancing it.
func (c *ManualClock) Waiters() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
