package client

import (
	"context"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// A watching call whose reply armed its watch reports that reply even if
// its context ended at the same moment: it used to return the context's
// error about half the time (select picks among ready cases at random),
// leaving a watch registered that its caller never got (and that every
// reconnect restored).
func TestCanceledCallKeepsTheWatchItsReplyArmed(t *testing.T) {
	c := &Conn{loopDone: make(chan struct{})}
	c.watches = newWatchRegistry(c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := 0; i < 200; i++ {
		r := newRequest(wire.OpGetData, nil, nil)
		c.watches.addOneShot(watchData, "/n", "", make(chan Event, 1), r)
		r.complete(1, nil)
		if err := c.wait(ctx, r); err != nil {
			t.Fatalf("round %d: the watch was armed, but the call returned %v", i, err)
		}
	}
	// A call canceled before its reply still gives up, and arms nothing.
	r := newRequest(wire.OpGetData, nil, nil)
	if err := c.wait(ctx, r); err != context.Canceled {
		t.Fatalf("unanswered call: %v", err)
	}
	c.watches.addOneShot(watchData, "/late", "", make(chan Event, 1), r)
	if n := len(c.watches.oneShot[watchData]["/late"]); n != 0 {
		t.Fatalf("a reply after the caller gave up armed %d watches", n)
	}
}
