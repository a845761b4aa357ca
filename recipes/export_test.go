package recipes

import (
	"context"

	"github.com/paddockzk/paddock/client"
)

// WithTestHooks reports each time a waiter starts waiting on a watch, and
// each watch event that wakes it.
func WithTestHooks(wait func(), woke func(client.Event)) Option {
	return func(o *options) { o.waitHook, o.wakeHook = wait, woke }
}

// UnfairAcquireAfterLoss runs UnfairMutex's acquisition on path with
// holder id id, as after an attempt whose reply was lost.
func UnfairAcquireAfterLoss(ctx context.Context, conn *client.Conn, path, id string) (*Lease, error) {
	s := newSlot(conn, path, "lock", nil)
	return s.acquireAs(ctx, nil, []byte(id), false, true)
}
