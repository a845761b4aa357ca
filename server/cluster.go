package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/session"
)

// Peer is one member of a cluster.
type Peer struct {
	// ID is the node id (ZooKeeper's myid / server.N).
	ID string
	// Addr is the node's cluster address (ZooKeeper's quorumPort): Raft and
	// forwarding share it.
	Addr string
	// ClientAddr is the node's client address, for information only.
	ClientAddr string
	// ElectionPort is zoo.cfg's electionPort: accepted, reported in
	// /zookeeper/config, and otherwise unused.
	ElectionPort string
	// Observer nodes are Raft non-voters: they serve reads and forward
	// writes but do not count towards the quorum.
	Observer bool
}

// RaftTimers are the Raft timing knobs of a cluster node.
type RaftTimers struct {
	Heartbeat   time.Duration
	Election    time.Duration
	LeaderLease time.Duration
	Commit      time.Duration
}

// DefaultRaftTimers suit a LAN cluster. Commit is Raft's commit timer:
// every 1–2× Commit the leader sends each follower an AppendEntries, with
// no entries when it has none, so that idle followers learn the commit
// index. pushCommits already tells them at once (followers answer a
// forwarded write only once they have applied it, as ZooKeeper's leader
// sends COMMIT at once), so the timer is only a fallback, and a short one
// costs an idle cluster CPU: at 1 ms (Raft's minimum) an idle 3-node
// cluster used a quarter of a core on this project's 2-core test machine,
// at 20 ms a twentieth, with writes and lock hand-offs as fast (README,
// "What changed").
var DefaultRaftTimers = RaftTimers{Heartbeat: time.Second, Election: time.Second,
	LeaderLease: 500 * time.Millisecond, Commit: 20 * time.Millisecond}

func (c *Config) clustered() bool { return len(c.Peers) > 0 }

func (c *Config) self() (Peer, error) {
	for _, p := range c.Peers {
		if sameID(p.ID, c.ID) {
			return p, nil
		}
	}
	lines := make([]string, len(c.Peers))
	for i, p := range c.Peers {
		lines[i] = "server." + p.ID
	}
	return Peer{}, fmt.Errorf("this node's id %s (myid or --id) has no server.%s line; the configuration has %s",
		c.ID, c.ID, strings.Join(lines, ", "))
}

// sameID reports whether two node ids name the same node: equal, or equal
// as numbers, as ZooKeeper reads server ids (server.01 and a myid of 1 are
// one server).
func sameID(a, b string) bool {
	if a == b {
		return true
	}
	x, errA := normalizeServerID(a)
	y, errB := normalizeServerID(b)
	return errA == nil && errB == nil && x == y
}

// peerAddr returns the cluster address this node's configuration gives
// peer id, unless it is a wildcard (0.0.0.0, ::: a node's own server line
// may name one, as the address to listen on). As in ZooKeeper, a node
// reaches its peers at the addresses its own server lines give them, not
// at whatever address they advertise: a node listening on 0.0.0.0
// advertises an address no one else can dial.
func (c *Config) peerAddr(id string) (string, bool) {
	for _, p := range c.Peers {
		if p.ID == id && p.ID != c.ID && !wildcardAddr(p.Addr) {
			return p.Addr, true
		}
	}
	return "", false
}

// wildcardAddr reports whether host:port names every interface.
func wildcardAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// raftAddrs resolves Raft's dial targets by node id (raft's
// ServerAddressProvider): the address in this node's configuration, else
// the one in Raft's (a member added later).
type raftAddrs struct{ cfg *Config }

func (a raftAddrs) ServerAddr(id raft.ServerID) (raft.ServerAddress, error) {
	if addr, ok := a.cfg.peerAddr(string(id)); ok {
		return raft.ServerAddress(addr), nil
	}
	return "", fmt.Errorf("no configured address for node %s", id)
}

func (c *Config) peerByAddr(addr string) string {
	for _, p := range c.Peers {
		if p.Addr == addr {
			return p.ID
		}
	}
	return ""
}

