package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/session"
	"github.com/paddockzk/paddock/watch"
)

// Server is a ZooKeeper-compatible server: a client listener in front of a
// Raft-replicated fsm.
type Server struct {
	cfg      Config
	log      *slog.Logger
	fsm      *fsm.FSM
	node     *raftNode
	watches  *watch.Manager
	tracker  *session.Tracker
	ln       net.Listener
	secureLn net.Listener
	started  time.Time

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	conns     map[*conn]struct{}
	bySession map[int64]*conn
	readers   map[int64]map[*conn]struct{} // connections still reading each session's requests
	perIP     map[string]int
	closed    bool
	// closeDone is closed when the first Close returns: a concurrent
	// Close (the server stopping itself on a failure while its owner
	// closes it) waits for it, so that every Close returns with the
	// listeners closed and Raft stopped.
	closeDone chan struct{}

	nextConnID       atomic.Uint64
	nextLocalSession atomic.Uint64
	noLeaderSince    atomic.Int64 // monoNow since this node knows no leader; 0 with one (trackLeader)
	readOnlyServed   atomic.Bool  // a read-only session was served since the leader was last seen
	stats            serverStats
	metrics          *metrics
	http             []*http.Server
	gate             gate
	notifier         *notifier

	// Cluster plumbing (nil when standalone).
	self    Peer
	mux     *clusterMux
	fwd     *forwarder
	batcher *session.Batcher
	soon    sooner           // electing sooner after the leader's process died
	owners  map[int64]string // leader only: session -> serving node

	appliedMu  sync.Mutex
	appliedIdx int64
	// appliedTerm is the Raft term of the entry at appliedIdx.
	appliedTerm uint64
	appliedCh   chan struct{}
	// appliedChTaken: a waitApplied holds appliedCh (noteApplied).
	appliedChTaken bool
	// commitNudge wakes pushCommits after each applied entry.
	commitNudge chan struct{}

	// nodeReady is closed once node is set: the cluster mux serves peers
	// (forwarded requests) from before Raft starts, and a restarted node
	// may lead, and be forwarded to, before New has stored its Raft.
	nodeReady chan struct{}

	// transferGate holds this leader's proposals while it hands its
	// leadership over (transfer.go).
	transferGate gate
	// reconfigMu runs this leader's reconfigs one at a time (reconfig.go).
	reconfigMu sync.Mutex
	// handoffAt is when this leader's removal of itself was committed
	// (monoNow), until it hands its leadership over; 0 otherwise
	// (handoff.go).
	handoffAt atomic.Int64

	// stopping is set when shutdown begins: enqueue proposes nothing
	// more (hashicorp/raft's ApplyLog after its shutdown may put the
	// proposal in its buffered apply channel, where nothing answers it).
	// A proposal that a goroutine shutdown does not wait for (a
	// forwarded write, an admin request) makes just before Raft stops
	// can still be left there, or in Raft's queue to the FSM: its
	// future is settled on the node's stop (raftstop.go), so its wait
	// ends with raft.ErrRaftShutdown once Raft has stopped.
	stopping atomic.Bool

	// failed is closed, and failure set, when the server stops itself
	// (fatal.go).
	failed   chan struct{}
	failOnce sync.Once
	failure  error
}

