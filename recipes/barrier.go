package recipes

import (
	"context"
	"errors"
	"slices"

	"github.com/paddockzk/paddock/client"
)

// Barrier blocks waiters while its node exists: Curator's
// DistributedBarrier, kazoo's Barrier, the barrier of ZooKeeper's recipes
// doc. Every waiter watches the node, and all are released at once when
// it is removed (which is the point of a barrier).
type Barrier struct {
	conn *client.Conn
	path string
	o    options
}

// NewBarrier returns a barrier on path. Options: WithACL.
func NewBarrier(conn *client.Conn, path string, opts ...Option) *Barrier {
	return &Barrier{conn: conn, path: cleanPath(path), o: buildOptions(opts)}
}

// Set raises the barrier (creates its persistent node and missing
// parents). Setting a raised barrier is not an error.
func (b *Barrier) Set(ctx context.Context) error {
	return ensurePath(ctx, b.conn, b.path, client.ModePersistent, b.o.acl)
}

// Remove lowers the barrier, releasing every waiter. Removing a lowered
// barrier is not an error.
func (b *Barrier) Remove(ctx context.Context) error {
	err := b.conn.Delete(ctx, b.path, -1)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	return err
}

// Wait blocks until the barrier is lowered or ctx ends; it returns at
// once if the barrier is not raised.
func (b *Barrier) Wait(ctx context.Context) error {
	for {
		_, ok, ch, err := b.conn.ExistsW(ctx, b.path)
		switch {
		case err != nil:
			if !retryAfter(ctx, &err) {
				return err
			}
			continue
		case !ok:
			return nil // the exists watch fires on a later Set, harmlessly
		}
		if err := waitEvent(ctx, ch); err != nil {
			return err
		}
	}
}

// waitEvent waits for a watch event; an event ending the watch because
// the session ended is returned as its error.
func waitEvent(ctx context.Context, ch <-chan client.Event) error {
	select {
	case ev := <-ch:
		return ev.Err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// DoubleBarrier makes a group of count participants enter a computation
// together and leave it together: Curator's DistributedDoubleBarrier,
// kazoo's DoubleBarrier, the double barrier of ZooKeeper's recipes doc.
//
// Enter creates the participant's ephemeral node under PATH and waits
// until count participants are present; the one that sees the count
// reached creates PATH/ready, which releases everyone waiting in Enter.
// Leave deletes the participant's node and waits until all have left,
// following the recipes doc: the lowest participant waits for the
// highest, every other one deletes its node and waits for the lowest, so
// that no more than one waiter watches each node. The last one out
// deletes PATH/ready. A path serves one round at a time: start the next
// round after everyone has left, or on another path.
type DoubleBarrier struct {
	conn  *client.Conn
	path  string
	count int
	o     options
	node  string
}

// readyNode is the child whose existence lets participants in.
const readyNode = "ready"

// NewDoubleBarrier returns a double barrier of count participants on
// path. Options: WithACL, WithNodeData, WithContainerParents.
func NewDoubleBarrier(conn *client.Conn, path string, count int, opts ...Option) *DoubleBarrier {
	return &DoubleBarrier{conn: conn, path: cleanPath(path), count: count, o: buildOptions(opts)}
}

// Enter joins the group and waits (bounded by ctx) until count
// participants have joined. If ctx ends first, the node is deleted.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	ready := joinPath(b.path, readyNode)
	_, ok, ch, err := b.conn.ExistsW(ctx, ready)
	if err != nil {
		return err
	}
	if err := b.join(ctx); err != nil {
		return err
	}
	if !ok {
		err = b.awaitReady(ctx, ready, ch)
	}
	if err != nil {
		b.abandon(ctx)
	}
	return err
}

func (b *DoubleBarrier) join(ctx context.Context) error {
	id, err := Paddock.newID()
	if err != nil {
		return err
	}
	node := joinPath(b.path, id)
	for {
		_, _, err = b.conn.Create(ctx, node, b.o.data, client.ModeEphemeral, b.o.acl)
		if errors.Is(err, client.ErrNoNode) {
			if err := ensurePath(ctx, b.conn, b.path, b.o.parentMode(), b.o.acl); err != nil {
				return err
			}
			continue
		}
		if err == nil || errors.Is(err, client.ErrNodeExists) { // exists: our lost reply
			b.node = node
			return nil
		}
		if !retryAfter(ctx, &err) {
			return err
		}
	}
}

func (b *DoubleBarrier) awaitReady(ctx context.Context, ready string, ch <-chan client.Event) error {
	members, err := b.members(ctx)
	if err != nil {
		return err
	}
	if len(members) >= b.count {
		_, _, err := b.conn.Create(ctx, ready, nil, client.ModePersistent, b.o.acl)
		if err == nil || errors.Is(err, client.ErrNodeExists) {
			return nil
		}
		return err
	}
	return waitEvent(ctx, ch)
}

// members returns the participants' node names, sorted.
func (b *DoubleBarrier) members(ctx context.Context) ([]string, error) {
	kids, _, err := b.conn.Children(ctx, b.path)
	if err != nil {
		return nil, err
	}
	kids = slices.DeleteFunc(kids, func(k string) bool { return k == readyNode })
	slices.Sort(kids)
	return kids, nil
}

// Leave leaves the group and waits (bounded by ctx) until every
// participant has left.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	if b.node == "" {
		return ErrNotLocked
	}
	me := b.node[len(b.path)+1:]
	for {
		members, err := b.members(ctx)
		if err != nil {
			return err
		}
		if done, err := b.leaveStep(ctx, members, me); done || err != nil {
			return err
		}
	}
}

// leaveStep is one round of the recipes doc's leave loop; it reports
// whether leaving is complete.
func (b *DoubleBarrier) leaveStep(ctx context.Context, members []string, me string) (bool, error) {
	mine := slices.Contains(members, me)
	switch {
	case len(members) == 0:
		b.finish(ctx)
		return true, nil
	case mine && len(members) == 1:
		if err := b.deleteOwn(ctx); err != nil {
			return false, err
		}
		b.finish(ctx)
		return true, nil
	case mine && members[0] == me:
		return false, b.waitGone(ctx, members[len(members)-1])
	case mine:
		if err := b.deleteOwn(ctx); err != nil {
			return false, err
		}
	}
	return false, b.waitGone(ctx, members[0])
}

func (b *DoubleBarrier) deleteOwn(ctx context.Context) error {
	err := b.conn.Delete(ctx, b.node, -1)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	return err
}

// waitGone waits until a participant's node is deleted.
func (b *DoubleBarrier) waitGone(ctx context.Context, name string) error {
	_, _, ch, err := b.conn.GetW(ctx, joinPath(b.path, name))
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	return waitEvent(ctx, ch)
}

// finish is run by the last one out: it deletes the ready node.
func (b *DoubleBarrier) finish(ctx context.Context) {
	b.node = ""
	err := b.conn.Delete(ctx, joinPath(b.path, readyNode), -1)
	_ = err // NoNode: someone else did it.
}

// abandon deletes the node after a failed Enter.
func (b *DoubleBarrier) abandon(ctx context.Context) {
	node := b.node
	b.node = ""
	cleanup(ctx, b.o.cleanupTimeout, func(ctx context.Context) error {
		err := b.conn.Delete(ctx, node, -1)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		}
		return err
	})
}