// leaderDuties runs what only the leader does: expire sessions, reap
// containers and TTL nodes, and create the cluster secret. It follows
// Raft's leadership signal for the server's lifetime.
func (s *Server) leaderDuties() {
	defer s.wg.Done()
	stop := func() {}
	defer func() { stop() }()
	for {
		select {
		case <-s.ctx.Done():
			return
		case leader := <-s.node.r.LeaderCh():
			stop()
			stop = func() {}
			if !leader {
				s.log.Info("lost leadership", "id", s.cfg.ID)
				continue
			}
			stop = s.startLeading()
		}
	}
}

// startLeading starts the leader-only goroutines and returns the function
// that stops them and waits for them to finish.
func (s *Server) startLeading() func() {
	if s.cfg.clustered() {
		s.log.Info("became leader", "id", s.cfg.ID)
	}
	s.mu.Lock()
	s.owners = make(map[int64]string)
	s.mu.Unlock()
	// A new leader grants every session a full fresh timeout.
	for _, si := range s.fsm.Sessions() {
		s.tracker.Add(si.ID, time.Duration(si.Timeout)*time.Millisecond)
	}
	s.tracker.ResetAll()
	ctx, cancel := context.WithCancel(s.ctx)
	var duties sync.WaitGroup
	for _, duty := range []func(context.Context){s.ensureSecret, s.runExpirer, s.reapLoop, s.ensureConfig, s.pushCommits} {
		duties.Add(1)
		go func() {
			defer duties.Done()
			duty(ctx)
		}()
	}
	return func() {
		cancel()
		duties.Wait()
	}
}

// runExpirer expires silent sessions while this node leads, as the
// leader of the term it had when it started leading.
func (s *Server) runExpirer(ctx context.Context) {
	term := s.node.r.CurrentTerm()
	s.tracker.Run(ctx, func(ids []int64) { s.expire(term, ids) })
}

// ensureConfig publishes the membership into /zookeeper/config when this
// leader finds it missing or stale (first start, or a change made by a
// previous leader that did not get to publish it).
func (s *Server) ensureConfig(ctx context.Context) {
	// Compare with the state once every committed entry is applied: a
	// leader elected right after a restart has not replayed its log yet,
	// and would find /zookeeper/config empty (or old) and publish the
	// membership without the election ports and client addresses only
	// /zookeeper/config holds, at a version below the current one.
	for {
		err := settled(s.node, s.node.r.Barrier(DefaultProposeTimeout)).Error()
		if ctx.Err() != nil || errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
			errors.Is(err, raft.ErrRaftShutdown) {
			return // no longer leading; the next leader checks
		}
		if err == nil {
			break
		}
		s.log.Warn("waiting to apply the log before checking /zookeeper/config", "err", err)
	}
	if !s.cfg.clustered() {
		// A standalone server's /zookeeper/config is empty, as ZooKeeper's.
		// A state restored from a cluster's snapshot holds that cluster's
		// membership, which clients following /zookeeper/config (Curator's
		// EnsembleTracker) would take as this server's.
		if data, _, err := s.fsm.Get(fsm.ConfigPath); err == nil && len(data) > 0 && ctx.Err() == nil {
			if _, err := s.apply(&fsm.Command{Type: fsm.CmdSetConfig, Data: []byte{}}); err != nil {
				s.log.Warn("could not clear /zookeeper/config", "err", err)
			}
		}
		return
	}
	if ctx.Err() != nil {
		return
	}
	if h := s.cfg.hooks; h != nil && h.beforeEnsureConfig != nil {
		h.beforeEnsureConfig()
	}
	// A membership the last leader did not get to publish gets a version
	// above every earlier one: the zxid this leader has applied up to.
	if ok, err := s.configPublished(); err == nil && !ok {
		if err := s.publishConfig(s.fsm.LastZxid(), nil); err != nil {
			s.log.Warn("could not publish /zookeeper/config", "err", err)
		}
	}
}

