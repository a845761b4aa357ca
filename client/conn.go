package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// Conn is a ZooKeeper client: one session, served over one TCP connection
// at a time. All methods are safe for concurrent use.
type Conn struct {
	opts  options
	hosts []string
	log   *slog.Logger

	// sendq holds requests waiting for the writer.
	sendq chan *request
	// closing is closed by Close; loopDone by the connection loop on exit.
	closing  chan struct{}
	loopDone chan struct{}
	// established is closed when the first session is established.
	established     chan struct{}
	establishedOnce sync.Once
	closeOnce       sync.Once
	closeRequested  atomic.Bool
	// ctx is cancelled by Close; it aborts dials and handshakes.
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	state     State
	sessionID int64
	passwd    []byte
	timeout   time.Duration // negotiated
	// seenRW: a read-write server has served this Conn. Until then any
	// session is a read-only server's local one, which the handshake does
	// not present again (the Java client's seenRwServerBefore).
	seenRW  bool
	server  string
	auths   []authInfo
	termErr error

	lastZxid atomic.Int64
	// preferred (under mu) is the next server to connect to, when a
	// read-only connection's probe found a read-write one (rwprobe.go).
	preferred string
	// lastHeard is when a server last sent something (monoNow; 0 before
	// the first session): the start of a local expiry (expiredLocally).
	lastHeard atomic.Int64
	// xid is only touched by the writer goroutine.
	xid int32

	emitMu   sync.Mutex
	notifier *notifier
	watches  *watchRegistry
}

// Connect starts a client for the given servers ("host:port"; entries may
// also be comma-separated lists, a missing port means 2181, and a list may
// end with a chroot, "h1:2181,h2:2181/app", as WithChroot) and
// returns once a session is established. If ctx ends first, or the session
// cannot be established (a rejected WithAuth credential), the client is
// closed and the error returned.
func Connect(ctx context.Context, servers []string, opts ...Option) (*Conn, error) {
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	hosts, chroot, err := parseServers(servers)
	if err != nil {
		return nil, err
	}
	if o.chroot == "/" {
		o.chroot = ""
	}
	switch {
	case chroot == "":
	case o.chroot == "":
		o.chroot = chroot
	case o.chroot != chroot:
		return nil, fmt.Errorf("%w: chroot %q in the server list and %q in WithChroot", ErrBadArguments, chroot, o.chroot)
	}
	if o.chroot != "" {
		if err := wire.ValidatePath(o.chroot); err != nil {
			return nil, fmt.Errorf("chroot: %w", err)
		}
	}
	if o.shuffle {
		rand.Shuffle(len(hosts), func(i, j int) { hosts[i], hosts[j] = hosts[j], hosts[i] })
	}
	c := &Conn{
		opts:        o,
		hosts:       hosts,
		log:         o.logger,
		sendq:       make(chan *request, sendQueueSize),
		closing:     make(chan struct{}),
		loopDone:    make(chan struct{}),
		established: make(chan struct{}),
		state:       StateConnecting,
		passwd:      make([]byte, wire.PasswordSize),
		auths:       append([]authInfo(nil), o.auths...),
		notifier:    newNotifier(o.stateCallback),
	}
	c.watches = newWatchRegistry(c)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.emit(StateConnecting, "", nil)
	go c.run()
	select {
	case <-c.established:
		return c, nil
	case <-c.loopDone:
		err := c.terminalErr()
		_ = c.Close()
		return nil, err
	case <-ctx.Done():
		_ = c.Close()
		return nil, ctx.Err()
	}
}

// parseServers splits the server list into "host:port" addresses (port
// 2181 by default). As the Java client's ConnectStringParser, an entry may
// end with a chroot
// ("h1:2181,h2:2181/app"): it is returned apart ("" for none or "/"), and
// entries naming different chroots are an error.
func parseServers(servers []string) (hosts []string, chroot string, err error) {
	for _, s := range servers {
		if i := strings.IndexByte(s, '/'); i >= 0 {
			root := s[i:]
			if root == "/" {
				root = ""
			}
			if chroot != "" && root != chroot {
				return nil, "", fmt.Errorf("%w: two chroots, %q and %q", ErrBadArguments, chroot, root)
			}
			chroot, s = root, s[:i]
		}
		for _, h := range strings.Split(s, ",") {
			h = strings.TrimSpace(h)
			if h == "" {
				continue
			}
			if _, _, err := net.SplitHostPort(h); err != nil {
				h = net.JoinHostPort(h, "2181")
			}
			hosts = append(hosts, h)
		}
	}
	if len(hosts) == 0 {
		return nil, "", fmt.Errorf("%w: no servers given", ErrBadArguments)
	}
	return hosts, chroot, nil
}

