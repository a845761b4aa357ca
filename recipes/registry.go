package recipes

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/paddockzk/paddock/client"
)

// Registry is a service registry, in the manner of Curator's
// ServiceDiscovery: each instance of a service registers an ephemeral
// node BASE/<service>/<id> holding its data (an address, a JSON
// document...), which disappears with its session; clients list the
// instances or follow them with Watch.
type Registry struct {
	conn *client.Conn
	base string
	o    options
}

// Instance is one registered instance of a service.
type Instance struct {
	ID   string
	Data []byte
}

// NewRegistry returns a registry rooted at base. Options: WithACL,
// WithContainerParents, WithCleanupTimeout.
func NewRegistry(conn *client.Conn, base string, opts ...Option) *Registry {
	return &Registry{conn: conn, base: cleanPath(base), o: buildOptions(opts)}
}

func (r *Registry) servicePath(service string) string { return joinPath(r.base, service) }

// Registration is a registered instance. It lasts until Deregister or the
// end of its session (after which the registry no longer lists it: a
// process that outlives its session must register again).
type Registration struct {
	r     *Registry
	lease *Lease
}

// Register registers instance id of service with data. It fails with
// client.ErrNodeExists if another session has registered the same id.
func (r *Registry) Register(ctx context.Context, service, id string, data []byte) (*Registration, error) {
	d := lockDir{conn: r.conn, dir: r.servicePath(service), o: r.o}
	node := d.child(id)
	for {
		_, _, err := r.conn.Create(ctx, node, data, client.ModeEphemeral, r.o.acl)
		switch {
		case errors.Is(err, client.ErrNoNode):
			err = ensurePath(ctx, r.conn, d.dir, r.o.parentMode(), r.o.acl)
		case errors.Is(err, client.ErrNodeExists):
			err = r.ours(ctx, node)
			if err == nil {
				return r.hold(ctx, &d, node)
			}
		case err == nil:
			return r.hold(ctx, &d, node)
		}
		if err != nil && (!retryAfter(ctx, &err)) {
			return nil, err
		}
	}
}

// ours reports (nil) whether node is this session's: a create whose reply
// was lost.
func (r *Registry) ours(ctx context.Context, node string) error {
	_, st, err := r.conn.Get(ctx, node)
	switch {
	case err != nil:
		return err
	case st.EphemeralOwner != r.conn.SessionID():
		return client.ErrNodeExists
	}
	return nil
}

func (r *Registry) hold(ctx context.Context, d *lockDir, node string) (*Registration, error) {
	l, err := d.hold(ctx, node, 0)
	if err != nil {
		d.deleteNode(ctx, node)
		return nil, err
	}
	return &Registration{r: r, lease: l}, nil
}

// Path returns the instance's node.
func (g *Registration) Path() string { return g.lease.Node() }

// Lost returns a channel closed if the registration is lost (its session
// ended, or its node was deleted).
func (g *Registration) Lost() <-chan struct{} { return g.lease.Lost() }

// Err is nil while registered, ErrReleased after Deregister, or an error
// wrapping ErrLockLost.
func (g *Registration) Err() error { return g.lease.Err() }

// Deregister removes the instance.
func (g *Registration) Deregister(ctx context.Context) error {
	d := lockDir{conn: g.r.conn, dir: parentPath(g.lease.Node()), o: g.r.o}
	d.release(ctx, g.lease)
	return nil
}

// Instances returns the instances of service, sorted by id.
func (r *Registry) Instances(ctx context.Context, service string) ([]Instance, error) {
	kids, _, err := r.conn.Children(ctx, r.servicePath(service))
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r.read(ctx, service, kids, nil)
}

