package bench

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// loadSessionTimeout is what load clients ask for; servers clamp it (to
// [4 s, 40 s] with ZooKeeper's default tickTime).
const loadSessionTimeout = 10 * time.Second

// connectTimeout bounds one client's wait for its session.
const connectTimeout = 15 * time.Second

var acl = zk.WorldACL(zk.PermAll)

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// dialOpts tunes one client.
type dialOpts struct {
	timeout time.Duration
	bufSize int
	dialer  zk.Dialer
	// onEvent, when set, gets client i's events on its receive goroutine
	// (go-zookeeper's event callback); it must not block.
	onEvent func(i int, ev zk.Event)
}

// dial connects client i to Servers[i%len(Servers)] and waits for its
// session.
func dial(ctx context.Context, servers []string, i int, o dialOpts) (*zk.Conn, error) {
	if o.timeout == 0 {
		o.timeout = loadSessionTimeout
	}
	if o.bufSize == 0 {
		o.bufSize = 512 << 10
	}
	if o.dialer == nil {
		o.dialer = net.DialTimeout
	}
	server := servers[i%len(servers)]
	onEvent := func(zk.Event) {}
	if o.onEvent != nil {
		onEvent = func(ev zk.Event) { o.onEvent(i, ev) }
	}
	conn, events, err := zk.Connect([]string{server}, o.timeout,
		zk.WithLogger(nopLogger{}), zk.WithLogInfo(false), zk.WithDialer(o.dialer),
		zk.WithMaxBufferSize(o.bufSize), zk.WithMaxConnBufferSize(o.bufSize), zk.WithEventCallback(onEvent))
	if err != nil {
		return nil, err
	}
	timer := time.NewTimer(connectTimeout)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				return nil, fmt.Errorf("connect %s: connection closed", server)
			}
			if ev.State == zk.StateHasSession {
				return conn, nil
			}
			if ev.State == zk.StateAuthFailed || ev.State == zk.StateExpired {
				conn.Close()
				return nil, fmt.Errorf("connect %s: %v", server, ev.State)
			}
		case <-timer.C:
			conn.Close()
			return nil, fmt.Errorf("connect %s: no session within %v", server, connectTimeout)
		case <-ctx.Done():
			conn.Close()
			return nil, ctx.Err()
		}
	}
}

