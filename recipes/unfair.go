package recipes

import (
	"bytes"
	"context"
	"errors"

	"github.com/paddockzk/paddock/client"
)

// slot is the core of the unfair (herd-prone) recipes: one ephemeral node
// at a fixed path that every contender tries to create, and that every
// loser watches. The parent's data version counts acquisitions: each
// acquisition is multi(create node, setData parent = holder id), so the
// holder can fence with check(parent, its version), which fails as soon
// as anyone acquires after it, even though the node's path is reused.
type slot struct {
	conn *client.Conn
	dir  string
	node string
	o    options
}

func newSlot(conn *client.Conn, dir, name string, opts []Option) slot {
	d := cleanPath(dir)
	return slot{conn: conn, dir: d, node: joinPath(d, name), o: buildOptions(opts)}
}

// acquire races to create the node; losers watch it (all of them: this
// is the herd) and race again when it goes.
func (s *slot) acquire(ctx context.Context, data []byte, try bool) (*Lease, error) {
	id, err := s.o.compat.newID()
	if err != nil {
		return nil, err
	}
	return s.acquireAs(ctx, data, []byte(id), try, false)
}

// acquireAs is acquire with the holder id chosen; lost says an attempt's
// reply was already lost.
func (s *slot) acquireAs(ctx context.Context, data, id []byte, try, lost bool) (*Lease, error) {
	for {
		l, err := s.try(ctx, data, id)
		if errors.Is(err, client.ErrNodeExists) && lost {
			// An attempt whose reply was lost, found not applied, may
			// still have been applied since (a write in flight through
			// another server): then the node is ours, not one to wait on.
			if l, err = s.recover(ctx, id); err == nil {
				return l, nil
			}
			if errors.Is(err, errNotOurs) {
				err = client.ErrNodeExists
			}
		}
		switch {
		case err == nil:
			return l, nil
		case errors.Is(err, client.ErrNodeExists) && try:
			return nil, ErrLocked
		case errors.Is(err, client.ErrNodeExists):
			err = s.waitGone(ctx)
		case errors.Is(err, client.ErrNoNode):
			err = ensurePath(ctx, s.conn, s.dir, client.ModePersistent, s.o.acl)
		case errors.Is(err, errNotOurs):
			lost, err = true, nil
		}
		if ctx.Err() != nil {
			s.deleteIfOurs(ctx, id)
			return nil, ctx.Err()
		}
		if err != nil && !isRetryable(err) {
			return nil, err
		}
	}
}

