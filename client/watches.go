package client

import (
	"context"
	"errors"
	"sync"

	"github.com/paddockzk/paddock/internal/wire"
)

// watchKind is a client-side table of one-shot watches, as in the Java
// client's ZKWatchManager: exists on a missing node sets an exist watch,
// exists on a present node and getData set a data watch, getChildren a
// child watch.
type watchKind int

const (
	watchData watchKind = iota
	watchExist
	watchChild
	numWatchKinds
)

// watchRegistry holds the watches of a Conn, keyed by server path (chroot
// included). It is updated by the reader goroutine (registration on a
// successful reply, dispatch of notifications) and by removal calls;
// delivering an event never blocks: one-shot channels have room for their
// single event and persistent watches queue without bound.
type watchRegistry struct {
	c          *Conn
	mu         sync.Mutex
	oneShot    [numWatchKinds]map[string][]oneShotWatch
	persistent map[string][]*PersistentWatch
	recursive  map[string][]*PersistentWatch
}

func newWatchRegistry(c *Conn) *watchRegistry {
	r := &watchRegistry{
		c:          c,
		persistent: make(map[string][]*PersistentWatch),
		recursive:  make(map[string][]*PersistentWatch),
	}
	for i := range r.oneShot {
		r.oneShot[i] = make(map[string][]oneShotWatch)
	}
	return r
}

// oneShotWatch is a one-shot watch's channel and the path its events
// report: "" for the server path without the chroot; getConfig's watch
// reports "/zookeeper/config" whatever the chroot (ZOOKEEPER-4601).
type oneShotWatch struct {
	ch   chan Event
	path string
}

// event is ev as w reports it.
func (w oneShotWatch) event(ev Event) Event {
	if w.path != "" {
		ev.Path = w.path
	}
	return ev
}

// addOneShot registers ch unless req's caller has already given up (the
// check is made under the registry lock; see AddWatch). clientPath, if
// not "", is the path its event reports.
func (r *watchRegistry) addOneShot(kind watchKind, path, clientPath string, ch chan Event, req *request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.canceled.Load() {
		return
	}
	req.registered = true
	r.oneShot[kind][path] = append(r.oneShot[kind][path], oneShotWatch{ch: ch, path: clientPath})
}

// cancel marks req given up by its caller, unless its watch is registered
// already (its reply is in): it reports whether it was.
func (r *watchRegistry) cancel(req *request) (registered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.registered {
		return true
	}
	req.canceled.Store(true)
	return false
}

func (r *watchRegistry) addPersistent(w *PersistentWatch, req *request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.canceled.Load() {
		return
	}
	req.registered = true
	m := r.table(w.recursive)
	m[w.path] = append(m[w.path], w)
}

func (r *watchRegistry) table(recursive bool) map[string][]*PersistentWatch {
	if recursive {
		return r.recursive
	}
	return r.persistent
}

// removePersistent unregisters w. It reports whether w was registered and
// whether no other watch of its mode remains on its path.
func (r *watchRegistry) removePersistent(w *PersistentWatch) (found, last bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.table(w.recursive)
	ws := m[w.path]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i], ws[i+1:]...)
			found = true
			break
		}
	}
	if len(ws) == 0 {
		delete(m, w.path)
	} else {
		m[w.path] = ws
	}
	return found, len(ws) == 0
}

// take removes and returns the one-shot watches of kind on path.
func (r *watchRegistry) take(kind watchKind, path string) []oneShotWatch {
	chs := r.oneShot[kind][path]
	delete(r.oneShot[kind], path)
	return chs
}