// ensureSecret proposes the cluster secret if the state has none yet.
func (s *Server) ensureSecret(ctx context.Context) {
	for !s.fsm.HasSecret() && ctx.Err() == nil {
		if err := proposeSecret(s.node); err == nil {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (s *Server) isLeader() bool { return s.node.r.State() == raft.Leader }

// ownedBy reports whether node peer serves session id, so its writes are
// accepted. With no owner recorded (this leader has not seen the session
// created or re-attached: a leader change), the first node to write for
// it becomes its owner, as in ZooKeeper's checkSession, so a stale
// connection elsewhere gets SessionMoved from then on.
func (s *Server) ownedBy(id int64, peer string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, ok := s.owners[id]
	if !ok {
		if s.owners != nil {
			s.owners[id] = peer
		}
		return true
	}
	return owner == peer
}

func (s *Server) setOwner(id int64, peer string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.owners != nil {
		s.owners[id] = peer
	}
}

// touchFromPeer applies a follower's batch of session touches, whoever
// owns the sessions, as ZooKeeper's leader takes its learners' pings: an
// attach that arrives late from a node the client has left would
// otherwise make the leader ignore the node the client now uses, and
// expire a live session (ownership only guards writes, SessionMoved).
func (s *Server) touchFromPeer(_ string, ids []int64) {
	for _, id := range ids {
		s.tracker.Touch(id)
	}
}

// touch records activity on a session: directly on the leader, batched to
// the leader on a follower.
func (s *Server) touch(id int64) {
	s.tracker.Touch(id)
	if s.batcher != nil && !s.isLeader() {
		s.batcher.Touch(id)
	}
}

// attach tells the leader that this node now serves session id, so a
// stale connection elsewhere gets SessionMoved. The leader validates the
// session as ZooKeeper's does a learner's re-validation: one that is gone
// or being expired answers ErrSessionExpired; otherwise the touch gives it
// a fresh timeout, so it cannot expire right after.
func (s *Server) attach(id int64) error {
	if !s.cfg.clustered() || s.isLeader() {
		return s.attachHere(id, s.cfg.ID)
	}
	_, err := s.fwd.call(&fwdRequest{Kind: fwdAttach, Session: id}, DefaultProposeTimeout, false)
	return err
}

// attachHere is attach on the leader, for a client of node peer.
func (s *Server) attachHere(id int64, peer string) error {
	if !s.tracker.Touch(id) {
		return wire.ErrSessionExpired
	}
	s.setOwner(id, peer)
	return nil
}

// syncIndex returns the index a sync must wait for: the last write
// committed when a quorum confirmed this leadership (see leaderSyncPoint).
// A sync that could not be run, for want of a leader or a connection to
// it, fails with errNoLeader: it changes nothing, so a caller may send it
// again (untilLeader).
func (s *Server) syncIndex() (int64, error) {
	if s.isLeader() {
		return s.leaderSyncPoint()
	}
	resp, err := s.fwd.call(&fwdRequest{Kind: fwdSync}, DefaultProposeTimeout, false)
	if err != nil && err.Error() == errFwdConn.Error() {
		err = errNoLeader // the leader connection broke: a sync changes nothing, so it may go again
	}
	if err != nil {
		return 0, err
	}
	return int64(resp.Index), nil
}

// leaderSyncPoint returns the zxid of the last write committed before
// the call, once this leader has applied it. A barrier does both: it
// commits only while this node leads (a quorum round, as VerifyLeader),
// and completes once every earlier entry is applied. The commit index
// itself would not do, since it may be a Raft-internal entry (a barrier
// from pushCommits, a configuration change) that never reaches the FSM
// and that followers learn of only on the next commit timer. A barrier
// refused because this node no longer leads (or is stepping down, or
// handing over) is errNoLeader: the sync may go to the next leader (a
// reconfig's answer through a follower syncs right after a removal that
// makes the leader step down, and was answered ConnectionLoss).
func (s *Server) leaderSyncPoint() (int64, error) {
	if err := settled(s.node, s.node.r.Barrier(DefaultProposeTimeout)).Error(); err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) ||
			errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return 0, errNoLeader
		}
		return 0, err
	}
	return s.fsm.LastZxid(), nil
}