// New starts a server: Raft, the fsm, and the client listener. It returns
// once the server is ready to serve clients; Close stops it.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: cfg.Logger, fsm: fsm.New(), started: time.Now(),
		conns: make(map[*conn]struct{}), bySession: make(map[int64]*conn),
		readers: make(map[int64]map[*conn]struct{}), perIP: make(map[string]int),
		appliedCh: make(chan struct{}), commitNudge: make(chan struct{}, 1), failed: make(chan struct{}),
		closeDone: make(chan struct{}),
		nodeReady: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.notifier = newNotifier(s.ctx.Done())
	for range notifyWriters() {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.notifier.run()
		}()
	}
	s.watches = watch.New(watch.Options{MaxWatchesPerWatcher: cfg.MaxWatchesPerSession, OnFanout: s.onFanout, Deliver: s.deliver,
		OnImmediate: s.onImmediate})
	s.metrics = newMetrics(s)
	s.tracker = session.NewTracker(cfg.TickTime, cfg.Clock)
	s.fsm.OnApply = s.onApply
	if s.cfg.clustered() {
		if err := s.startCluster(); err != nil {
			s.cancel() // stops the notifier goroutines
			return nil, err
		}
	}
	node, err := startRaft(&s.cfg, s.fsm, s.mux, s.fwd, s.fail)
	if err != nil {
		s.closeCluster()
		s.cancel()
		return nil, err
	}
	s.node = node
	close(s.nodeReady)
	s.wg.Add(1)
	go s.leaderDuties()
	if s.cfg.clustered() {
		s.wg.Add(1)
		go s.quorumWatch()
	}
	if s.batcher != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.batcher.Run(s.ctx)
		}()
	}
	if err := s.waitReady(StartTimeout); err != nil {
		s.shutdown()
		return nil, err
	}
	s.ln = cfg.Listener
	if s.ln == nil && !cfg.NoClientPort {
		if s.ln, err = net.Listen("tcp", cfg.addr()); err != nil {
			s.shutdown()
			return nil, fmt.Errorf("listen on %s: %w", cfg.addr(), err)
		}
	}
	if err := s.startHTTP(); err != nil {
		s.closeClientLn()
		s.shutdown()
		return nil, err
	}
	if err := s.listenSecure(); err != nil {
		s.closeClientLn()
		s.shutdown()
		return nil, err
	}
	if s.ln != nil {
		s.wg.Add(1)
		go s.acceptLoop(s.ln, nil)
	}
	go s.stopOnFailure()
	return s, nil
}

// StartTimeout bounds how long New waits for a leader and the cluster
// secret before giving up.
var StartTimeout = 60 * time.Second

// waitReady waits until a leader is known and this node has applied the
// cluster secret (so it can check session passwords).
func (s *Server) waitReady(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if err := s.Err(); err != nil {
			return err // a failed store write stopped the server (fail)
		}
		if time.Now().After(deadline) {
			return errors.New("paddock: no leader elected within " + timeout.String())
		}
		if !s.fsm.HasSecret() || s.Leader() == "" {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		if !s.isLeader() {
			return nil
		}
		// Apply every committed entry before serving (a restart replays
		// its log), so clients never see an older state than they saw. If
		// leadership moves meanwhile, look again.
		if s.barrierOrFailure(time.Until(deadline)) == nil {
			return nil
		}
	}
}

// barrierOrFailure is a Raft barrier that returns once the server failed,
// too: a leader whose log write failed never applies the barrier (it
// waits for the write, durableFSM) until shutdown releases it, which
// would have to wait for New. (The timeout bounds the barrier's
// queueing only, as before: replaying a long log may take longer.)
func (s *Server) barrierOrFailure(timeout time.Duration) error {
	f := settled(s.node, s.node.r.Barrier(timeout))
	done := make(chan error, 1)
	go func() { done <- f.Error() }() // ends at the latest when Raft has stopped (settled)
	select {
	case err := <-done:
		return err
	case <-s.failed:
		return s.Err()
	}
}

func (s *Server) closeCluster() {
	if s.fwd != nil {
		s.fwd.close()
	}
	if s.mux != nil {
		s.mux.close()
	}
}

// shutdown stops background work, Raft and the cluster port.
func (s *Server) shutdown() {
	s.stopping.Store(true)
	s.cancel()
	s.closeCluster()
	// No client or peer connection is left to answer, so the FSM may stop
	// waiting for a leader log write (leaderLog) and let Raft shut down.
	s.node.release()
	s.wg.Wait()
	s.node.close()
}

// Addr returns the client listener's address, or nil without one
// (Config.NoClientPort).
func (s *Server) Addr() net.Addr {
	if s.ln == nil {
		return nil
	}
	return s.ln.Addr()
}

// closeClientLn closes the plaintext client listener, if there is one.
func (s *Server) closeClientLn() error {
	if s.ln == nil {
		return nil
	}
	return s.ln.Close()
}

// FSM returns the server's state machine (for inspection in tests).
func (s *Server) FSM() *fsm.FSM { return s.fsm }

// Watches returns the server's watch registry (for inspection).
func (s *Server) Watches() *watch.Manager { return s.watches }

// Close stops accepting, closes every connection and shuts Raft down.
// Sessions are not closed: with a data dir they survive a restart.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		<-s.closeDone
		return nil
	}
	s.closed = true
	defer close(s.closeDone)
	conns := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	err := s.closeClientLn()
	if s.secureLn != nil {
		_ = s.secureLn.Close()
	}
	for _, hs := range s.http {
		_ = hs.Close()
	}
	for _, c := range conns {
		c.close()
	}
	s.shutdown()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

