package recipes

import (
	"context"

	"github.com/paddockzk/paddock/client"
)

// Locker is what every lock of this package does. Lock waits (bounded by
// ctx) and TryLock does not; both return the Lease of the hold. Unlock
// releases it.
type Locker interface {
	Lock(ctx context.Context) (*Lease, error)
	TryLock(ctx context.Context) (*Lease, error)
	Unlock(ctx context.Context) error
}

// owner serializes the calls on one lock value, with a context.
type owner chan struct{}

func newOwner() owner { return make(owner, 1) }

func (o owner) enter(ctx context.Context) error {
	select { // a free value is entered even with an ended ctx (Unlock)
	case o <- struct{}{}:
		return nil
	default:
	}
	select {
	case o <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (o owner) leave() { <-o }

// Mutex is a fair, reentrant, herd-free lock: Curator's
// InterProcessMutex, kazoo's Lock, go-zookeeper's zk.Lock and the lock of
// ZooKeeper's recipes doc.
//
// Each contender creates an ephemeral sequential node under the lock
// path (created on demand, as a container by default) and holds the lock
// when no contender node sorts before its own. A waiter watches only its
// immediate predecessor, with a getData watch (a predecessor already gone
// leaves no watch behind), so a release wakes exactly one waiter, and the
// lock is granted in the order of arrival. Node names carry a unique id,
// so a create whose reply was lost is found again instead of leaving an
// orphan that would stall the lock or hold it twice.
//
// Reentrancy is per Mutex value: Lock on a value that holds the lock
// returns the same Lease and counts; the node is deleted by the matching
// number of Unlock calls. Goroutines that must exclude each other need
// their own values. Calls on one value are serialized.
//
// If ctx ends while Lock waits, Lock deletes its node and returns
// ctx.Err(). See the package documentation for what a hold guarantees.
type Mutex struct {
	d     lockDir
	own   owner
	lease *Lease
	count int
}

var _ Locker = (*Mutex)(nil)

// NewMutex returns a mutex on path. Options: WithCompat, WithACL,
// WithNodeData, WithContainerParents, WithCleanupTimeout.
func NewMutex(conn *client.Conn, path string, opts ...Option) *Mutex {
	return &Mutex{d: newLockDir(conn, path, opts), own: newOwner()}
}

var mutexRule = waitRule{roles: []role{roleMutex}, mine: roleMutex, blocker: exclusive}

// Lock acquires the lock, waiting until it is free or ctx ends. If this
// value holds the lock already, it returns the current Lease (or the
// Lease's error if it was lost) and increments the hold count.
func (m *Mutex) Lock(ctx context.Context) (*Lease, error) { return m.lock(ctx, false) }

// TryLock acquires the lock if no one holds it or waits for it; otherwise
// it returns ErrLocked at once. ctx bounds the calls to the server.
func (m *Mutex) TryLock(ctx context.Context) (*Lease, error) { return m.lock(ctx, true) }

func (m *Mutex) lock(ctx context.Context, try bool) (*Lease, error) {
	if err := m.own.enter(ctx); err != nil {
		return nil, err
	}
	defer m.own.leave()
	if m.lease != nil {
		return reenter(m.lease, &m.count)
	}
	l, err := m.d.acquire(ctx, mutexRule, m.d.o.data, try)
	if err != nil {
		return nil, err
	}
	m.lease, m.count = l, 1
	return l, nil
}

// reenter counts one more hold of l, unless l was lost.
func reenter(l *Lease, count *int) (*Lease, error) {
	if err := l.Err(); err != nil {
		return nil, err
	}
	*count++
	return l, nil
}

// Unlock releases one hold; the last one deletes the lock node. It
// returns ErrNotLocked if this value holds nothing. Unlock of a lost
// lease succeeds: the node is already gone (check Lease.Err to know).
// If the deletion fails for lack of a connection, it is retried in the
// background until the session ends.
func (m *Mutex) Unlock(ctx context.Context) error {
	if err := m.own.enter(ctx); err != nil {
		return err
	}
	defer m.own.leave()
	if m.lease == nil {
		return ErrNotLocked
	}
	if m.count--; m.count > 0 {
		return nil
	}
	l := m.lease
	m.lease = nil
	m.d.release(ctx, l)
	return nil
}

// Contenders returns the data of the contender nodes (holder first),
// kazoo's contenders().
func (m *Mutex) Contenders(ctx context.Context) ([][]byte, error) {
	return m.d.contenders(ctx, mutexRule.roles)
}
