package zktest

import (
	"errors"
	"net"
	"sync"
	"time"
)

// faultNet is a server.ClusterNet that can cut links between nodes (a cut
// link refuses new connections and breaks existing ones) or slow them (each
// write on a slow link waits its delay first, so messages arrive late and
// in order).
type faultNet struct {
	mu    sync.Mutex
	cut   map[[2]string]bool
	slow  map[[2]string]time.Duration
	conns map[*faultConn]struct{}
}

func newFaultNet() *faultNet {
	return &faultNet{cut: make(map[[2]string]bool), slow: make(map[[2]string]time.Duration),
		conns: make(map[*faultConn]struct{})}
}

// delay is the delay of the link between a and b.
func (n *faultNet) delay(a, b string) time.Duration {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.slow[link(a, b)]
}

// slowDown delays every link between node and the others by d.
func (n *faultNet) slowDown(node string, others []string, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, o := range others {
		if o != node {
			n.slow[link(node, o)] = d
		}
	}
}

var errPartitioned = errors.New("zktest: network partitioned")

func link(a, b string) [2]string {
	if a > b {
		a, b = b, a
	}
	return [2]string{a, b}
}

func (n *faultNet) blocked(a, b string) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.cut[link(a, b)]
}

func (n *faultNet) Dial(from, to, addr string, timeout time.Duration) (net.Conn, error) {
	if n.blocked(from, to) {
		return nil, errPartitioned
	}
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return nil, err
	}
	return n.track(from, to, c), nil
}

func (n *faultNet) Accepted(self, peer string, c net.Conn) net.Conn {
	if n.blocked(self, peer) {
		_ = c.Close()
	}
	return n.track(self, peer, c)
}

func (n *faultNet) track(a, b string, c net.Conn) *faultConn {
	fc := &faultConn{Conn: c, n: n, a: a, b: b}
	n.mu.Lock()
	n.conns[fc] = struct{}{}
	n.mu.Unlock()
	return fc
}

// isolate cuts every link between node and the others.
func (n *faultNet) isolate(node string, others []string) {
	var links [][2]string
	for _, o := range others {
		if o != node {
			links = append(links, link(node, o))
		}
	}
	n.cutLinks(links)
}

// cutLinks cuts the given links (pairs of node ids) and breaks the
// connections open on them.
func (n *faultNet) cutLinks(links [][2]string) {
	n.mu.Lock()
	for _, l := range links {
		n.cut[link(l[0], l[1])] = true
	}
	var doomed []*faultConn
	for c := range n.conns {
		if n.cut[link(c.a, c.b)] {
			doomed = append(doomed, c)
		}
	}
	n.mu.Unlock()
	for _, c := range doomed {
		_ = c.Close()
	}
}

// closeNode closes every connection to or from node that is still open,
// as the exit of its process would.
func (n *faultNet) closeNode(node string) {
	n.mu.Lock()
	var doomed []*faultConn
	for c := range n.conns {
		if c.a == node || c.b == node {
			doomed = append(doomed, c)
		}
	}
	n.mu.Unlock()
	for _, c := range doomed {
		_ = c.Close()
	}
}

func (n *faultNet) heal() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.cut = make(map[[2]string]bool)
	n.slow = make(map[[2]string]time.Duration)
}

// faultConn fails reads and writes once its link is cut.
type faultConn struct {
	net.Conn
	n    *faultNet
	a, b string
}

func (c *faultConn) Read(p []byte) (int, error) {
	if c.n.blocked(c.a, c.b) {
		_ = c.Close()
		return 0, errPartitioned
	}
	return c.Conn.Read(p)
}

func (c *faultConn) Write(p []byte) (int, error) {
	if d := c.n.delay(c.a, c.b); d > 0 {
		time.Sleep(d) // the fault itself: a slow link
	}
	if c.n.blocked(c.a, c.b) {
		_ = c.Close()
		return 0, errPartitioned
	}
	return c.Conn.Write(p)
}

func (c *faultConn) Close() error {
	c.n.mu.Lock()
	delete(c.n.conns, c)
	c.n.mu.Unlock()
	return c.Conn.Close()
}