// noteApplied publishes a new applied index (called from onApply). It
// wakes the waiters, if any took appliedCh since the last apply: a
// leader's own writes wait on their Raft futures, so most of its applies
// have none, and a fresh channel per apply was an allocation per write.
func (s *Server) noteApplied(zxid int64, term uint64) {
	s.appliedMu.Lock()
	if zxid > s.appliedIdx {
		s.appliedIdx, s.appliedTerm = zxid, term
	}
	if s.appliedChTaken {
		close(s.appliedCh)
		s.appliedCh, s.appliedChTaken = make(chan struct{}), false
	}
	s.appliedMu.Unlock()
}

// nextApply returns a channel closed by the next apply of an FSM entry.
// Take it before looking at the state, so that an apply in between is not
// missed.
func (s *Server) nextApply() <-chan struct{} {
	s.appliedMu.Lock()
	defer s.appliedMu.Unlock()
	s.appliedChTaken = true
	return s.appliedCh
}

// waitApplied waits until the local FSM has applied index idx (the
// index of an FSM entry: Raft-internal entries never signal appliedCh).
func (s *Server) waitApplied(idx int64, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.appliedMu.Lock()
		done, ch := s.appliedIdx >= idx, s.appliedCh
		s.appliedChTaken = s.appliedChTaken || !done
		s.appliedMu.Unlock()
		if done || s.fsm.LastZxid() >= idx {
			return nil
		}
		select {
		case <-ch:
		case <-deadline.C:
			return fmt.Errorf("paddock: index %d not applied within %v", idx, timeout)
		case <-s.ctx.Done():
			return errNoLeader
		}
	}
}

// Mode returns "standalone", "leader", "follower" or "observer", as
// ZooKeeper's srvr reports it.
func (s *Server) Mode() string {
	switch {
	case !s.cfg.clustered():
		return "standalone"
	case s.readOnlyNow():
		return "read-only"
	case s.isLeader():
		return "leader"
	case s.self.Observer:
		return "observer"
	}
	return "follower"
}

// IsLeader reports whether this node currently leads the cluster.
func (s *Server) IsLeader() bool { return s.isLeader() }

// Leader returns the current leader's node id, or "" if none is known or
// this node is not in the configuration it holds: a node whose removal
// has reached it follows no one, so it closes its clients' connections
// and refuses new ones at once (quorumWatch, handshake), instead of
// serving its frozen state until its Raft notices the leader's silence.
func (s *Server) Leader() string {
	_, id := s.node.r.LeaderWithID()
	if id == "" || (s.cfg.clustered() && !s.isMember(string(s.node.id))) {
		return ""
	}
	return string(id)
}

// startCluster opens the cluster port and wires forwarding.
func (s *Server) startCluster() error {
	self, err := s.cfg.self()
	if err != nil {
		return err
	}
	s.self = self
	bind := s.cfg.ClusterBind
	if bind == "" {
		bind = self.Addr
	}
	ln := s.cfg.ClusterListener
	if ln == nil {
		if ln, err = net.Listen("tcp", bind); err != nil {
			return fmt.Errorf("listen on cluster address %s: %w", bind, err)
		}
	}
	cn := s.cfg.ClusterNet
	if cn == nil {
		cn = tcpClusterNet{}
	}
	s.mux = newClusterMux(self.ID, ln, cn, s.cfg.peerByAddr)
	if s.cfg.ClusterTLS != nil {
		t := s.cfg.ClusterTLS.Clone()
		t.ClientAuth = tls.RequireAndVerifyClientCert
		if t.ClientCAs == nil {
			t.ClientCAs = t.RootCAs
		}
		if t.RootCAs == nil {
			t.RootCAs = t.ClientCAs
		}
		s.mux.tls = t
		s.mux.checkHost = !s.cfg.ClusterTLSNoHostCheck
		s.mux.log = s.log
	}
	s.mux.forward = s.serveForward
	s.mux.raftEnded = func(peer string) { go s.raftConnEnded(peer) }
	s.fwd = newForwarder(s)
	s.batcher = session.NewBatcher(s.cfg.TickTime/2, s.cfg.Clock, s.fwd.touch)
	go s.mux.serve()
	return nil
}

