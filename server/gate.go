package server

import "sync"

// gate freezes client traffic while a server is paused (tests: a process
// stopped with SIGSTOP keeps its sockets open but answers nothing).
type gate struct {
	mu sync.Mutex
	ch chan struct{} // nil: open; otherwise closed when the gate reopens
}

func (g *gate) pause() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch == nil {
		g.ch = make(chan struct{})
	}
}

func (g *gate) resume() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ch != nil {
		close(g.ch)
		g.ch = nil
	}
}

// closed reports whether the gate is closed now.
func (g *gate) closed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch != nil
}

// wait blocks while the gate is closed, or until done is closed.
func (g *gate) wait(done <-chan struct{}) {
	g.mu.Lock()
	ch := g.ch
	g.mu.Unlock()
	if ch != nil {
		select {
		case <-ch:
		case <-done:
		}
	}
}

// Pause freezes every client connection, as if the process were stopped
// (SIGSTOP): new connections are accepted (as the kernel does for a frozen
// process) but not even their handshake is read, requests are neither
// read nor answered, nothing is written, connections stay open, and the
// node does not close its clients' connections when it sees no leader.
// Resume undoes it. (Raft keeps running: zktest's Cluster.Pause also cuts
// the node off from its peers.)
func (s *Server) Pause() { s.gate.pause() }

// Resume ends a Pause.
func (s *Server) Resume() { s.gate.resume() }
