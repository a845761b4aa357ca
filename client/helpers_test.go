package client

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"testing"
	"time"
)

// waitTimeout bounds every wait in the tests.
const waitTimeout = 10 * time.Second

// waitFor polls cond until it returns nil or the deadline passes.
func waitFor(t testing.TB, what string, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s: %v", what, err)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not a wait for a condition
	}
}

// recv returns the next event on ch, failing the test after waitTimeout.
func recv[T any](t testing.TB, ch <-chan T) T {
	t.Helper()
	select {
	case v, ok := <-ch:
		if !ok {
			t.Fatalf("channel closed")
		}
		return v
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for an event")
	}
	var zero T
	return zero
}

// expectClosed checks that ch is closed (after draining nothing).
func expectClosed[T any](t testing.TB, ch <-chan T) {
	t.Helper()
	select {
	case v, ok := <-ch:
		if ok {
			t.Fatalf("expected closed channel, got %v", v)
		}
	case <-time.After(waitTimeout):
		t.Fatalf("timed out waiting for the channel to close")
	}
}

// expectNoEvent checks that ch has nothing ready now.
func expectNoEvent[T any](t testing.TB, ch <-chan T) {
	t.Helper()
	select {
	case v, ok := <-ch:
		t.Fatalf("unexpected event %v (open %v)", v, ok)
	default:
	}
}

// waitState polls until c reaches st.
func waitState(t testing.TB, c *Conn, st State) {
	t.Helper()
	waitFor(t, "state "+st.String(), func() error {
		if s := c.State(); s != st {
			return fmt.Errorf("state is %v", s)
		}
		return nil
	})
}

// drainStates returns every StateEvent ready on c.Events() now.
func drainStates(c *Conn) []State {
	var out []State
	for {
		select {
		case ev, ok := <-c.Events():
			if !ok {
				return out
			}
			out = append(out, ev.State)
		default:
			return out
		}
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func testLogger(t testing.TB) *slog.Logger {
	if os.Getenv("ZK_CLIENT_DEBUG") == "" {
		return slog.New(slog.DiscardHandler)
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// connectTest connects to addrs with test-friendly defaults and closes the
// Conn at the end of the test.
func connectTest(t testing.TB, addrs []string, opts ...Option) *Conn {
	t.Helper()
	opts = append([]Option{
		WithLogger(testLogger(t)),
		WithReconnectBackoff(5*time.Millisecond, 50*time.Millisecond),
	}, opts...)
	c, err := Connect(testCtx(t), addrs, opts...)
	if err != nil {
		t.Fatalf("Connect(%v): %v", addrs, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// isLoopDone reports whether c's connection loop has stopped.
func isLoopDone(c *Conn) bool {
	select {
	case <-c.loopDone:
		return true
	default:
		return false
	}
}