// State returns the current state.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// SessionID returns the current session id (0 before the first session
// is established and after expiry).
func (c *Conn) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// Events returns the channel of state changes. It holds EventBufferSize
// events; when the reader falls behind the oldest events are dropped, so
// the client never blocks on it. The channel is closed by Close, after
// the StateClosed event.
func (c *Conn) Events() <-chan StateEvent { return c.notifier.events }

// Close ends the session: it sends closeSession when connected and waits
// briefly for the reply, then closes the connection. Pending operations
// fail and pending watches end with ErrClosed. Close is idempotent and
// always returns nil.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		st := c.State()
		running := true
		select {
		case <-c.loopDone:
			running = false
		default:
		}
		if running && (st == StateConnected || st == StateConnectedReadOnly) {
			c.closeRequested.Store(true)
			wait := min(maxCloseWait, c.readTimeout())
			ctx, cancel := context.WithTimeout(context.Background(), wait)
			err := c.roundTrip(ctx, newRequest(wire.OpCloseSession, nil, nil))
			cancel()
			if err != nil {
				c.log.Debug("zk: closeSession", "err", err)
			}
		}
		close(c.closing)
		c.cancel()
		<-c.loopDone
		c.emit(StateClosed, "", nil)
		c.notifier.close()
	})
	return nil
}

// terminalErr is the error of operations after the loop stopped.
func (c *Conn) terminalErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.termErr == nil {
		return ErrClosed
	}
	return c.termErr
}

// readTimeout is 2/3 of the negotiated (or requested) session timeout,
// Java's readTimeout: a connection silent for that long is dead.
func (c *Conn) readTimeout() time.Duration {
	c.mu.Lock()
	t := c.timeout
	c.mu.Unlock()
	if t <= 0 {
		t = c.opts.sessionTimeout
	}
	return t * 2 / 3
}

// emit records a state change and publishes it.
func (c *Conn) emit(s State, server string, err error) {
	c.emitMu.Lock()
	defer c.emitMu.Unlock()
	c.mu.Lock()
	c.state = s
	sid := c.sessionID
	c.mu.Unlock()
	c.log.Debug("zk: state", "state", s, "session", fmt.Sprintf("%#x", sid), "server", server, "err", err)
	c.notifier.emit(StateEvent{State: s, SessionID: sid, Server: server, Err: err})
}

// updateZxid records a zxid seen in a reply header (the max so far).
func (c *Conn) updateZxid(z int64) {
	for {
		cur := c.lastZxid.Load()
		if z <= cur || c.lastZxid.CompareAndSwap(cur, z) {
			return
		}
	}
}

// notifier delivers state events to the Events channel (drop-oldest) and
// to the state callback (through an unbounded queue and its own
// goroutine).
type notifier struct {
	mu      sync.Mutex
	events  chan StateEvent
	closed  bool
	dropped int
	cb      func(State)
	cbq     []State
	cbWake  chan struct{}
}

func newNotifier(cb func(State)) *notifier {
	n := &notifier{events: make(chan StateEvent, EventBufferSize), cb: cb}
	if cb != nil {
		n.cbWake = make(chan struct{}, 1)
		go n.runCallbacks()
	}
	return n
}

func (n *notifier) emit(ev StateEvent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	for sent := false; !sent; {
		select {
		case n.events <- ev:
			sent = true
		default:
			select {
			case <-n.events:
				n.dropped++
			default:
			}
		}
	}
	if n.cb != nil {
		n.cbq = append(n.cbq, ev.State)
		wake(n.cbWake)
	}
}

func (n *notifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	n.closed = true
	close(n.events)
	if n.cb != nil {
		wake(n.cbWake)
	}
}

func (n *notifier) runCallbacks() {
	for {
		n.mu.Lock()
		for len(n.cbq) == 0 && !n.closed {
			n.mu.Unlock()
			<-n.cbWake
			n.mu.Lock()
		}
		q, closed := n.cbq, n.closed
		n.cbq = nil
		n.mu.Unlock()
		for _, s := range q {
			n.cb(s)
		}
		if closed && len(q) == 0 {
			return
		}
	}
}

// wake does a non-blocking send on a 1-buffered signal channel.
func wake(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// errProtocol marks a reply that breaks the protocol.
var errProtocol = errors.New("zk: protocol error")

// monoBase anchors monoNow.
var monoBase = time.Now()

// monoNow is the time since monoBase on the monotonic clock, in ns (at
// least 1): a step of the wall clock cannot make a session look older.
func monoNow() int64 { return max(1, int64(time.Since(monoBase))) }