func (s *Server) acceptLoop(ln net.Listener, tlsCfg *tls.Config) {
	defer s.wg.Done()
	for {
		nc, err := ln.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept failed", "err", err)
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if tlsCfg != nil {
			nc = tls.Server(nc, tlsCfg)
		}
		c, ok := s.admit(nc)
		if !ok {
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			c.serve()
		}()
	}
}

// admit registers a new connection, enforcing the per-IP limit.
func (s *Server) admit(nc net.Conn) (*conn, bool) {
	ip := remoteIP(nc)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = nc.Close()
		return nil, false
	}
	if s.cfg.MaxClientCnxns > 0 && s.perIP[ip] >= s.cfg.MaxClientCnxns {
		s.log.Warn("too many connections from one address", "ip", ip, "max", s.cfg.MaxClientCnxns)
		s.stats.rejected.Add(1)
		_ = nc.Close()
		return nil, false
	}
	s.perIP[ip]++
	c := newConn(s, nc, ip)
	s.conns[c] = struct{}{}
	return c, true
}

func (s *Server) forget(c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.conns[c]; !ok {
		return
	}
	delete(s.conns, c)
	if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
		delete(s.perIP, c.ip)
	}
	if id := c.sessionID.Load(); id != 0 && s.bySession[id] == c {
		delete(s.bySession, id)
	}
}

// bind attaches session id to c, closing any older connection of the same
// session (ZooKeeper closes it as the client reconnected elsewhere).
func (s *Server) bind(id int64, c *conn) {
	s.mu.Lock()
	old := s.bySession[id]
	s.bySession[id] = c
	s.mu.Unlock()
	c.sessionID.Store(id)
	if old != nil && old != c {
		old.close()
	}
}

func (s *Server) connOf(id int64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bySession[id]
}

// onApply runs inside fsm.Apply with the state lock held: it queues watch
// notifications before the new state is readable and keeps the expiry
// queue in step with the session table. It never blocks.
func (s *Server) onApply(r *fsm.Result) {
	for _, ev := range r.Events {
		s.watches.TriggerFiltered(r.Zxid, ev.Path, ev.Type, s.readFilter(ev.ACL))
	}
	if s.cfg.clustered() {
		defer s.nudgeCommitPush() // after noteApplied (defers run last-first)
	}
	defer s.noteApplied(r.Zxid, r.Term)
	for _, q := range r.QuotaWarnings {
		s.log.Warn("quota exceeded", "path", q, "zxid", hexID(r.Zxid))
	}
	if r.Session != 0 {
		s.tracker.Add(r.Session, time.Duration(r.Timeout)*time.Millisecond)
	}
	if r.Closed != 0 {
		s.tracker.Remove(r.Closed)
		s.mu.Lock()
		delete(s.owners, r.Closed)
		s.mu.Unlock()
		s.watches.ForgetSession(r.Closed) // its notification counters
		if c := s.connOf(r.Closed); c != nil {
			c.sessionGone(r.Zxid)
		}
	}
}

// propose submits a command to Raft, stamping this node's time (the FSM
// uses the leader's append time when the entry has one: fsm.Apply).
func (s *Server) propose(cmd *fsm.Command) raft.ApplyFuture { return s.proposeOn(cmd, nil) }

// proposeOn proposes cmd for a client connection whose writes must keep
// their order through a follower (lane, see fwdorder.go).
func (s *Server) proposeOn(cmd *fsm.Command, lane *fwdLane) raft.ApplyFuture {
	cmd.Time = time.Now().UnixMilli()
	b, err := fsm.EncodeCommand(cmd)
	if err != nil {
		return errFuture{err}
	}
	s.transferGate.wait(s.ctx.Done())
	if s.isLeader() || !s.cfg.clustered() {
		if owner := ownerChecked(cmd); owner != 0 && !s.ownedBy(owner, s.cfg.ID) {
			return errFuture{wire.ErrSessionMoved}
		}
		if lane != nil && s.fwd != nil {
			return s.fwd.proposeLocal(lane, s.node.r.CurrentTerm(), func() raft.ApplyFuture { return s.enqueue(raft.Log{Data: b}) })
		}
		return s.enqueue(raft.Log{Data: b})
	}
	return s.forward(b, ownerChecked(cmd), cmd.Type == fsm.CmdOps, lane)
}

