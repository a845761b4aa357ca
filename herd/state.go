package herd

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// runState is the bookkeeping of one run, shared by its contenders: who
// is idle, waiting or holding, the releases and acquisitions, and the
// measurement window.
//
// A contender is idle from its release until it contends again, waiting
// while it asks for the lock, and holding from its acquisition to its
// release. A holder releases after Hold and once no contender is idle, so
// every release finds all the others in line. An exclusive contender
// contends again only after someone else acquired: without that rule the
// releaser of an unfair lock, already awake, would win the lock back
// before the waiters it just woke even answer, and no hand-off would be
// measured.
type runState struct {
	k        int
	hold     time.Duration
	warmup   int
	handoffs int

	// sample is called (outside the lock) by the releaser that starts and
	// the one that ends the measurement window, before it releases.
	sample func() sample

	stop     chan struct{}
	stopOnce sync.Once

	mu      sync.Mutex
	changed chan struct{} // closed and replaced on every state change
	idle    int
	holders int // exclusive holders
	readers int // read holders

	releases       int64 // releases so far
	writeReleases  int64 // releases by exclusive holders
	lastRelease    time.Time
	lastWrite      time.Time
	lastReleaseSeq int64
	lastWriteSeq   int64
	gen            int64 // acquisitions so far
	lastAcquire    time.Time

	// The window: from the release numbered startSeq (its sample start)
	// to the release that took end.
	measuring    bool
	done         bool
	startSeq     int64
	start, end   sample
	latencies    []time.Duration
	acquisitions int
	// perRelease holds the client-side counters at each release in the
	// window (for per-hand-off figures).
	perRelease []wireCount

	errs    []error
	nerrs   int
	counter func() wireCount
	// lost: the run was ended because the server is gone.
	lost bool
}

// maxKeptErrors bounds the errors kept for the report.
const maxKeptErrors = 5

func newRunState(k int, cfg *Config, sample func() sample, counter func() wireCount) *runState {
	return &runState{
		k: k, hold: cfg.Hold, warmup: cfg.Warmup, handoffs: cfg.Handoffs,
		sample: sample, counter: counter,
		stop: make(chan struct{}), changed: make(chan struct{}),
		idle: k, lastAcquire: time.Now(),
	}
}

func (st *runState) halt() { st.stopOnce.Do(func() { close(st.stop) }) }

func (st *runState) stopped() bool {
	select {
	case <-st.stop:
		return true
	default:
		return false
	}
}

// broadcast wakes everyone waiting for a state change; st.mu is held.
func (st *runState) broadcast() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// fail records an error (the run goes on).
func (st *runState) fail(err error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.nerrs++
	if len(st.errs) < maxKeptErrors {
		st.errs = append(st.errs, err)
	}
}

// loseServer records that the server is gone (the runs after this one
// are not started).
func (st *runState) loseServer(err error) {
	st.fail(err)
	st.mu.Lock()
	st.lost = true
	st.mu.Unlock()
}

// ticket is what a contender remembers from its entry into the line.
type ticket struct {
	releases, writeReleases int64
}

// enter: idle → waiting.
func (st *runState) enter() ticket {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.idle--
	st.broadcast()
	return ticket{st.releases, st.writeReleases}
}

// abandon: waiting → idle, after a failed acquisition.
func (st *runState) abandon() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.idle++
	st.broadcast()
}

// acquired: waiting → holding. It checks exclusion, counts a hand-off
// when a release let this contender in (any release for an exclusive
// contender, a writer's for a reader: readers wait only for writers) and
// returns the acquisition's generation.
func (st *runState) acquired(r role, t ticket) int64 {
	now := time.Now()
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.holders > 0 || r == exclusive && st.readers > 0 {
		st.nerrs++
		if len(st.errs) < maxKeptErrors {
			st.errs = append(st.errs, fmt.Errorf("exclusion violated: %d exclusive and %d read holders at an acquisition", st.holders, st.readers))
		}
	}
	if r == exclusive {
		st.holders++
	} else {
		st.readers++
	}
	st.gen++
	st.lastAcquire = now
	if st.measuring {
		st.acquisitions++
		switch {
		case r == exclusive && st.releases > t.releases && st.lastReleaseSeq >= st.startSeq:
			st.latencies = append(st.latencies, now.Sub(st.lastRelease))
		case r == reader && st.writeReleases > t.writeReleases && st.lastWriteSeq >= st.startSeq:
			st.latencies = append(st.latencies, now.Sub(st.lastWrite))
		}
	}
	st.broadcast()
	return st.gen
}

