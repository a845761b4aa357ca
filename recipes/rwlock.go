package recipes

import (
	"context"
	"errors"
	"path"

	"github.com/paddockzk/paddock/client"
)

// RWMutex is a fair read/write lock: kazoo's ReadLock/WriteLock, Curator's
// InterProcessReadWriteLock, the shared lock of ZooKeeper's recipes doc.
//
// Readers and writers create ephemeral sequential nodes under the lock
// path, ordered by sequence. A reader holds the lock when no write node
// sorts before its own; a writer when no node at all does. Made with
// NewRWMutex it is herd-free: a waiting reader watches only the last
// write node before it, a waiting writer only its immediate predecessor,
// so a release wakes only waiters that may be able to proceed (a writer's
// release wakes the readers queued right behind it; the last of a group
// of readers wakes the writer behind them). Made with NewNaiveRWMutex
// every waiter watches the children of the lock path instead, so every
// create and delete wakes every waiter: herd-prone, kept for comparison.
//
// Reentrancy is per value, as for Mutex, with Curator's rules: the write
// holder may also take the read lock (downgrade: take RLock, then Unlock;
// the read hold continues without letting a queued writer in), but a
// value holding only the read lock gets ErrUpgrade from Lock, at once,
// rather than a deadlock.
type RWMutex struct {
	d      lockDir
	herd   bool
	own    owner
	w, r   *Lease
	wn, rn int
}

var _ Locker = (*RWMutex)(nil)

// NewRWMutex returns a herd-free read/write lock on path. Options:
// WithCompat, WithACL, WithNodeData, WithContainerParents,
// WithCleanupTimeout.
func NewRWMutex(conn *client.Conn, path string, opts ...Option) *RWMutex {
	return &RWMutex{d: newLockDir(conn, path, opts), own: newOwner()}
}

// NewNaiveRWMutex returns a read/write lock whose waiters all watch the
// lock path's children (herd-prone). It interoperates with RWMutex on the
// same path.
func NewNaiveRWMutex(conn *client.Conn, path string, opts ...Option) *RWMutex {
	rw := NewRWMutex(conn, path, opts...)
	rw.herd = true
	return rw
}

var rwRoles = []role{roleRead, roleWrite}

func (rw *RWMutex) rule(r role) waitRule {
	if r == roleRead {
		return waitRule{roles: rwRoles, mine: roleRead, blocker: shared, herd: rw.herd}
	}
	return waitRule{roles: rwRoles, mine: roleWrite, blocker: exclusive, herd: rw.herd}
}

// RLock acquires the read lock, waiting (bounded by ctx) while a writer
// holds it or waits before this reader.
func (rw *RWMutex) RLock(ctx context.Context) (*Lease, error) { return rw.rlock(ctx, false) }

// TryRLock acquires the read lock or returns ErrLocked at once.
func (rw *RWMutex) TryRLock(ctx context.Context) (*Lease, error) { return rw.rlock(ctx, true) }

func (rw *RWMutex) rlock(ctx context.Context, try bool) (*Lease, error) {
	if err := rw.own.enter(ctx); err != nil {
		return nil, err
	}
	defer rw.own.leave()
	if rw.r != nil {
		return reenter(rw.r, &rw.rn)
	}
	var l *Lease
	var err error
	if rw.w != nil {
		l, err = rw.downgrade(ctx)
	} else {
		l, err = rw.d.acquire(ctx, rw.rule(roleRead), rw.d.o.data, try)
	}
	if err != nil {
		return nil, err
	}
	rw.r, rw.rn = l, 1
	return l, nil
}

// downgrade takes the read lock while holding the write lock. A read node
// created now would sort after writers already waiting, which could then
// enter as soon as the write lock is released, while this value still
// reads. So the read node gets the write node's sequence number: it is
// created with an explicit name (not sequentially) and sorts with the
// write node, before every waiter, in every scheme. Its token is the
// write hold's.
func (rw *RWMutex) downgrade(ctx context.Context) (*Lease, error) {
	if err := rw.w.Err(); err != nil {
		return nil, err
	}
	c := rw.d.o.compat
	wc, ok := c.parseContender(path.Base(rw.w.node), rwRoles)
	if !ok {
		return nil, errors.New("recipes: write node has no sequence")
	}
	id, err := c.newID()
	if err != nil {
		return nil, err
	}
	node := rw.d.child(c.nodePrefix(id, roleRead) + wc.seq)
	for {
		_, _, err = rw.d.conn.Create(ctx, node, rw.d.o.data, client.ModeEphemeral, rw.d.o.acl)
		if err == nil || errors.Is(err, client.ErrNodeExists) { // exists: our lost reply
			break
		}
		if !retryAfter(ctx, &err) {
			rw.d.deleteNode(ctx, node)
			return nil, err
		}
	}
	l, err := rw.d.hold(ctx, node, rw.w.token)
	if err != nil {
		rw.d.deleteNode(ctx, node)
		return nil, err
	}
	return l, nil
}

// RUnlock releases one read hold; the last one deletes the read node.
func (rw *RWMutex) RUnlock(ctx context.Context) error {
	return rw.unlock(ctx, &rw.r, &rw.rn)
}

// Lock acquires the write lock, waiting (bounded by ctx) until no one
// holds or waits for the lock before this writer. It returns ErrUpgrade
// if this value holds only the read lock.
func (rw *RWMutex) Lock(ctx context.Context) (*Lease, error) { return rw.lock(ctx, false) }

// TryLock acquires the write lock or returns ErrLocked (or ErrUpgrade) at
// once.
func (rw *RWMutex) TryLock(ctx context.Context) (*Lease, error) { return rw.lock(ctx, true) }

func (rw *RWMutex) lock(ctx context.Context, try bool) (*Lease, error) {
	if err := rw.own.enter(ctx); err != nil {
		return nil, err
	}
	defer rw.own.leave()
	switch {
	case rw.w != nil:
		return reenter(rw.w, &rw.wn)
	case rw.r != nil:
		return nil, ErrUpgrade
	}
	l, err := rw.d.acquire(ctx, rw.rule(roleWrite), rw.d.o.data, try)
	if err != nil {
		return nil, err
	}
	rw.w, rw.wn = l, 1
	return l, nil
}

// Unlock releases one write hold; the last one deletes the write node.
func (rw *RWMutex) Unlock(ctx context.Context) error {
	return rw.unlock(ctx, &rw.w, &rw.wn)
}

func (rw *RWMutex) unlock(ctx context.Context, lp **Lease, n *int) error {
	if err := rw.own.enter(ctx); err != nil {
		return err
	}
	defer rw.own.leave()
	if *lp == nil {
		return ErrNotLocked
	}
	if *n--; *n > 0 {
		return nil
	}
	l := *lp
	*lp = nil
	rw.d.release(ctx, l)
	return nil
}

// RLocker returns a Locker whose Lock, TryLock and Unlock are RLock,
// TryRLock and RUnlock.
func (rw *RWMutex) RLocker() Locker { return rlocker{rw} }

type rlocker struct{ rw *RWMutex }

func (r rlocker) Lock(ctx context.Context) (*Lease, error)    { return r.rw.RLock(ctx) }
func (r rlocker) TryLock(ctx context.Context) (*Lease, error) { return r.rw.TryRLock(ctx) }
func (r rlocker) Unlock(ctx context.Context) error            { return r.rw.RUnlock(ctx) }