// proposeTimeout is Config.ProposeTimeout or its default.
func (s *Server) proposeTimeout() time.Duration {
	if s.cfg.ProposeTimeout > 0 {
		return s.cfg.ProposeTimeout
	}
	return DefaultProposeTimeout
}

// enqueue hands l to this node's Raft. A proposal Raft refused without
// appending it, because its queue stayed full for the propose timeout,
// comes back as an errFuture, known before enqueue returns: the caller
// must then propose nothing more of the same client, or a later write
// could be applied after one that was not (ZooKeeper never skips one).
// Raft's Apply fails at once only for that timeout or a shutdown, so
// only an Apply that took the whole timeout is asked for its error. Once
// the server is stopping it proposes nothing (stopping).
func (s *Server) enqueue(l raft.Log) raft.ApplyFuture {
	if s.stopping.Load() {
		return errFuture{raft.ErrRaftShutdown}
	}
	timeout := s.proposeTimeout()
	start := time.Now()
	f := settled(s.node, s.node.r.ApplyLog(l, timeout))
	if time.Since(start) < timeout {
		return f
	}
	if err := f.Error(); err != nil {
		s.metrics.writesRefused.Inc()
		return errFuture{err}
	}
	return f
}

// ownerChecked is the session whose ownership the leader checks before it
// proposes cmd (SessionMoved), or 0. As ZooKeeper, it checks neither an
// expiry nor a closeSession: the last request of a session is accepted
// from any node.
func ownerChecked(cmd *fsm.Command) int64 {
	if cmd.Type == fsm.CmdExpireSession || cmd.Type == fsm.CmdCloseSession {
		return 0
	}
	return cmd.Session
}

// apply proposes cmd and waits for its result.
func (s *Server) apply(cmd *fsm.Command) (*fsm.Result, error) {
	return resultOf(s.propose(cmd))
}

// resultOf waits for an applied command's result. A future that succeeded
// without a result carries an error instead: durableFSM's errLogReleased
// for an entry the stopping server never applied.
func resultOf(f raft.ApplyFuture) (*fsm.Result, error) {
	if err := f.Error(); err != nil {
		return nil, err
	}
	switch r := f.Response().(type) {
	case *fsm.Result:
		return r, nil
	case error:
		return nil, r
	default:
		return nil, fmt.Errorf("raft: unexpected apply response %T", r)
	}
}

// errFuture is an ApplyFuture that failed before reaching Raft.
type errFuture struct{ err error }

func (e errFuture) Error() error          { return e.err }
func (e errFuture) Response() interface{} { return nil }
func (e errFuture) Index() uint64         { return 0 }

// refusedAtOnce reports whether f is a proposal refused before it reached
// Raft's log (its error is known now).
func refusedAtOnce(f raft.ApplyFuture) bool {
	ef, ok := f.(errFuture)
	return ok && ef.err != nil
}

// expire proposes, as the leader of term, the expiry of sessions its
// tracker found silent. It proposes only to this node's own Raft, never
// forwarding: a leader deposed while its tracker fires has learned the new
// term, and its expiry forwarded to the new leader would carry that term
// and apply, although the new leader gave every session a fresh timeout.
// Proposed here, it fails (not leader) or carries a term the entry's does
// not match, and is ignored when applied.
func (s *Server) expire(term uint64, ids []int64) {
	for _, id := range ids {
		cmd := &fsm.Command{Type: fsm.CmdExpireSession, Session: id, Term: term}
		cmd.Time = time.Now().UnixMilli()
		res, err := s.proposeHere(cmd)
		if err != nil {
			if s.ctx.Err() == nil {
				s.tracker.Requeue(id)
			}
			continue
		}
		s.tracker.Remove(id)
		s.log.Debug("session expired", "session", fmt.Sprintf("0x%x", id), "err", res.Err)
	}
}

// proposeHere proposes cmd to this node's Raft and waits for its result;
// it fails with raft.ErrNotLeader on a node that does not lead.
func (s *Server) proposeHere(cmd *fsm.Command) (*fsm.Result, error) {
	b, err := fsm.EncodeCommand(cmd)
	if err != nil {
		return nil, err
	}
	return resultOf(settled(s.node, s.node.r.Apply(b, DefaultProposeTimeout)))
}

