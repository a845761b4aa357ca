package recipes

import (
	"context"
	"errors"
	"strconv"
	"sync/atomic"

	"github.com/paddockzk/paddock/client"
)

// Semaphore is a counting semaphore with a fixed number of leases:
// Curator's InterProcessSemaphoreV2, kazoo's Semaphore.
//
// Under PATH, PATH/leases holds one ephemeral node per lease in use and
// PATH/locks is a Mutex that acquirers queue on. Only the Mutex holder
// looks at the leases: it takes one if fewer than max are in use, or
// watches PATH/leases until one is returned. So acquirers are served in
// order of arrival, and a returned lease wakes one acquirer, not all.
// PATH's data records max (as kazoo does); an acquirer configured with a
// different max gets ErrLeasesMismatch instead of silently breaking the
// bound.
type Semaphore struct {
	conn    *client.Conn
	dir     string
	max     int
	opts    []Option
	o       options
	leases  lockDir
	checked atomic.Bool
}

// NewSemaphore returns a semaphore of max leases on path. Options:
// WithACL, WithNodeData, WithContainerParents, WithCleanupTimeout.
func NewSemaphore(conn *client.Conn, path string, max int, opts ...Option) *Semaphore {
	dir := cleanPath(path)
	return &Semaphore{
		conn: conn, dir: dir, max: max, opts: opts, o: buildOptions(opts),
		leases: newLockDir(conn, joinPath(dir, "leases"), opts),
	}
}

var leaseRule = waitRule{roles: []role{roleLease}, mine: roleLease}

// Acquire takes a lease, waiting (bounded by ctx) until one is free.
// Release it with Release.
func (s *Semaphore) Acquire(ctx context.Context) (*Lease, error) { return s.acquire(ctx, false) }

// TryAcquire takes a lease if one is free, or returns ErrNoLeases at
// once. It also returns ErrNoLeases while another acquirer is between
// queueing and taking its lease.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Lease, error) { return s.acquire(ctx, true) }

func (s *Semaphore) acquire(ctx context.Context, try bool) (*Lease, error) {
	if err := s.checkMax(ctx); err != nil {
		return nil, err
	}
	// A Mutex value per call: reentrancy must not let two calls in.
	queue := NewMutex(s.conn, joinPath(s.dir, "locks"), s.opts...)
	var err error
	if try {
		_, err = queue.TryLock(ctx)
	} else {
		_, err = queue.Lock(ctx)
	}
	if errors.Is(err, ErrLocked) {
		return nil, ErrNoLeases
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = queue.Unlock(ctx) }()
	return s.take(ctx, try)
}

// take waits, as the queue's head, until fewer than max leases are in use
// and takes one.
func (s *Semaphore) take(ctx context.Context, try bool) (*Lease, error) {
	watch := false
	for {
		kids, ch, err := s.leases.children(ctx, watch)
		if errors.Is(err, errNodeGone) {
			if err := ensurePath(ctx, s.conn, s.leases.dir, s.o.parentMode(), s.o.acl); err != nil {
				return nil, err
			}
			continue
		}
		switch {
		case err != nil:
			return nil, err
		case len(s.o.compat.sortContenders(kids, leaseRule.roles)) < s.max:
			return s.grab(ctx)
		case try:
			return nil, ErrNoLeases
		case ch == nil:
			watch = true // full: list again, with a watch
			continue
		}
		if err := s.leases.wait(ctx, ch); err != nil {
			return nil, err
		}
	}
}

func (s *Semaphore) grab(ctx context.Context) (*Lease, error) {
	node, sweep, err := s.leases.create(ctx, roleLease, s.o.data)
	if err != nil {
		return nil, err
	}
	l, err := s.leases.hold(ctx, node, 0)
	if err != nil {
		s.leases.deleteNode(ctx, node)
		return nil, err
	}
	l.sweep = sweep
	return l, nil
}

// Release returns a lease taken from s.
func (s *Semaphore) Release(ctx context.Context, l *Lease) error {
	if l == nil {
		return ErrNotLocked
	}
	s.leases.release(ctx, l)
	return nil
}

// checkMax records max in PATH's data, or checks it against the recorded
// value (once per Semaphore value).
func (s *Semaphore) checkMax(ctx context.Context) error {
	if s.checked.Load() {
		return nil
	}
	want := []byte(strconv.Itoa(s.max))
	for {
		data, st, err := s.conn.Get(ctx, s.dir)
		switch {
		case errors.Is(err, client.ErrNoNode):
			err = s.createDir(ctx, want)
		case err != nil:
		case len(data) == 0:
			_, err = s.conn.Set(ctx, s.dir, want, st.Version)
		case string(data) != string(want):
			return errorf(ErrLeasesMismatch, "%s records %q leases, this semaphore has %d", s.dir, data, s.max)
		default:
			s.checked.Store(true)
			return nil
		}
		if err != nil && !errors.Is(err, client.ErrNodeExists) && !errors.Is(err, client.ErrBadVersion) &&
			(!retryAfter(ctx, &err)) {
			return err
		}
	}
}

func (s *Semaphore) createDir(ctx context.Context, data []byte) error {
	if err := ensurePath(ctx, s.conn, parentPath(s.dir), s.o.parentMode(), s.o.acl); err != nil {
		return err
	}
	_, _, err := s.conn.Create(ctx, s.dir, data, s.o.parentMode(), s.o.acl)
	return err
}

// SemaphoreMutex is a non-reentrant mutex made of a one-lease Semaphore:
// Curator's InterProcessSemaphoreMutex. Lock on a value that holds it
// returns ErrNotReentrant instead of deadlocking.
type SemaphoreMutex struct {
	s     *Semaphore
	own   owner
	lease *Lease
}

var _ Locker = (*SemaphoreMutex)(nil)

// NewSemaphoreMutex returns a semaphore mutex on path (options as
// NewSemaphore).
func NewSemaphoreMutex(conn *client.Conn, path string, opts ...Option) *SemaphoreMutex {
	return &SemaphoreMutex{s: NewSemaphore(conn, path, 1, opts...), own: newOwner()}
}

// Lock acquires the mutex, waiting until it is free or ctx ends.
func (m *SemaphoreMutex) Lock(ctx context.Context) (*Lease, error) { return m.lock(ctx, false) }

// TryLock acquires the mutex or returns ErrLocked at once.
func (m *SemaphoreMutex) TryLock(ctx context.Context) (*Lease, error) { return m.lock(ctx, true) }

func (m *SemaphoreMutex) lock(ctx context.Context, try bool) (*Lease, error) {
	if err := m.own.enter(ctx); err != nil {
		return nil, err
	}
	defer m.own.leave()
	if m.lease != nil {
		return nil, ErrNotReentrant
	}
	l, err := m.s.acquire(ctx, try)
	if errors.Is(err, ErrNoLeases) {
		err = ErrLocked
	}
	if err != nil {
		return nil, err
	}
	m.lease = l
	return l, nil
}

// Unlock releases the mutex.
func (m *SemaphoreMutex) Unlock(ctx context.Context) error {
	if err := m.own.enter(ctx); err != nil {
		return err
	}
	defer m.own.leave()
	if m.lease == nil {
		return ErrNotLocked
	}
	l := m.lease
	m.lease = nil
	return m.s.Release(ctx, l)
}
