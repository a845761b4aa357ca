package recipes

import (
	"context"
	"errors"
	"path"
	"strings"

	"github.com/paddockzk/paddock/client"
)

// lockDir is a directory of contender nodes: ephemeral sequential
// children, ordered by sequence, each named after a unique id so that its
// creator can find it after a connection loss (Curator's "protected"
// mode, the GUID of ZooKeeper's recipes doc).
type lockDir struct {
	conn *client.Conn
	dir  string
	o    options
}

func newLockDir(conn *client.Conn, dir string, opts []Option) lockDir {
	return lockDir{conn: conn, dir: cleanPath(dir), o: buildOptions(opts)}
}

// cleanPath returns a recipe's path as given: it is not normalized, so
// an invalid one ("locks", "/locks/", "/a/../b", "") fails every call with
// an error wrapping client.ErrBadArguments, as Curator's
// PathUtils.validatePath and kazoo refuse it, instead of naming another
// node than the caller wrote.
func cleanPath(p string) string { return p }

func (d *lockDir) child(name string) string { return joinPath(d.dir, name) }

func joinPath(dir, name string) string {
	switch dir {
	case "/":
		return "/" + name
	case "":
		return name // relative: invalid, as dir is
	}
	return dir + "/" + name
}

// waitRule says which contender a node must wait for.
type waitRule struct {
	roles []role // the roles that count as contenders
	mine  role
	// blocker returns the index of the contender to wait for, or -1 when
	// the node at index me holds the lock.
	blocker func(cs []contender, me int) int
	// herd makes the waiter watch the directory's children instead of
	// its blocker (every change wakes every waiter).
	herd bool
}

// exclusive: wait for the immediate predecessor.
func exclusive(cs []contender, me int) int { return me - 1 }

// shared: wait for the last write node before me.
func shared(cs []contender, me int) int {
	for i := me - 1; i >= 0; i-- {
		if cs[i].role == roleWrite {
			return i
		}
	}
	return -1
}

// errNodeGone: our contender node vanished while we waited (the session
// was replaced, or someone deleted it); the acquisition starts over.
var errNodeGone = errors.New("recipes: contender node vanished")

// acquire creates a contender node with data and waits until rule says it
// holds the lock (try: fails with ErrLocked instead of waiting). On any
// failure its node is deleted.
func (d *lockDir) acquire(ctx context.Context, rule waitRule, data []byte, try bool) (*Lease, error) {
	for {
		node, sweep, err := d.create(ctx, rule.mine, data)
		if err != nil {
			return nil, err
		}
		l, err := d.await(ctx, node, rule, try)
		if errors.Is(err, errNodeGone) {
			continue
		}
		if err != nil {
			d.deleteNode(ctx, node)
			if sweep != "" {
				d.deletePrefix(ctx, sweep)
			}
			return nil, err
		}
		l.sweep = sweep
		return l, nil
	}
}

// create creates our ephemeral sequential node, creating missing parents.
// After a connection loss it looks for the node by its unique id before
// trying again, so that a lost reply never leaves an orphan. It also
// returns, when a reply was lost, the id prefix of the nodes to sweep
// away with ours: a lost create may still be applied later.
func (d *lockDir) create(ctx context.Context, r role, data []byte) (node, sweep string, err error) {
	id, err := d.o.compat.newID()
	if err != nil {
		return "", "", err
	}
	prefix := d.o.compat.nodePrefix(id, r)
	for {
		p, _, err := d.conn.Create(ctx, d.child(prefix), data, client.ModeEphemeralSequential, d.o.acl)
		switch {
		case err == nil:
			return p, sweep, nil
		case errors.Is(err, client.ErrNoNode):
			err = ensurePath(ctx, d.conn, d.dir, d.o.parentMode(), d.o.acl)
		case isRetryable(err):
			sweep = d.o.compat.idPrefix(id)
			if p, err = d.findSure(ctx, prefix); p != "" {
				return p, sweep, nil
			}
		}
		if ctx.Err() != nil {
			d.deletePrefix(ctx, d.o.compat.idPrefix(id))
			return "", "", ctx.Err()
		}
		if err != nil && !isRetryable(err) {
			return "", "", err
		}
	}
}

// findSure is find, retried until it gives an answer: creating again
// before knowing whether the lost create happened would leave a
// duplicate.
func (d *lockDir) findSure(ctx context.Context, prefix string) (string, error) {
	for {
		p, err := d.find(ctx, prefix)
		if !retryAfter(ctx, &err) {
			return p, err
		}
	}
}

// find returns our node (the child whose name starts with prefix), or ""
// if there is none. It syncs first, so that a create applied by the
// leader before the connection broke is visible.
func (d *lockDir) find(ctx context.Context, prefix string) (string, error) {
	if err := d.conn.Sync(ctx, d.dir); err != nil {
		return "", err
	}
	kids, _, err := d.conn.Children(ctx, d.dir)
	if err != nil {
		if errors.Is(err, client.ErrNoNode) {
			err = nil
		}
		return "", err
	}
	for _, k := range kids {
		if strings.HasPrefix(k, prefix) {
			return d.child(k), nil
		}
	}
	return "", nil
}

