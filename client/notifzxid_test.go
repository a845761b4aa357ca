package client

import (
	"errors"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// SetWatches' relativeZxid is the zxid of the last reply, never of a
// notification (the Java client's ClientCnxn updates lastZxid from replies
// only): one transaction fires several watches with one zxid, and a client
// cut off between two of its notifications would otherwise present that
// zxid, and the server would never fire the watches whose events it lost.
func TestSetWatchesRelativeZxidIgnoresNotifications(t *testing.T) {
	s := newFakeServer(t)
	s.create("/a", nil, ModePersistent)
	s.create("/b", nil, ModePersistent)
	c := connectTest(t, []string{s.addr()})
	ctx := testCtx(t)
	_, _, fired, err := c.GetW(ctx, "/a")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err = c.ChildrenW(ctx, "/b"); err != nil {
		t.Fatal(err)
	}
	replyZxid := c.lastZxid.Load()
	s.latestConn().write(replyRecord{h: wire.ReplyHeader{Xid: wire.XidNotification, Zxid: replyZxid + 1},
		body: &wire.WatcherEvent{Type: wire.EventNodeDeleted, State: wire.StateSyncConnected, Path: "/a"}})
	select {
	case <-fired:
	case <-time.After(10 * time.Second):
		t.Fatal("the notification was not delivered")
	}
	s.dropAll()
	waitFor(t, "setWatches", func() error {
		var n int
		s.with(func(s *fakeServer) { n = len(s.setWatches) })
		if n == 0 {
			return errors.New("none yet")
		}
		return nil
	})
	s.with(func(s *fakeServer) {
		if rel := s.setWatches[0].rel; rel != replyZxid {
			t.Errorf("setWatches relativeZxid %d, want the last reply's %d (the notification's was %d)", rel, replyZxid, replyZxid+1)
		}
	})
}
