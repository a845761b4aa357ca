package recipes

import "github.com/paddockzk/paddock/client"

// WithTestHooks reports each time a waiter starts waiting on a watch, and
// each watch event that wakes it.
func WithTestHooks(wait func(), woke func(client.Event)) Option {
	return func(o *options) { o.waitHook, o.wakeHook = wait, woke }
}
