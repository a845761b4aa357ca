package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// start is an arbitrary, non-round origin for ManualClocks.
var start = time.Date(2024, 3, 1, 12, 0, 0, 123456789, time.UTC)

const (
	tick    = 100 * time.Millisecond
	waitMax = 10 * time.Second // real-time bound when waiting on goroutines
)

// waitFor polls cond until it holds or waitMax passes.
func waitFor(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, waitMax, time.Millisecond, msg)
}

// recv receives from ch or fails after waitMax.
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitMax):
		t.Fatal("timed out waiting for a value")
		panic("unreachable")
	}
}

// empty asserts nothing is ready on ch.
func empty[T any](t testing.TB, ch <-chan T) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected value %v", v)
	default:
	}
}

// checkInvariants verifies that buckets and entries agree.
func checkInvariants(t testing.TB, tr *Tracker) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for b, set := range tr.buckets {
		require.NotEmpty(t, set, "empty bucket %v kept", b)
		for id := range set {
			e := tr.sessions[id]
			require.NotNil(t, e, "bucket %v holds untracked %d", b, id)
			require.False(t, e.expiring, "bucket %v holds expiring %d", b, id)
			require.Equal(t, b, e.bucket, "session %d", id)
			n++
		}
	}
	live := 0
	for _, e := range tr.sessions {
		if !e.expiring {
			live++
		}
	}
	require.Equal(t, live, n, "live sessions vs bucket members")
}
