package server

import (
	"errors"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// handshake answers the ConnectRequest: a new session, a re-attached one,
// or an expired/invalid one (timeOut=0, then close). It reports whether
// the connection continues.
func (c *conn) handshake(frame []byte) bool {
	var req wire.ConnectRequest
	if err := req.Decode(wire.NewDecoder(frame)); err != nil {
		c.logDrop("handshake", err)
		return false
	}
	if last := c.s.fsm.LastZxid(); req.LastZxidSeen > last {
		// The client has seen a newer state than this server holds: it must
		// try another server (single system image). Close without reply.
		c.s.log.Info("refusing client ahead of this server", "client_zxid", hexID(req.LastZxidSeen),
			"server_zxid", hexID(last))
		return false
	}
	if c.s.cfg.clustered() && c.s.Leader() == "" {
		if c.s.readOnlyNow() && req.HasReadOnly && req.ReadOnly {
			return c.readOnlyHandshake(&req)
		}
		c.s.log.Info("refusing client: no leader", "remote", c.ip)
		return false
	}
	if c.s.cfg.clustered() && !c.s.awaitMembership(DefaultProposeTimeout) {
		c.s.log.Info("refusing client: /zookeeper/config not applied yet", "remote", c.ip)
		return false
	}
	timeout := c.s.cfg.clampTimeout(req.TimeOut)
	resp := wire.ConnectResponse{TimeOut: timeout, HasReadOnly: req.HasReadOnly}
	ok := true
	if req.SessionID == 0 {
		res, err := c.s.apply(&fsm.Command{Type: fsm.CmdCreateSession, Timeout: timeout, ServerID: c.s.sessionServerID()})
		if err != nil {
			c.logDrop("create session", err)
			return false
		}
		resp.SessionID, resp.Passwd = res.Session, res.Passwd
		if c.s.isLeader() {
			c.s.setOwner(res.Session, c.s.cfg.ID)
		}
	} else if known, sure := c.s.sessionKnown(req.SessionID); !sure {
		// The leader could not confirm either way: let the client retry
		// (here or elsewhere) rather than tell it its session is gone.
		c.s.log.Info("cannot validate session now", "session", hexID(req.SessionID), "remote", c.ip)
		return false
	} else if known && c.s.fsm.CheckPassword(req.SessionID, req.Passwd) {
		resp.SessionID, resp.Passwd = req.SessionID, req.Passwd
		c.s.awaitReaders(req.SessionID)
		err := c.s.attach(req.SessionID)
		if err == nil {
			err = c.s.retime(req.SessionID, timeout)
		}
		if errors.Is(err, wire.ErrSessionExpired) {
			// Expired meanwhile (or being expired): as for an unknown one.
			resp, ok = expiredReply(req.HasReadOnly), false
		} else if err != nil {
			c.logDrop("re-attach session", err)
			return false
		}
	} else {
		resp, ok = expiredReply(req.HasReadOnly), false
	}
	return c.connectReply(resp, ok)
}

// retime gives session id the timeout its new connection negotiated,
// when it differs from the one it has: every node then expires it by the
// timeout its client was told (ZooKeeper's revalidateSession re-times a
// session with each new connection's timeout). It costs a replicated
// write only when the timeout changes.
func (s *Server) retime(id int64, timeout int32) error {
	if info, ok := s.fsm.Session(id); ok && info.Timeout == timeout {
		return nil
	}
	_, err := s.apply(&fsm.Command{Type: fsm.CmdSetSessionTimeout, Session: id, Timeout: timeout})
	return err
}

// expiredReply answers a session that is unknown, expired or has the wrong
// password: timeout 0, which the client reports as Expired.
func expiredReply(hasReadOnly bool) wire.ConnectResponse {
	return wire.ConnectResponse{Passwd: make([]byte, fsm.PasswordLen), HasReadOnly: hasReadOnly}
}

func (c *conn) connectReply(resp wire.ConnectResponse, ok bool) bool {
	if ok {
		if h := c.s.cfg.hooks; h != nil && h.beforeBind != nil {
			h.beforeBind(resp.SessionID)
		}
		c.s.bind(resp.SessionID, c)
		c.s.addReader(resp.SessionID, c)
		// An expiry applied after the session was checked found no
		// connection bound to close: check again now that this one is.
		if _, live := c.s.fsm.Session(resp.SessionID); !live && !c.readOnly.Load() {
			resp, ok = expiredReply(resp.HasReadOnly), false
		}
	}
	c.timeout = resp.TimeOut
	c.lastAt = c.s.fsm.LastZxid()
	var e wire.Encoder
	start := e.BeginFrame()
	resp.Encode(&e)
	e.EndFrame(start)
	// As ZooKeeper's cons after a handshake: lop=SESS, the session's
	// zxid and the handshake's latency. Counted before the reply leaves,
	// as every reply is (replySent): a client that has it may ask cons at
	// once.
	c.stats.sent.Add(1)
	c.s.stats.sent.Add(1)
	c.stats.lastOp.Store(int32(wire.OpCreateSession))
	now := time.Now()
	c.s.stats.latency.observe(c.created, now)
	c.stats.responded(c.created, now, c.lastAt)
	c.enqueue(e.Bytes())
	if err := c.flush(); err != nil {
		c.logDrop("handshake reply", err)
		return false
	}
	if h := c.s.cfg.hooks; h != nil && h.afterHandshakeReply != nil {
		h.afterHandshakeReply()
	}
	return ok
}

// sessionKnown reports whether session id exists, and whether that answer
// is certain. In a cluster a node may not have applied a session's
// creation yet (the client reconnected to it right after creating the
// session elsewhere): as ZooKeeper's learners ask the leader to validate a
// session, an unknown id is looked up again after catching up with the
// leader's commit index; if the leader cannot be reached the answer is not
// certain, so a live session is never reported expired by a lagging node.
func (s *Server) sessionKnown(id int64) (known, sure bool) {
	if _, ok := s.fsm.Session(id); ok || !s.cfg.clustered() {
		return ok, true
	}
	idx, err := s.syncIndex()
	if err != nil || s.waitApplied(idx, DefaultProposeTimeout) != nil {
		return false, false
	}
	_, ok := s.fsm.Session(id)
	return ok, true
}

// sessionServerID is the server id a new session's command carries for
// the top byte of session ids: 1 standalone, as ZooKeeperServer's
// createSessionTrackerServerId. A cluster's sessions are made by the
// replicated state machine with one counter, so they carry 0 rather than
// the myid of whichever node made the first one (ZooKeeper puts the myid
// of the server a client connected to).
func (s *Server) sessionServerID() int64 {
	if s.cfg.clustered() {
		return 0
	}
	return 1
}

// awaitMembership waits, up to timeout, until this node has applied a
// /zookeeper/config that names the cluster's members, and reports
// whether it has. A cluster's first leader publishes it right after its
// election, so for a moment a node may know its leader and still hold
// the empty node of a fresh state; a ZooKeeper server serves clients only
// once it has synced with its leader, which gives it the membership, so
// a client never reads /zookeeper/config empty from an ensemble member.
func (s *Server) awaitMembership(timeout time.Duration) bool {
	published := func() bool {
		data, _, err := s.fsm.Get(fsm.ConfigPath)
		return err == nil && len(data) > 0
	}
	if published() {
		return true // every handshake after the first moments
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		applied := s.nextApply()
		if published() {
			return true
		}
		select {
		case <-applied:
		case <-deadline.C:
			return false
		case <-s.ctx.Done():
			return false
		}
	}
}
