package server

import (
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// DefaultReadOnlyDelay is how long a node in read-only mode must have
// known no leader before it serves read-only sessions
// (Config.ReadOnlyDelay; at least one tick). ZooKeeper starts its
// read-only server max(2 s, tickTime) after a peer begins looking for a
// leader, so an ordinary election never hands out read-only sessions.
const DefaultReadOnlyDelay = 2 * time.Second

// readOnlyDelay is the effective Config.ReadOnlyDelay.
func (c *Config) readOnlyDelay() time.Duration {
	if c.ReadOnlyDelay > 0 {
		return c.ReadOnlyDelay
	}
	return max(DefaultReadOnlyDelay, c.TickTime)
}

// readOnlyNow reports whether this node serves only read-only sessions:
// read-only mode is enabled and it has known no leader for the read-only
// delay.
func (s *Server) readOnlyNow() bool {
	if !s.cfg.clustered() || !s.cfg.ReadOnlyMode || s.Leader() != "" {
		return false
	}
	since := s.noLeaderSince.Load()
	return since != 0 && time.Duration(monoNow()-since) >= s.cfg.readOnlyDelay()
}

// trackLeader runs on every quorumWatch tick: it notes since when this
// node has known no leader, and once it knows one again ends the
// read-only sessions it served, whose clients reconnect for a read-write
// session (the client library does not look for a read-write server by
// itself). It checks on every tick while a leader is known, so a
// read-only handshake racing the leader's return is ended on the next.
func (s *Server) trackLeader(leader bool) {
	if !leader {
		s.noLeaderSince.CompareAndSwap(0, monoNow())
		return
	}
	s.noLeaderSince.Store(0)
	if s.readOnlyServed.Swap(false) {
		s.dropConnections(func(c *conn) bool { return c.readOnly.Load() })
	}
}

// readOnlyHandshake serves a client that asked for a read-only session
// while this node has no quorum (readonlymode.enabled). A new session
// (id 0) is local to this node: it is not in the replicated state, so a
// read-write server later reports it expired, as ZooKeeper's read-only
// sessions. An existing session is reused if it is live here, or local to
// this node, and its password checks; any other is answered as expired,
// as ZooKeeper's read-only server does. Writes and sync answer
// NotReadOnly.
func (c *conn) readOnlyHandshake(req *wire.ConnectRequest) bool {
	resp := wire.ConnectResponse{TimeOut: c.s.cfg.clampTimeout(req.TimeOut), ReadOnly: true, HasReadOnly: true}
	switch _, live := c.s.fsm.Session(req.SessionID); {
	case req.SessionID == 0:
		resp.SessionID = localSessionBase | int64(c.s.nextLocalSession.Add(1))
		resp.Passwd = c.s.fsm.Password(resp.SessionID)
	case (live || req.SessionID&localSessionBase == localSessionBase) && c.s.fsm.CheckPassword(req.SessionID, req.Passwd):
		resp.SessionID, resp.Passwd = req.SessionID, req.Passwd
	default:
		c.s.log.Info("read-only re-attach of an unknown session", "session", hexID(req.SessionID), "remote", c.ip)
		return c.connectReply(expiredReply(req.HasReadOnly), false)
	}
	c.readOnly.Store(true)
	c.s.log.Info("serving a read-only session without quorum", "session", hexID(resp.SessionID), "remote", c.ip)
	ok := c.connectReply(resp, true)
	c.s.readOnlyServed.Store(true) // after binding: see trackLeader
	return ok
}

// localSessionBase marks session ids of read-only sessions, which are
// local to one node (replicated ids are below 2^56).
const localSessionBase = int64(0x7F) << 56
