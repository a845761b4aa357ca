package server

import (
	"net"
	"sync"

	"github.com/hashicorp/raft"
)

// fwdPeers tracks the forwarding connections a leader serves, by the id
// of the node at the other end, so that a node removed from the cluster
// forwards nothing more. A removed node no longer receives the log: a
// write it forwarded would be applied without it ever seeing that, and
// its client would get ConnectionLoss for a write that was made. As a
// ZooKeeper leader drops a removed learner, the leader closes the node's
// forwarding connections once its removal is committed (closeFrom) and
// refuses the ones it opens later (serveForward checks membership after
// registering a connection, so no connection slips between the two).
type fwdPeers struct {
	mu    sync.Mutex
	conns map[net.Conn]string // connection -> peer id
}

// add registers c from peer; the returned function unregisters it.
func (p *fwdPeers) add(peer string, c net.Conn) func() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.conns == nil {
		p.conns = make(map[net.Conn]string)
	}
	p.conns[c] = peer
	return func() {
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.conns, c)
	}
}

// closeFrom closes every connection from peer.
func (p *fwdPeers) closeFrom(peer string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, id := range p.conns {
		if id == peer {
			_ = c.Close()
		}
	}
}

// isMember reports whether id is in Raft's latest configuration (a node
// being removed is not, from the moment its removal is appended).
func (s *Server) isMember(id string) bool {
	f := s.node.r.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	for _, srv := range f.Configuration().Servers {
		if srv.ID == raft.ServerID(id) {
			return true
		}
	}
	return false
}