// quorumWatch drops every client connection while this node knows no
// leader (it is partitioned from the quorum, or an election is running),
// as a ZooKeeper server that loses its quorum does: clients then reconnect
// to a node of the majority within their session timeout. New connections
// are refused meanwhile (see handshake). It checks once per Raft heartbeat
// timeout and drops them at the second check in a row without a leader.
// A leader that came and went between two checks (Raft reports every
// change) ends the spell: a node that saw no leader while the cluster
// started and none again while a removed leader handed over, a few
// milliseconds, dropped its clients.
func (s *Server) quorumWatch() {
	defer s.wg.Done()
	var changes atomic.Uint64
	obs := raft.NewObserver(nil, false, func(o *raft.Observation) bool {
		if _, ok := o.Data.(raft.LeaderObservation); ok {
			changes.Add(1)
		}
		return false // counted here; nothing to deliver
	})
	s.node.r.RegisterObserver(obs)
	defer s.node.r.DeregisterObserver(obs)
	t := time.NewTicker(s.cfg.Raft.Heartbeat)
	defer t.Stop()
	var spell leaderlessSpell
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C:
		}
		if s.gate.closed() {
			continue // paused: a frozen process notices nothing
		}
		leader := s.Leader() != ""
		sawLeader, drop := spell.check(time.Now(), leader, changes.Load(), s.cfg.Raft.Heartbeat/2)
		if sawLeader && !leader {
			s.trackLeader(true) // one came and went: its spell starts now
		}
		s.trackLeader(leader)
		s.restoreHeartbeat()
		if drop {
			s.log.Warn("no leader: closing client connections until the quorum is back", "id", s.cfg.ID,
				"read_only_mode", s.cfg.ReadOnlyMode)
			s.dropConnections(func(c *conn) bool { return !c.readOnly.Load() })
		}
	}
}

// leaderlessSpell is quorumWatch's count of its checks without a leader.
type leaderlessSpell struct {
	seen    uint64    // Raft's leader changes counted at the last check
	since   time.Time // the spell's first check; zero: not in one
	dropped bool      // the spell's clients were dropped
}

// check records a check at now: whether a leader is known, and the
// number of leader changes Raft has reported. It reports whether a
// leader was known since the previous check, and whether to drop the
// clients: once per spell, at a check at least after its first.
func (l *leaderlessSpell) check(now time.Time, leader bool, changes uint64, after time.Duration) (sawLeader, drop bool) {
	if changes != l.seen {
		l.seen, sawLeader = changes, true
	}
	if leader || sawLeader {
		l.since, l.dropped = time.Time{}, false
	}
	switch {
	case leader:
		return true, false
	case l.since.IsZero():
		l.since = now
		return sawLeader, false
	case !l.dropped && now.Sub(l.since) >= after:
		l.dropped = true
		return sawLeader, true
	}
	return sawLeader, false
}

// proposeSecret proposes a fresh cluster secret.
func proposeSecret(n *raftNode) error {
	b, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdInit, Secret: newSecret()})
	if err != nil {
		return err
	}
	return settled(n, n.r.Apply(b, DefaultProposeTimeout)).Error()
}

// syncFuture resolves once this node has applied everything the leader
// had committed when the sync arrived (ZooKeeper's sync). A sync that
// finds no leader (one moving: a transfer, an election) waits for the
// next, up to the propose timeout, as a write waits in Raft's queue: it
// changes nothing, so sending it again is safe.
func (s *Server) syncFuture() raft.ApplyFuture {
	ff := &fwdFuture{done: make(chan struct{}), res: &fsm.Result{}}
	go func() {
		defer close(ff.done)
		var idx int64
		err := s.untilLeader(time.Now().Add(s.proposeTimeout()), func() (err error) {
			idx, err = s.syncIndex()
			return err
		})
		if err == nil {
			err = s.waitApplied(idx, DefaultProposeTimeout)
		}
		ff.res.Zxid, ff.err = idx, err // the reply reflects the state up to idx
	}()
	return ff
}
