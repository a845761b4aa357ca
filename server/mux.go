package server

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// The cluster port carries two protocols. A dialer's first byte selects
// one; then comes its node id (one length byte and the id), so the
// accepting side knows who is on the other end (for fault injection and
// logs).
const (
	streamRaft    byte = 'R'
	streamForward byte = 'F'
	// clusterHelloTimeout bounds reading a new cluster connection's header.
	clusterHelloTimeout = 5 * time.Second
)

// ClusterNet dials and wraps cluster-port connections. The default is
// plain TCP; tests substitute one that injects partitions.
type ClusterNet interface {
	// Dial connects from node `from` to node `to` at addr.
	Dial(from, to, addr string, timeout time.Duration) (net.Conn, error)
	// Accepted wraps a connection node `self` accepted from node `peer`.
	Accepted(self, peer string, c net.Conn) net.Conn
}

type tcpClusterNet struct{}

func (tcpClusterNet) Dial(_, _, addr string, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", addr, timeout)
}

func (tcpClusterNet) Accepted(_, _ string, c net.Conn) net.Conn { return c }

// clusterMux accepts connections on the cluster port and hands raft
// streams to Raft's transport and forwarding streams to the server.
type clusterMux struct {
	self  string
	ln    net.Listener
	net   ClusterNet
	peers func(addr string) string // cluster address -> node id
	tls   *tls.Config              // mutual TLS on the cluster port, or nil
	// checkHost verifies that a TLS peer's certificate names the host it
	// connects from (verifyPeerHost); log reports refusals.
	checkHost bool
	log       *slog.Logger
	raftCh    chan net.Conn
	forward   func(peer string, c net.Conn)
	// raftEnded, if set, is called when a Raft stream accepted from peer
	// ends with an error (leadergone.go).
	raftEnded func(peer string)
	closed    chan struct{}
	once      sync.Once
}

func newClusterMux(self string, ln net.Listener, cn ClusterNet, peers func(string) string) *clusterMux {
	return &clusterMux{self: self, ln: ln, net: cn, peers: peers,
		raftCh: make(chan net.Conn, 16), closed: make(chan struct{})}
}

func (m *clusterMux) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			return
		}
		go m.route(c)
	}
}

func (m *clusterMux) route(c net.Conn) {
	c = m.serverTLS(c)
	_ = c.SetReadDeadline(time.Now().Add(clusterHelloTimeout))
	br := bufio.NewReader(c)
	kind, peer, err := readHello(br)
	if err != nil {
		_ = c.Close()
		return
	}
	if tc, ok := c.(*tls.Conn); ok && m.checkHost {
		if err := verifyPeerHost(tc); err != nil {
			m.log.Warn("refusing a cluster connection", "peer", peer, "remote", c.RemoteAddr().String(), "err", err)
			_ = c.Close()
			return
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	wrapped := m.net.Accepted(m.self, peer, &bufferedConn{Conn: c, r: br})
	switch kind {
	case streamRaft:
		if ended := m.raftEnded; ended != nil {
			wrapped = &endWatchConn{Conn: wrapped, ended: func() { ended(peer) }}
		}
		select {
		case m.raftCh <- wrapped:
		case <-m.closed:
			_ = c.Close()
		}
	case streamForward:
		if m.forward == nil {
			_ = c.Close()
			return
		}
		m.forward(peer, wrapped)
	default:
		_ = c.Close()
	}
}

func readHello(br *bufio.Reader) (byte, string, error) {
	kind, err := br.ReadByte()
	if err != nil {
		return 0, "", err
	}
	n, err := br.ReadByte()
	if err != nil {
		return 0, "", err
	}
	id := make([]byte, n)
	if _, err := io.ReadFull(br, id); err != nil {
		return 0, "", err
	}
	return kind, string(id), nil
}

// dial opens a cluster connection of the given kind to addr.
func (m *clusterMux) dial(kind byte, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := m.net.Dial(m.self, m.peers(addr), addr, timeout)
	if err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Now().Add(timeout))
	if c, err = m.clientTLS(c, addr); err != nil {
		return nil, err
	}
	_ = c.SetDeadline(time.Time{})
	hello := append([]byte{kind, byte(len(m.self))}, m.self...)
	_ = c.SetWriteDeadline(time.Now().Add(timeout))
	if _, err := c.Write(hello); err != nil {
		_ = c.Close()
		return nil, err
	}
	_ = c.SetWriteDeadline(time.Time{})
	return c, nil
}

func (m *clusterMux) close() {
	m.once.Do(func() {
		close(m.closed)
		_ = m.ln.Close()
	})
}

// raftStream adapts the mux to raft.StreamLayer.
type raftStream struct{ m *clusterMux }

func (s raftStream) Accept() (net.Conn, error) {
	select {
	case c := <-s.m.raftCh:
		return c, nil
	case <-s.m.closed:
		return nil, errors.New("cluster listener closed")
	}
}

func (s raftStream) Close() error { s.m.close(); return nil }

func (s raftStream) Addr() net.Addr { return s.m.ln.Addr() }

func (s raftStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return s.m.dial(streamRaft, string(addr), timeout)
}

// bufferedConn is a net.Conn whose reads go through the reader that
// consumed the hello header.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (b *bufferedConn) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *bufferedConn) String() string { return fmt.Sprintf("cluster conn %s", b.RemoteAddr()) }