// holdFor keeps the lock for the hold time, then until no contender is
// idle (or the run stops).
func (st *runState) holdFor(since time.Time) {
	if d := time.Until(since.Add(st.hold)); d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-st.stop:
		}
		t.Stop()
	}
	for {
		st.mu.Lock()
		idle, ch := st.idle, st.changed
		st.mu.Unlock()
		if idle == 0 {
			return
		}
		select {
		case <-ch:
		case <-st.stop:
			return
		}
	}
}

// releasing: holding → idle, just before the contender releases. The
// release that starts the window (after the warm-up) or ends it (once
// enough hand-offs were measured) samples the counters first.
func (st *runState) releasing(r role) {
	st.mu.Lock()
	st.releases++
	seq := st.releases
	var starts, ends bool
	switch {
	case st.done || st.stopped():
	case !st.measuring && seq > int64(st.warmup):
		starts = true
	case st.measuring && len(st.latencies) >= st.handoffs:
		ends = true
		st.done = true
	}
	st.mu.Unlock()

	var s sample
	if starts || ends {
		s = st.sample()
	}

	st.mu.Lock()
	defer st.mu.Unlock()
	now := time.Now()
	switch {
	case starts:
		st.measuring, st.startSeq, st.start = true, seq, s
	case ends:
		st.measuring, st.end = false, s
	}
	if (st.measuring || ends) && st.counter != nil {
		st.perRelease = append(st.perRelease, st.counter())
	}
	if r == exclusive {
		st.holders--
		st.writeReleases++
		st.lastWrite, st.lastWriteSeq = now, seq
	} else {
		st.readers--
	}
	st.lastRelease, st.lastReleaseSeq = now, seq
	st.idle++
	st.broadcast()
	if ends {
		st.halt()
	}
}

// waitOthers waits until someone acquired after generation g.
func (st *runState) waitOthers(g int64) {
	for {
		st.mu.Lock()
		cur, ch := st.gen, st.changed
		st.mu.Unlock()
		if cur > g {
			return
		}
		select {
		case <-ch:
		case <-st.stop:
			return
		}
	}
}

// sinceAcquire is the time since the last acquisition (for the stall
// watchdog).
func (st *runState) sinceAcquire() time.Duration {
	st.mu.Lock()
	defer st.mu.Unlock()
	return time.Since(st.lastAcquire)
}

// progress returns the hand-offs measured so far.
func (st *runState) progress() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.latencies)
}

// contend is one contender's loop.
func (st *runState) contend(ctx context.Context, c *contender) {
	for !st.stopped() {
		if err := c.prepare(ctx); err != nil {
			if st.stopped() || ctx.Err() != nil {
				return
			}
			st.fail(fmt.Errorf("contender %d: %w", c.id, err))
			pause(ctx, 50*time.Millisecond)
			continue
		}
		t := st.enter()
		if err := c.acquire(ctx); err != nil {
			st.abandon()
			if st.stopped() || ctx.Err() != nil {
				return
			}
			st.fail(fmt.Errorf("contender %d: acquire: %w", c.id, err))
			pause(ctx, 50*time.Millisecond)
			continue
		}
		since := time.Now()
		g := st.acquired(c.role, t)
		st.holdFor(since)
		st.releasing(c.role)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := c.release(rctx)
		cancel()
		if err != nil && !errors.Is(err, context.Canceled) {
			st.fail(fmt.Errorf("contender %d: release: %w", c.id, err))
		}
		if c.role == exclusive {
			st.waitOthers(g)
		}
	}
}

func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