// dialAll opens n clients, at most 64 handshakes at a time.
func dialAll(ctx context.Context, servers []string, n int, o dialOpts, progress func()) ([]*zk.Conn, error) {
	conns := make([]*zk.Conn, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range conns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			conns[i], errs[i] = dial(ctx, servers, i, o)
			if progress != nil {
				progress()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeAll(conns)
		return nil, firstLine(err)
	}
	return conns, nil
}

// firstLine keeps the first of joined errors (plus a count).
func firstLine(err error) error {
	lines := strings.Split(err.Error(), "\n")
	if len(lines) == 1 {
		return err
	}
	return fmt.Errorf("%s (and %d more errors)", lines[0], len(lines)-1)
}

// closeAll closes every connection, 256 at a time (Close waits for the
// server to answer closeSession).
func closeAll(conns []*zk.Conn) {
	sem := make(chan struct{}, 256)
	var wg sync.WaitGroup
	for _, c := range conns {
		if c == nil {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c.Close()
		}()
	}
	wg.Wait()
}

// ensurePath creates every missing component of path (persistent, empty).
func ensurePath(conn *zk.Conn, path string) error {
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	cur := ""
	for _, p := range parts {
		cur += "/" + p
		if _, err := conn.Create(cur, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", cur, err)
		}
	}
	return nil
}

// syncAll makes every connection's server catch up with the leader
// (sync), so each client sees what the others created through other
// servers of an ensemble: ZooKeeper's reads are only consistent per session.
func syncAll(ctx context.Context, conns []*zk.Conn, path string) error {
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if ctx.Err() == nil {
				_, errs[i] = c.Sync(path)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sync: %w", firstLine(err))
	}
	return ctx.Err()
}

// deleteTree deletes root and everything under it, using every connection
// in parallel and multi batches of 100 deletes.
func deleteTree(ctx context.Context, conns []*zk.Conn, root string) error {
	if len(conns) == 0 {
		return nil
	}
	// Breadth-first listing, level by level.
	levels := [][]string{{root}}
	for {
		cur := levels[len(levels)-1]
		next := make([][]string, len(cur))
		errs := parallel(ctx, conns, len(cur), func(c *zk.Conn, i int) error {
			kids, _, err := c.Children(cur[i])
			if errors.Is(err, zk.ErrNoNode) {
				return nil
			}
			for _, k := range kids {
				next[i] = append(next[i], cur[i]+"/"+k)
			}
			return err
		})
		if errs != nil {
			return errs
		}
		var flat []string
		for _, n := range next {
			flat = append(flat, n...)
		}
		if len(flat) == 0 {
			break
		}
		levels = append(levels, flat)
	}
	for l := len(levels) - 1; l >= 0; l-- {
		paths := levels[l]
		sort.Strings(paths)
		const batch = 100
		nb := (len(paths) + batch - 1) / batch
		err := parallel(ctx, conns, nb, func(c *zk.Conn, b int) error {
			part := paths[b*batch : min(len(paths), (b+1)*batch)]
			ops := make([]any, len(part))
			for j, p := range part {
				ops[j] = &zk.DeleteRequest{Path: p, Version: -1}
			}
			if _, err := c.Multi(ops...); err == nil {
				return nil
			}
			// Something in the batch is gone already (an ephemeral) or not
			// empty: fall back to one by one.
			for _, p := range part {
				if err := c.Delete(p, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
					return fmt.Errorf("delete %s: %w", p, err)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// parallel runs fn(conn, i) for i in [0, n), spreading the calls over the
// connections (one goroutine per connection).
func parallel(ctx context.Context, conns []*zk.Conn, n int, fn func(c *zk.Conn, i int) error) error {
	var mu sync.Mutex
	var first error
	next := 0
	var wg sync.WaitGroup
	for _, c := range conns[:min(len(conns), n)] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if first != nil || next >= n || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if err := fn(c, i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// cuttable is a client's TCP connection that the expiry workload can cut
// as a crashed client would: from cut() on, nothing more reaches the
// server and the client cannot reconnect. It records when the client last
// wrote to the server and the session timeout the server granted.
type cuttable struct {
	mu        sync.Mutex
	cut       bool
	conn      net.Conn
	lastWrite time.Time
	timeout   time.Duration // from the ConnectResponse
	hdr       []byte        // first bytes read: len, protocolVersion, timeOut
}

func (c *cuttable) dialer(network, address string, timeout time.Duration) (net.Conn, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return nil, errors.New("bench: client abandoned")
	}
	nc, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	c.conn = nc
	c.hdr = c.hdr[:0]
	return &cutConn{Conn: nc, owner: c}, nil
}

// abandon cuts the connection and returns the time of the last write that
// reached the server.
func (c *cuttable) abandon() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	if c.conn != nil {
		c.conn.Close()
	}
	return c.lastWrite
}

func (c *cuttable) grantedTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

type cutConn struct {
	net.Conn
	owner *cuttable
}

func (c *cutConn) Write(p []byte) (int, error) {
	o := c.owner
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.cut {
		return 0, net.ErrClosed
	}
	n, err := c.Conn.Write(p)
	if n > 0 {
		o.lastWrite = time.Now()
	}
	return n, err
}

func (c *cutConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		o := c.owner
		o.mu.Lock()
		if len(o.hdr) < 12 {
			o.hdr = append(o.hdr, p[:min(n, 12-len(o.hdr))]...)
			if len(o.hdr) == 12 {
				// ConnectResponse: int32 length, int32 protocolVersion, int32 timeOut (ms).
				o.timeout = time.Duration(int32(binary.BigEndian.Uint32(o.hdr[8:12]))) * time.Millisecond
			}
		}
		o.mu.Unlock()
	}
	return n, err
}

// bufferedConn reads a connection through a buffer, so that a client
// reads a small message (length prefix and body) in one system call
// instead of two.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// bufferedDial is a zk.Dialer whose connections read through a 4 KiB buffer.
func bufferedDial(network, address string, timeout time.Duration) (net.Conn, error) {
	nc, err := net.DialTimeout(network, address, timeout)
	if err != nil {
		return nil, err
	}
	return &bufferedConn{Conn: nc, r: bufio.NewReaderSize(nc, 4<<10)}, nil
}