// await waits until node holds the lock.
func (d *lockDir) await(ctx context.Context, node string, rule waitRule, try bool) (*Lease, error) {
	name := path.Base(node)
	for {
		kids, watch, err := d.children(ctx, rule.herd && !try)
		if err != nil {
			return nil, err
		}
		cs := d.o.compat.sortContenders(kids, rule.roles)
		me := indexOf(cs, name)
		if me < 0 {
			return nil, errNodeGone
		}
		cs, me = d.dropOrphans(ctx, cs, me)
		b := rule.blocker(cs, me)
		switch {
		case b < 0:
			return d.hold(ctx, node, 0)
		case try:
			return nil, ErrLocked
		case watch == nil:
			watch, err = d.watchNode(ctx, d.child(cs[b].name))
		}
		if err == nil && watch != nil {
			err = d.wait(ctx, watch)
		}
		if err != nil {
			return nil, err
		}
	}
}

// dropOrphans deletes the other nodes carrying our node's id: a create
// retried after a lost reply can leave a second node when the first
// create is applied only after the retry looked for it (the server was
// still processing it). Such a node is ours, so it blocks no one but it
// would stall the lock once we release ours. It returns the contenders
// without them.
func (d *lockDir) dropOrphans(ctx context.Context, cs []contender, me int) ([]contender, int) {
	id := d.o.compat.idOf(cs[me])
	mine := cs[me].name
	var out []contender
	for _, c := range cs {
		if c.name != mine && strings.HasPrefix(c.name, id) {
			d.deleteNode(ctx, d.child(c.name))
			continue
		}
		out = append(out, c)
	}
	return out, indexOf(out, mine)
}

// children lists the directory, with a child watch when herd is set.
// Connection losses are retried (bounded by ctx).
func (d *lockDir) children(ctx context.Context, herd bool) ([]string, <-chan client.Event, error) {
	for {
		var kids []string
		var ch <-chan client.Event
		var err error
		if herd {
			kids, _, ch, err = d.conn.ChildrenW(ctx, d.dir)
		} else {
			kids, _, err = d.conn.Children(ctx, d.dir)
		}
		if errors.Is(err, client.ErrNoNode) {
			return nil, nil, errNodeGone
		}
		if !retryAfter(ctx, &err) {
			return kids, ch, err
		}
	}
}

// watchNode sets a data watch on a blocker (getData, not exists, so that
// a blocker already gone leaves no watch behind). It returns a nil
// channel when the blocker is already gone.
func (d *lockDir) watchNode(ctx context.Context, p string) (<-chan client.Event, error) {
	for {
		_, _, ch, err := d.conn.GetW(ctx, p)
		switch {
		case err == nil:
			return ch, nil
		case errors.Is(err, client.ErrNoNode):
			return nil, nil
		case !retryAfter(ctx, &err):
			return nil, err
		}
	}
}

// wait waits for a watch event; the caller then looks again.
func (d *lockDir) wait(ctx context.Context, watch <-chan client.Event) error {
	d.o.waiting()
	select {
	case ev := <-watch:
		if ev.Err != nil {
			return ev.Err
		}
		d.o.woke(ev)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// hold turns our node into a Lease: it watches the node (which also
// proves it still exists) and reads its czxid. token 0 means the czxid.
func (d *lockDir) hold(ctx context.Context, node string, token int64) (*Lease, error) {
	for {
		_, st, ch, err := d.conn.GetW(ctx, node)
		switch {
		case err == nil:
			if token == 0 {
				token = st.Czxid
			}
			guard := []client.Op{client.CheckOp(node, -1)}
			return newLease(d.conn, node, st.Czxid, token, guard, ch), nil
		case errors.Is(err, client.ErrNoNode):
			return nil, errNodeGone
		case !retryAfter(ctx, &err):
			return nil, err
		}
	}
}

// release ends a lease of this directory and deletes its node (and any
// late copy of it).
func (d *lockDir) release(ctx context.Context, l *Lease) {
	l.stop()
	l.unwatch(ctx, d.o.cleanupTimeout)
	d.deleteNode(ctx, l.node)
	if l.sweep != "" {
		d.deletePrefix(ctx, l.sweep)
	}
}

// deleteNode deletes node, with a fresh deadline if ctx has ended, and in
// the background if the connection is lost meanwhile.
func (d *lockDir) deleteNode(ctx context.Context, node string) {
	cleanup(ctx, d.o.cleanupTimeout, func(ctx context.Context) error {
		err := d.conn.Delete(ctx, node, -1)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		}
		return err
	})
}

// deletePrefix deletes every child whose name starts with prefix: the
// nodes an interrupted create may have left.
func (d *lockDir) deletePrefix(ctx context.Context, prefix string) {
	cleanup(ctx, d.o.cleanupTimeout, func(ctx context.Context) error {
		for {
			p, err := d.find(ctx, prefix)
			if p == "" || err != nil {
				return err
			}
			if err := d.conn.Delete(ctx, p, -1); err != nil && !errors.Is(err, client.ErrNoNode) {
				return err
			}
		}
	})
}

// contenders returns the data of the contender nodes, in order.
func (d *lockDir) contenders(ctx context.Context, roles []role) ([][]byte, error) {
	kids, _, err := d.conn.Children(ctx, d.dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, c := range d.o.compat.sortContenders(kids, roles) {
		data, _, err := d.conn.Get(ctx, d.child(c.name))
		switch {
		case err == nil:
			out = append(out, data)
		case !errors.Is(err, client.ErrNoNode):
			return nil, err
		}
	}
	return out, nil
}
