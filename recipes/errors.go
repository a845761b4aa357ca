package recipes

import (
	"errors"
	"fmt"
)

// Errors returned by the recipes. Errors from the server are returned as
// the client's codes (client.ErrNoNode, client.ErrSessionExpired, ...),
// possibly wrapped, so errors.Is works on both.
var (
	// ErrLocked is returned by TryLock (and TryRLock) when another holder
	// or an earlier waiter is ahead.
	ErrLocked = errors.New("recipes: locked by another holder")
	// ErrNotLocked is returned by Unlock, RUnlock and Resign when this
	// value holds nothing.
	ErrNotLocked = errors.New("recipes: not locked")
	// ErrLockLost is the error of a Lease whose node was deleted or whose
	// session ended while it was held, and of a fenced write whose guard
	// failed. It wraps the cause (client.ErrSessionExpired,
	// client.ErrClosed, ErrNodeDeleted, or the failed multi).
	ErrLockLost = errors.New("recipes: lock lost")
	// ErrNodeDeleted is the cause of a loss when the client saw the lock
	// node's deletion: by someone else, or by the server expiring the
	// session before the client heard of the expiry.
	ErrNodeDeleted = errors.New("recipes: lock node deleted")
	// ErrReleased is a Lease's Err after it was released normally.
	ErrReleased = errors.New("recipes: lease released")
	// ErrUpgrade is returned by RWMutex.Lock when the value holds only the
	// read lock: a read→write upgrade could deadlock, so it is refused.
	ErrUpgrade = errors.New("recipes: read→write upgrade refused")
	// ErrNotReentrant is returned by SemaphoreMutex.Lock when the value
	// already holds the lock (waiting would deadlock).
	ErrNotReentrant = errors.New("recipes: lock already held by this value (not reentrant)")
	// ErrNoLeases is returned by Semaphore.TryAcquire when no lease is free.
	ErrNoLeases = errors.New("recipes: no lease available")
	// ErrLeasesMismatch is returned by Semaphore.Acquire when the
	// semaphore node records a different number of leases.
	ErrLeasesMismatch = errors.New("recipes: semaphore max leases mismatch")
	// ErrNoLeader is returned by Leader when nobody leads.
	ErrNoLeader = errors.New("recipes: no leader")
	// ErrQueueEmpty is returned by Queue.TryTake on an empty queue.
	ErrQueueEmpty = errors.New("recipes: queue empty")
	// ErrBadCounter is returned when a counter node holds data that is not
	// a counter in the selected encoding, or a value does not fit it.
	ErrBadCounter = errors.New("recipes: bad counter value")
)

// errorf wraps sentinel with a formatted detail.
func errorf(sentinel error, format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{sentinel}, args...)...)
}