// read fetches the data of the instances named kids, reusing known ones.
func (r *Registry) read(ctx context.Context, service string, kids []string, known map[string][]byte) ([]Instance, error) {
	slices.Sort(kids)
	out := make([]Instance, 0, len(kids))
	for _, id := range kids {
		if data, ok := known[id]; ok {
			out = append(out, Instance{ID: id, Data: data})
			continue
		}
		data, _, err := r.conn.Get(ctx, joinPath(r.servicePath(service), id))
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Instance{ID: id, Data: data})
	}
	return out, nil
}

// ServiceWatch follows the instances of a service.
type ServiceWatch struct {
	updates chan []Instance
	mu      sync.Mutex
	current []Instance
	err     error
	done    chan struct{}
}

// Watch follows the instances of service until ctx ends or the session
// ends: Instances is always the latest list seen, and Updates receives
// each new list. Instance data is read once per registration; a change
// of an instance's data without re-registering is not seen.
func (r *Registry) Watch(ctx context.Context, service string) *ServiceWatch {
	w := &ServiceWatch{updates: make(chan []Instance, 1), done: make(chan struct{})}
	go w.run(ctx, r, service)
	return w
}

// Updates returns a channel receiving the instance list each time it
// changes, starting with the first list. A slow reader skips to the
// latest list. It is closed when the watch ends (see Err).
func (w *ServiceWatch) Updates() <-chan []Instance { return w.updates }

// Instances returns the latest list seen (nil before the first).
func (w *ServiceWatch) Instances() []Instance {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.current)
}

// Done is closed when the watch ends.
func (w *ServiceWatch) Done() <-chan struct{} { return w.done }

// Err returns why the watch ended (ctx.Err(), client.ErrSessionExpired,
// ...), or nil while it runs.
func (w *ServiceWatch) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

func (w *ServiceWatch) run(ctx context.Context, r *Registry, service string) {
	err := w.follow(ctx, r, service)
	w.mu.Lock()
	w.err = err
	w.mu.Unlock()
	close(w.updates)
	close(w.done)
}

func (w *ServiceWatch) follow(ctx context.Context, r *Registry, service string) error {
	p := r.servicePath(service)
	known := map[string][]byte{}
	first := true
	for {
		kids, ch, err := r.watchChildren(ctx, p)
		if err == nil && kids != nil {
			var list []Instance
			if list, err = r.read(ctx, service, kids, known); err == nil {
				first = w.update(list, known, first)
			}
		}
		if err == nil {
			err = waitEvent(ctx, ch)
		}
		if err != nil && (isTerminal(err) || ctx.Err() != nil) {
			return err
		}
		if err != nil {
			pause(ctx, retryPause)
		}
	}
}

// watchChildren lists p with a child watch; if p does not exist, it
// returns an empty list and a watch for its creation.
func (r *Registry) watchChildren(ctx context.Context, p string) ([]string, <-chan client.Event, error) {
	kids, _, ch, err := r.conn.ChildrenW(ctx, p)
	if !errors.Is(err, client.ErrNoNode) {
		if kids == nil && err == nil {
			kids = []string{}
		}
		return kids, ch, err
	}
	_, ok, ch, err := r.conn.ExistsW(ctx, p)
	switch {
	case err != nil:
		return nil, nil, err
	case ok: // created meanwhile: look again after this (immediate) event
		return nil, closedEvent(), nil
	}
	return []string{}, ch, nil
}

func closedEvent() <-chan client.Event {
	ch := make(chan client.Event, 1)
	ch <- client.Event{Type: client.EventNone, State: client.StateConnected}
	return ch
}

// update publishes list if it differs from the current one.
func (w *ServiceWatch) update(list []Instance, known map[string][]byte, first bool) bool {
	clear(known)
	for _, in := range list {
		known[in.ID] = in.Data
	}
	w.mu.Lock()
	same := !first && slices.EqualFunc(w.current, list, func(a, b Instance) bool {
		return a.ID == b.ID && bytes.Equal(a.Data, b.Data)
	})
	w.current = list
	w.mu.Unlock()
	if !same {
		publish(w.updates, slices.Clone(list))
	}
	return false
}
