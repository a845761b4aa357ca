package client

import (
	"errors"
	"testing"
	"time"
)

// A session made by a read-only server is local to it: once a read-write
// server is found the client asks for a new session instead of presenting
// that one (and being expired), as the Java client does
// (ClientCnxn.primeConnection sends session 0 until it has seen a
// read-write server).
func TestReadOnlySessionIsNotPresentedToAReadWriteServer(t *testing.T) {
	s := newFakeServer(t)
	s.with(func(s *fakeServer) { s.readOnly = true })
	c := connectTest(t, []string{s.addr()}, WithReadOnly(true))
	waitState(t, c, StateConnectedReadOnly)
	roID := c.SessionID()
	s.with(func(s *fakeServer) { s.readOnly = false })
	s.dropAll()
	waitState(t, c, StateConnected)
	if c.SessionID() == roID || c.SessionID() == 0 {
		t.Fatalf("session 0x%x after reconnecting read-write (read-only session 0x%x)", c.SessionID(), roID)
	}
	s.with(func(s *fakeServer) {
		if last := s.connects[len(s.connects)-1]; last.SessionID != 0 {
			t.Errorf("the read-write handshake presented session 0x%x", last.SessionID)
		}
	})
}

// Once a read-write server has been seen, a reconnect to a read-only one
// keeps the session.
func TestSessionSeenReadWriteIsKeptOnAReadOnlyServer(t *testing.T) {
	s := newFakeServer(t)
	c := connectTest(t, []string{s.addr()}, WithReadOnly(true))
	waitState(t, c, StateConnected)
	id := c.SessionID()
	s.with(func(s *fakeServer) { s.readOnly = true })
	s.dropAll()
	waitState(t, c, StateConnectedReadOnly)
	if c.SessionID() != id {
		t.Fatalf("session 0x%x on the read-only server, want 0x%x", c.SessionID(), id)
	}
}

// A session no server has been heard from for 4/3 of its timeout is
// reported expired by the client itself, as the Java client does since
// 3.9.3 (ZOOKEEPER-4508), instead of staying Disconnected for as long as
// the partition lasts: its watches end and its operations fail with
// ErrSessionExpired.
func TestSessionExpiresLocallyWithoutAServer(t *testing.T) {
	s := newFakeServer(t)
	s.with(func(s *fakeServer) { s.timeout = 300 })
	c := connectTest(t, []string{s.addr()})
	waitState(t, c, StateConnected)
	watch, err := c.AddWatch(testCtx(t), "/", false)
	if err != nil {
		t.Fatal(err)
	}
	s.with(func(s *fakeServer) { s.dropConnect = true })
	cut := time.Now()
	s.dropAll()
	waitState(t, c, StateExpired)
	if d := time.Since(cut); d < 300*time.Millisecond {
		t.Fatalf("expired %v after the last server was lost, before the session timeout", d)
	}
	if _, _, err := c.Get(testCtx(t), "/"); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("Get after a local expiry: %v", err)
	}
	for ev := range watch.Events() {
		if ev.Type == EventNone && errors.Is(ev.Err, ErrSessionExpired) {
			return
		}
	}
	t.Fatal("the persistent watch ended without the expiry")
}