// try makes one attempt; after a lost reply it finds out whether the
// attempt succeeded from the holder id in the parent's data.
func (s *slot) try(ctx context.Context, data, id []byte) (*Lease, error) {
	ops := []client.Op{
		client.CreateOp(s.node, data, client.ModeEphemeral, s.o.acl),
		client.SetDataOp(s.dir, id, -1),
	}
	res, err := s.conn.Multi(ctx, ops...)
	if isRetryable(err) {
		return s.recover(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	return s.hold(ctx, res[1].Stat.Version)
}

// recover finds out whether a multi whose reply was lost was applied,
// retrying until it knows (trying again before knowing could make us
// wait for our own node).
func (s *slot) recover(ctx context.Context, id []byte) (*Lease, error) {
	for {
		data, st, err := s.holderID(ctx)
		switch {
		case err == nil && bytes.Equal(data, id):
			return s.hold(ctx, st.Version)
		case err == nil:
			return nil, errNotOurs
		case !retryAfter(ctx, &err):
			return nil, err
		}
	}
}

// errNotOurs: an attempt whose reply was lost did not succeed; try again.
var errNotOurs = errors.New("recipes: attempt not applied")

// holderID reads the parent's data (the last holder's id), after a sync.
func (s *slot) holderID(ctx context.Context) ([]byte, *client.Stat, error) {
	if err := s.conn.Sync(ctx, s.dir); err != nil {
		return nil, nil, err
	}
	return s.conn.Get(ctx, s.dir)
}

// hold watches the node and makes the Lease; version is the parent's
// version our acquisition set.
func (s *slot) hold(ctx context.Context, version int32) (*Lease, error) {
	for {
		_, st, ch, err := s.conn.GetW(ctx, s.node)
		if err == nil {
			guard := []client.Op{client.CheckOp(s.node, -1), client.CheckOp(s.dir, version)}
			return newLease(s.conn, s.node, st.Czxid, st.Czxid, guard, ch), nil
		}
		if !retryAfter(ctx, &err) {
			return nil, err
		}
	}
}

// waitGone waits until the node is deleted (or is already gone).
func (s *slot) waitGone(ctx context.Context) error {
	_, _, ch, err := s.conn.GetW(ctx, s.node)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	s.o.waiting()
	select {
	case ev := <-ch:
		if ev.Err != nil {
			return ev.Err
		}
		s.o.woke(ev)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release deletes the node if the lease still holds it.
func (s *slot) release(ctx context.Context, l *Lease) {
	l.stop()
	l.unwatch(ctx, s.o.cleanupTimeout)
	cleanup(ctx, s.o.cleanupTimeout, func(ctx context.Context) error {
		return ignoreGone(s.conn.Multi(ctx, append(l.Guard(), client.DeleteOp(s.node, -1))...))
	})
}

// deleteIfOurs deletes the node after an interrupted attempt, if the
// attempt succeeded.
func (s *slot) deleteIfOurs(ctx context.Context, id []byte) {
	cleanup(ctx, s.o.cleanupTimeout, func(ctx context.Context) error {
		data, st, err := s.conn.Get(ctx, s.dir)
		if err != nil || !bytes.Equal(data, id) {
			return ignoreGone(nil, err)
		}
		ops := []client.Op{client.CheckOp(s.dir, st.Version), client.DeleteOp(s.node, -1)}
		return ignoreGone(s.conn.Multi(ctx, ops...))
	})
}

// ignoreGone drops the errors meaning "not there any more".
func ignoreGone(_ []client.OpResult, err error) error {
	if errors.Is(err, client.ErrNoNode) || errors.Is(err, client.ErrBadVersion) {
		return nil
	}
	return err
}

// UnfairMutex is the simplest ZooKeeper lock: every contender tries to
// create one ephemeral node, PATH/lock, and every loser watches it. When
// it is deleted, all the losers wake and race again: herd-prone by design
// (each release sends a notification to every waiter, and all of them
// come back with a create), and unfair (the winner of a race is
// arbitrary; a waiter can starve). It is here for comparison with Mutex,
// and because it is what many hand-written locks do. It never needs more
// than one node, though.
//
// The parent's data holds the id of the last holder, and its version
// counts acquisitions: do not write to PATH yourself. PATH is created as
// a persistent node. Reentrancy is per value, as for Mutex.
type UnfairMutex struct {
	s     slot
	own   owner
	lease *Lease
	count int
}

var _ Locker = (*UnfairMutex)(nil)

// NewUnfairMutex returns an unfair mutex on path. Options: WithACL,
// WithNodeData, WithCleanupTimeout.
func NewUnfairMutex(conn *client.Conn, path string, opts ...Option) *UnfairMutex {
	return &UnfairMutex{s: newSlot(conn, path, "lock", opts), own: newOwner()}
}

// Lock acquires the lock, waiting until it is free or ctx ends.
func (m *UnfairMutex) Lock(ctx context.Context) (*Lease, error) { return m.lock(ctx, false) }

// TryLock acquires the lock if it is free, or returns ErrLocked.
func (m *UnfairMutex) TryLock(ctx context.Context) (*Lease, error) { return m.lock(ctx, true) }

func (m *UnfairMutex) lock(ctx context.Context, try bool) (*Lease, error) {
	if err := m.own.enter(ctx); err != nil {
		return nil, err
	}
	defer m.own.leave()
	if m.lease != nil {
		return reenter(m.lease, &m.count)
	}
	l, err := m.s.acquire(ctx, m.s.o.data, try)
	if err != nil {
		return nil, err
	}
	m.lease, m.count = l, 1
	return l, nil
}

// Unlock releases one hold; the last one deletes the node (only if this
// value still holds it).
func (m *UnfairMutex) Unlock(ctx context.Context) error {
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
	m.s.release(ctx, l)
	return nil
}
