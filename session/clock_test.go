package session

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestManualClockAdvanceFiresAfter(t *testing.T) {
	c := NewManualClock(start)
	require.Equal(t, start, c.Now())

	ch := c.After(10 * time.Second)
	require.Equal(t, 1, c.Waiters())
	c.Advance(10*time.Second - time.Nanosecond)
	empty(t, ch)
	require.Equal(t, 1, c.Waiters())

	c.Advance(time.Nanosecond)
	require.Equal(t, start.Add(10*time.Second), recv(t, ch))
	require.Equal(t, 0, c.Waiters())
	require.Equal(t, start.Add(10*time.Second), c.Now())

	// A big step fires several timers at once.
	a, b := c.After(time.Second), c.After(2*time.Second)
	c.Advance(time.Hour)
	recv(t, a)
	recv(t, b)
}

func TestManualClockAfterNonPositiveIsReady(t *testing.T) {
	c := NewManualClock(start)
	require.Equal(t, start, recv(t, c.After(0)))
	require.Equal(t, start, recv(t, c.After(-time.Second)))
	require.Equal(t, 0, c.Waiters())
}

func TestManualClockAdvanceNegativePanics(t *testing.T) {
	c := NewManualClock(start)
	require.Panics(t, func() { c.Advance(-1) })
	c.Advance(0)
	require.Equal(t, start, c.Now())
}

func TestManualClockTimerAtStop(t *testing.T) {
	c := NewManualClock(start)
	ch, stop := c.timerAt(start.Add(time.Second))
	require.Equal(t, 1, c.Waiters())
	stop()
	require.Equal(t, 0, c.Waiters())
	c.Advance(time.Minute)
	empty(t, ch)

	// A past deadline fires at once; stop is then a no-op.
	ch, stop = c.timerAt(start)
	recv(t, ch)
	stop()
}

func TestManualClockConcurrent(t *testing.T) {
	c := NewManualClock(start)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				ch := c.After(time.Millisecond)
				c.Advance(time.Millisecond)
				recv(t, ch)
				_ = c.Now()
			}
		})
	}
	wg.Wait()
	require.Equal(t, start.Add(800*time.Millisecond), c.Now())
}

func TestRealClock(t *testing.T) {
	var c Clock = RealClock{}
	a := c.Now()
	recv(t, c.After(time.Millisecond))
	require.GreaterOrEqual(t, c.Now().Sub(a), time.Millisecond)

	ch, stop := timerAt(c, c.Now().Add(time.Millisecond))
	recv(t, ch)
	stop()
	_, stop = timerAt(c, c.Now().Add(time.Hour))
	stop()
}

func TestTimerAtFallback(t *testing.T) {
	c := NewManualClock(start)
	// Embedding hides ManualClock's timerAt, exercising the After fallback.
	var pc Clock = struct{ Clock }{c}
	_, ok := pc.(timerClock)
	require.False(t, ok)
	ch, stop := timerAt(pc, start.Add(time.Second))
	defer stop()
	c.Advance(time.Second)
	recv(t, ch)
}