// ExpiriesSettled reports whether this node's expirer has expired every
// session due by its clock's now and waits for a later one (false on a
// node that does not lead). With a manual clock (Config.Clock), a test
// waits for it after advancing the clock.
func (s *Server) ExpiriesSettled() bool { return s.isLeader() && s.tracker.Settled() }

// ExpireSession ends session id now, exactly as a timeout would.
func (s *Server) ExpireSession(id int64) error {
	res, err := s.apply(&fsm.Command{Type: fsm.CmdExpireSession, Session: id, Term: s.node.r.CurrentTerm()})
	if err != nil {
		return err
	}
	return res.Err.Err()
}

func (s *Server) reapLoop(ctx context.Context) {
	t := time.NewTicker(s.cfg.ReapInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.Reap()
		}
	}
}

// Reap deletes empty containers and expired TTL nodes now, as the periodic
// sweep does; it returns how many nodes were deleted.
func (s *Server) Reap() int {
	n := 0
	for _, p := range s.fsm.ReapCandidates(time.Now().UnixMilli(), s.cfg.MaxReapPerInterval) {
		res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: opDeleteContainer, Path: p}}})
		if err == nil && res.Err == 0 {
			n++
		}
	}
	return n
}

// DropConnections closes every client connection; sessions live on.
func (s *Server) DropConnections() { s.dropConnections(func(*conn) bool { return true }) }

func (s *Server) dropConnections(which func(*conn) bool) {
	for _, c := range s.connList() {
		if which(c) {
			c.close()
		}
	}
}

// snapshotInstalled runs on Raft's FSM goroutine once a snapshot from the
// leader replaced this node's state. The tree changed without events, so
// watches armed against the old state would never fire: every client
// connection is closed (sessions live on), as a ZooKeeper follower that
// syncs from a snapshot restarts and drops its clients; they reconnect and
// re-register their watches with the last zxid they saw (setWatches),
// which fires what they missed. Writes this node forwarded and is waiting
// to apply fail too (failTagged): their entries may be in the snapshot.
func (s *Server) snapshotInstalled() {
	s.fwd.failTagged()
	s.dropConnections(func(*conn) bool { return true })
}

// DropSession closes the connection of session id, if any; the session
// lives on.
func (s *Server) DropSession(id int64) {
	if c := s.connOf(id); c != nil {
		c.close()
	}
}

// Snapshot takes a Raft snapshot now (compacting the log). A snapshot
// already covering every entry counts as success.
func (s *Server) Snapshot() error {
	err := s.node.r.Snapshot().Error()
	if errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil
	}
	return err
}

// RaftStats returns hashicorp/raft's statistics (state, term, indexes,
// last_snapshot_index, ...).
func (s *Server) RaftStats() map[string]string { return s.node.r.Stats() }

// readFilter drops notifications to watchers without READ on the node, as
// ZooKeeper 3.8.4+/3.9.2+ does; nil (deliver all) when ACLs are skipped or
// the node is world-readable.
func (s *Server) readFilter(acl []wire.ACL) func(watch.Watcher) bool {
	if s.cfg.SkipACL || fsm.CheckACL(acl, wire.PermRead, nil) {
		return nil
	}
	return func(w watch.Watcher) bool {
		c, ok := w.(*conn)
		return !ok || c.allowed(acl, wire.PermRead)
	}
}

// listenSecure starts the TLS client port, if configured.
func (s *Server) listenSecure() error {
	ln := s.cfg.SecureListener
	if ln == nil && s.cfg.SecurePort > 0 {
		bind := s.cfg.SecureBind
		if bind == "" {
			bind = s.cfg.Bind
		}
		var err error
		if ln, err = net.Listen("tcp", net.JoinHostPort(bind, strconv.Itoa(s.cfg.SecurePort))); err != nil {
			return fmt.Errorf("listen on secure client port: %w", err)
		}
	}
	if ln == nil {
		return nil
	}
	s.secureLn = ln
	s.wg.Add(1)
	go s.acceptLoop(ln, s.cfg.TLS)
	s.log.Info("serving ZooKeeper clients over TLS", "addr", ln.Addr().String())
	return nil
}

// SecureAddr returns the TLS client listener's address, or nil.
func (s *Server) SecureAddr() net.Addr {
	if s.secureLn == nil {
		return nil
	}
	return s.secureLn.Addr()
}
