package client

import (
	"errors"
	"testing"
)

// Connected read-only while the read-write server was unreachable, the
// Conn moves to the read-write server once it answers "isro" with "rw",
// as the Java client's pingRwServer does; it used to stay read-only (every
// write refused) for as long as the read-only server kept the connection.
func TestReadOnlyConnMovesToAReadWriteServer(t *testing.T) {
	rw := newFakeServer(t)
	rw.with(func(s *fakeServer) { s.dropConnect = true })
	ro := newFakeServer(t)
	ro.with(func(s *fakeServer) { s.readOnly = true })
	c := connectTest(t, []string{rw.addr(), ro.addr()}, WithReadOnly(true), WithShuffleHosts(false))
	waitState(t, c, StateConnectedReadOnly)
	waitFor(t, "a probe of the unreachable read-write server", func() error {
		var n int
		rw.with(func(s *fakeServer) { n = s.isroAsked })
		if n == 0 {
			return errNoProbe
		}
		return nil
	})
	if c.State() != StateConnectedReadOnly {
		t.Fatalf("left the read-only server for an unreachable one: %v", c.State())
	}
	rw.with(func(s *fakeServer) { s.dropConnect = false })
	waitState(t, c, StateConnected)
	var ro0 int
	ro.with(func(s *fakeServer) { ro0 = s.isroAsked })
	if ro0 != 0 {
		t.Errorf("the read-only server was asked isro %d times: only the others are probed", ro0)
	}
}

var errNoProbe = errors.New("no isro yet")
