package server

import (
	"errors"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/hashicorp/raft"
)

const (
	// leaderProbeTimeout bounds the dial that checks whether a leader's
	// cluster port still takes connections.
	leaderProbeTimeout = 250 * time.Millisecond
	// leaderProbeTries is how many dials the check makes while the port
	// still takes them, leaderProbeGap apart: a dying process may close
	// its connections a moment before its listener.
	leaderProbeTries = 3
	leaderProbeGap   = 50 * time.Millisecond
)

// sooner is a node's state for electing sooner after its leader's process
// died. hashicorp/raft's follower notices a lost leader only through its
// heartbeat timer: it campaigns once a timer (HeartbeatTimeout, up to
// twice that) fires with no contact for HeartbeatTimeout, so 1–2 s after
// a crash with the default timers, where ZooKeeper's followers see the
// leader's connection close and elect at once. When a Raft connection from
// the leader ends with an error and the leader's cluster port refuses a
// new connection (nothing listens there: its process is gone; an
// unreachable host or a cut link refuses nothing, and is left to the
// timer), the node lowers its heartbeat timeout to the leader lease, the
// least hashicorp/raft accepts, which wakes its follower timer at once,
// and restores it once a leader is known again (quorumWatch). A node that
// still knows the old leader refuses to vote, so the other followers,
// which see the same connections end, must lower theirs too; they do.
type sooner struct {
	mu     sync.Mutex
	gone   raft.ServerID // the leader found gone; "" while not lowered
	since  time.Time     // when the timeout was lowered
	normal time.Duration // the heartbeat timeout to restore
}

// raftConnEnded is called when a Raft connection accepted from peer ends
// with an error.
func (s *Server) raftConnEnded(peer string) {
	select {
	case <-s.nodeReady:
	default:
		return
	}
	r := s.node.r
	if r.State() != raft.Follower {
		return
	}
	addr, id := r.LeaderWithID()
	if addr == "" || string(id) != peer || !s.refuses(string(addr)) {
		return
	}
	s.electSooner(r, id)
}

// refuses reports whether addr's cluster port refuses a connection,
// within leaderProbeTries dials.
func (s *Server) refuses(addr string) bool {
	for try := 0; try < leaderProbeTries; try++ {
		if try > 0 {
			time.Sleep(leaderProbeGap)
		}
		c, err := s.mux.net.Dial(s.mux.self, s.mux.peers(addr), addr, leaderProbeTimeout)
		if err != nil {
			return errors.Is(err, syscall.ECONNREFUSED)
		}
		_ = c.Close()
	}
	return false
}

// electSooner lowers Raft's heartbeat timeout to the leader lease.
func (s *Server) electSooner(r *raft.Raft, gone raft.ServerID) {
	s.soon.mu.Lock()
	defer s.soon.mu.Unlock()
	rc := r.ReloadableConfig()
	fast := s.cfg.Raft.LeaderLease
	if s.soon.gone != "" || fast <= 0 || fast >= rc.HeartbeatTimeout {
		return
	}
	normal := rc.HeartbeatTimeout
	rc.HeartbeatTimeout = fast
	if err := r.ReloadConfig(rc); err != nil {
		s.log.Warn("could not lower the Raft heartbeat timeout", "err", err)
		return
	}
	s.soon.gone, s.soon.since, s.soon.normal = gone, time.Now(), normal
	s.log.Info("the leader's cluster port refuses connections: electing after the leader lease instead of the heartbeat timeout",
		"leader", string(gone), "heartbeat_timeout", fast)
}

// restoreHeartbeat puts the heartbeat timeout back once a leader other
// than the one found gone is known (or that one, restarted, for longer
// than two heartbeat timeouts).
func (s *Server) restoreHeartbeat() {
	s.soon.mu.Lock()
	defer s.soon.mu.Unlock()
	if s.soon.gone == "" {
		return
	}
	r := s.node.r
	_, id := r.LeaderWithID()
	if id == "" || (id == s.soon.gone && time.Since(s.soon.since) < 2*s.soon.normal) {
		return
	}
	rc := r.ReloadableConfig()
	rc.HeartbeatTimeout = s.soon.normal
	if err := r.ReloadConfig(rc); err != nil {
		s.log.Warn("could not restore the Raft heartbeat timeout", "err", err)
		return
	}
	s.log.Info("a leader is known again: Raft heartbeat timeout restored", "leader", string(id), "heartbeat_timeout", s.soon.normal)
	s.soon.gone = ""
}

// endWatchConn calls ended once, the first time a read fails with
// anything but a timeout.
type endWatchConn struct {
	net.Conn
	once  sync.Once
	ended func()
}

func (c *endWatchConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err != nil {
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			c.once.Do(c.ended)
		}
	}
	return n, err
}