// dispatch delivers a server notification, as ZKWatchManager.materialize
// does: created/changed fire data and exist watches, deleted fires data,
// exist and child watches, children-changed fires child watches;
// persistent watches on the path get every event and recursive ones on
// the path or an ancestor every event but children-changed.
func (r *watchRegistry) dispatch(ev wire.WatcherEvent) {
	ev2 := Event{Type: ev.Type, State: stateFromWire(ev.State), Path: r.c.strip(ev.Path)}
	var fire []oneShotWatch
	r.mu.Lock()
	switch ev.Type {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		fire = append(r.take(watchData, ev.Path), r.take(watchExist, ev.Path)...)
	case wire.EventNodeDeleted:
		fire = append(r.take(watchData, ev.Path), r.take(watchExist, ev.Path)...)
		fire = append(fire, r.take(watchChild, ev.Path)...)
	case wire.EventNodeChildrenChanged:
		fire = r.take(watchChild, ev.Path)
	}
	ps := append([]*PersistentWatch(nil), r.persistent[ev.Path]...)
	if ev.Type != wire.EventNodeChildrenChanged && len(r.recursive) > 0 {
		for p := ev.Path; ; p = wire.ParentPath(p) {
			ps = append(ps, r.recursive[p]...)
			if p == "/" || p == "" {
				break
			}
		}
	}
	r.mu.Unlock()
	fireAll(fire, ev2)
	for _, w := range ps {
		w.push(ev2, false)
	}
}

// removeLocal removes the watches on path matching typ and delivers their
// "removed" events.
func (r *watchRegistry) removeLocal(path string, typ WatcherType) {
	cp := r.c.strip(path)
	var data, child []oneShotWatch
	var ps []*PersistentWatch
	r.mu.Lock()
	if typ == WatcherData || typ == WatcherAny {
		data = append(r.take(watchData, path), r.take(watchExist, path)...)
	}
	if typ == WatcherChildren || typ == WatcherAny {
		child = r.take(watchChild, path)
	}
	if typ == WatcherPersistent || typ == WatcherAny {
		ps = append(ps, r.persistent[path]...)
		delete(r.persistent, path)
	}
	if typ == WatcherPersistentRecursive || typ == WatcherAny {
		ps = append(ps, r.recursive[path]...)
		delete(r.recursive, path)
	}
	r.mu.Unlock()
	fireAll(data, Event{Type: EventDataWatchRemoved, State: StateConnected, Path: cp})
	fireAll(child, Event{Type: EventChildWatchRemoved, State: StateConnected, Path: cp})
	for _, w := range ps {
		w.push(Event{Type: EventPersistentWatchRemoved, State: StateConnected, Path: cp}, true)
	}
}

func fireAll(ws []oneShotWatch, ev Event) {
	for _, w := range ws {
		w.ch <- w.event(ev)
		close(w.ch)
	}
}

// terminate ends every watch with an EventNone carrying err (session
// expired, Conn closed, credential rejected).
func (r *watchRegistry) terminate(st State, err error) {
	r.mu.Lock()
	oneShot := r.oneShot
	ps := r.persistent
	rs := r.recursive
	for i := range r.oneShot {
		r.oneShot[i] = make(map[string][]oneShotWatch)
	}
	r.persistent = make(map[string][]*PersistentWatch)
	r.recursive = make(map[string][]*PersistentWatch)
	r.mu.Unlock()
	for _, m := range oneShot {
		for path, chs := range m {
			fireAll(chs, Event{Type: EventNone, State: st, Path: r.c.strip(path), Err: err})
		}
	}
	for _, m := range []map[string][]*PersistentWatch{ps, rs} {
		for _, ws := range m {
			for _, w := range ws {
				w.push(Event{Type: EventNone, State: st, Path: w.clientPath, Err: err}, true)
			}
		}
	}
}

// stateChanged tells persistent watches about a connection state change
// (EventNone with State Disconnected, then Connected on a new connection,
// whose SetWatches goes out before any later request).
func (r *watchRegistry) stateChanged(st State, err error) {
	r.mu.Lock()
	var ws []*PersistentWatch
	for _, m := range []map[string][]*PersistentWatch{r.persistent, r.recursive} {
		for _, x := range m {
			ws = append(ws, x...)
		}
	}
	r.mu.Unlock()
	for _, w := range ws {
		w.push(Event{Type: EventNone, State: st, Path: w.clientPath, Err: err}, false)
	}
}

// watchLists is what a reconnect restores: the paths of the one-shot data,
// exist and child watches and of the persistent and recursive watches.
type watchLists [5][]string

func (r *watchRegistry) snapshot() watchLists {
	r.mu.Lock()
	defer r.mu.Unlock()
	var l watchLists
	for k := range r.oneShot {
		for p := range r.oneShot[k] {
			l[k] = append(l[k], p)
		}
	}
	for p := range r.persistent {
		l[3] = append(l[3], p)
	}
	for p := range r.recursive {
		l[4] = append(l[4], p)
	}
	return l
}

