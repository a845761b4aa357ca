package recipes

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/paddockzk/paddock/client"
)

// Queue is a FIFO queue: the queue of ZooKeeper's recipes doc, Curator's
// SimpleDistributedQueue. Put creates a persistent sequential node
// PATH/qn-<seq> holding the item; Take removes the node with the lowest
// sequence (getData, then delete at that version; if another consumer
// deleted it first, the next one is tried). Items are taken in the order
// their Puts completed, each exactly once.
//
// Delivery is at most once: an item is removed before the consumer
// processes it, and is lost if the consumer fails then. Consumers that
// wait on an empty queue all watch PATH's children, so every Put wakes
// every idle consumer (herd-prone, as in the recipes doc; fine for a few
// consumers).
type Queue struct {
	conn *client.Conn
	path string
	o    options
}

const queuePrefix = "qn-"

// NewQueue returns a queue on path (a persistent node, created on
// demand). Options: WithACL.
func NewQueue(conn *client.Conn, path string, opts ...Option) *Queue {
	return &Queue{conn: conn, path: cleanPath(path), o: buildOptions(opts)}
}

// Put appends an item. If the connection is lost before the reply, the
// item may have been added; Put then returns client.ErrConnectionLoss
// (retrying could add it twice).
func (q *Queue) Put(ctx context.Context, data []byte) error {
	for {
		_, _, err := q.conn.Create(ctx, joinPath(q.path, queuePrefix), data, client.ModePersistentSequential, q.o.acl)
		if !errors.Is(err, client.ErrNoNode) {
			return err
		}
		if err := ensurePath(ctx, q.conn, q.path, client.ModePersistent, q.o.acl); err != nil {
			return err
		}
	}
}

// Take removes and returns the oldest item, waiting (bounded by ctx)
// while the queue is empty.
func (q *Queue) Take(ctx context.Context) ([]byte, error) { return q.take(ctx, true) }

// TryTake removes and returns the oldest item, or returns ErrQueueEmpty.
func (q *Queue) TryTake(ctx context.Context) ([]byte, error) { return q.take(ctx, false) }

func (q *Queue) take(ctx context.Context, wait bool) ([]byte, error) {
	for {
		items, ch, err := q.list(ctx, wait)
		if err != nil {
			return nil, err
		}
		for _, name := range items {
			data, err := q.remove(ctx, joinPath(q.path, name))
			if err == nil {
				return data, nil
			}
			if !errors.Is(err, client.ErrNoNode) && !errors.Is(err, client.ErrBadVersion) {
				return nil, err
			}
		}
		if len(items) > 0 {
			continue // all taken by others meanwhile: look again
		}
		if !wait {
			return nil, ErrQueueEmpty
		}
		if err := waitEvent(ctx, ch); err != nil {
			return nil, err
		}
	}
}

// list returns the items in order; with watch, an empty list comes with a
// child watch (a missing queue node is created so that it can be watched).
func (q *Queue) list(ctx context.Context, watch bool) ([]string, <-chan client.Event, error) {
	for {
		kids, _, err := q.conn.Children(ctx, q.path)
		if err == nil && len(kids) == 0 && watch {
			var ch <-chan client.Event
			kids, _, ch, err = q.conn.ChildrenW(ctx, q.path)
			if err == nil && len(kids) == 0 {
				return nil, ch, nil
			}
		}
		switch {
		case err == nil:
			return sortItems(kids), nil, nil
		case errors.Is(err, client.ErrNoNode) && !watch:
			return nil, nil, nil
		case errors.Is(err, client.ErrNoNode):
			err = ensurePath(ctx, q.conn, q.path, client.ModePersistent, q.o.acl)
		}
		if err != nil {
			return nil, nil, err
		}
	}
}

func sortItems(kids []string) []string {
	items := slices.DeleteFunc(kids, func(k string) bool { return !strings.HasPrefix(k, queuePrefix) })
	slices.Sort(items) // same prefix, fixed-width sequence
	return items
}

// remove reads an item and deletes it at the version read.
func (q *Queue) remove(ctx context.Context, p string) ([]byte, error) {
	data, st, err := q.conn.Get(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := q.conn.Delete(ctx, p, st.Version); err != nil {
		return nil, err
	}
	return data, nil
}

// Len returns the number of items.
func (q *Queue) Len(ctx context.Context) (int, error) {
	kids, _, err := q.conn.Children(ctx, q.path)
	if errors.Is(err, client.ErrNoNode) {
		return 0, nil
	}
	return len(sortItems(kids)), err
}