// PersistentWatch is a watch set by AddWatch. It stays registered, across
// reconnects, until Remove or the end of the session.
type PersistentWatch struct {
	c          *Conn
	path       string // server path
	clientPath string
	recursive  bool
	ch         chan Event

	mu     sync.Mutex
	q      []Event
	closed bool
	wake   chan struct{}
}

// persistentChanSize is the capacity of a PersistentWatch's channel. Events
// beyond it wait in an unbounded internal queue, so the client never
// blocks on a slow reader and never drops an event.
const persistentChanSize = 128

func newPersistentWatch(c *Conn, path, clientPath string, recursive bool) *PersistentWatch {
	w := &PersistentWatch{
		c: c, path: path, clientPath: clientPath, recursive: recursive,
		ch:   make(chan Event, persistentChanSize),
		wake: make(chan struct{}, 1),
	}
	go w.run()
	return w
}

// Events returns the watch's events. Besides the znode events it carries
// EventNone events: State Disconnected when the connection breaks and
// Connected when a new connection is up (the watch's re-registration goes
// out on it before any request made after this event; events that
// happened in between are not replayed: re-read what you cache). The last event is
// EventPersistentWatchRemoved (after Remove) or EventNone with Err set
// (session expired, Conn closed); the channel is then closed. A goroutine
// feeds the channel from an unbounded queue: read the channel until it is
// closed, or that goroutine stays blocked.
func (w *PersistentWatch) Events() <-chan Event { return w.ch }

// Path returns the watched path (without the chroot).
func (w *PersistentWatch) Path() string { return w.clientPath }

// Recursive reports whether the watch covers the whole subtree.
func (w *PersistentWatch) Recursive() bool { return w.recursive }

// Remove removes the watch. The server-side watch is removed when this is
// the last watch of its mode on the path. ZooKeeper servers before 3.9 do
// not know the persistent watcher types; there the watch is removed with
// WatcherAny, which also removes the Conn's other watches on the path
// (they receive their "removed" events). Remove on a watch that has
// already ended returns nil.
func (w *PersistentWatch) Remove(ctx context.Context) error {
	found, last := w.c.watches.removePersistent(w)
	if !found {
		return nil
	}
	defer w.push(Event{Type: EventPersistentWatchRemoved, State: StateConnected, Path: w.clientPath}, true)
	if !last {
		return nil
	}
	typ := WatcherPersistent
	if w.recursive {
		typ = WatcherPersistentRecursive
	}
	err := w.c.removeWatchesServer(ctx, w.path, typ)
	if err != nil && !errors.Is(err, ErrNoWatcher) && !isTransient(err) {
		// Pre-3.9 server: fall back to Any.
		err = w.c.removeWatchesServer(ctx, w.path, WatcherAny)
		if err == nil || errors.Is(err, ErrNoWatcher) {
			w.c.watches.removeLocal(w.path, WatcherAny)
		}
	}
	if errors.Is(err, ErrNoWatcher) || errors.Is(err, ErrClosed) || errors.Is(err, ErrSessionExpired) {
		return nil
	}
	return err
}

// isTransient reports errors after which retrying with another watcher
// type is pointless.
func isTransient(err error) bool {
	return errors.Is(err, ErrConnectionLoss) || errors.Is(err, ErrSessionExpired) ||
		errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded)
}

// push queues ev; final ends the watch after ev. Events pushed after the
// final one are dropped.
func (w *PersistentWatch) push(ev Event, final bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.q = append(w.q, ev)
	w.closed = final
	wake(w.wake)
}

func (w *PersistentWatch) run() {
	for {
		w.mu.Lock()
		for len(w.q) == 0 && !w.closed {
			w.mu.Unlock()
			<-w.wake
			w.mu.Lock()
		}
		q, closed := w.q, w.closed
		w.q = nil
		w.mu.Unlock()
		for _, ev := range q {
			w.ch <- ev
		}
		if closed {
			close(w.ch)
			return
		}
	}
}
