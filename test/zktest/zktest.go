package zktest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/session"
)

// Option configures a Server.
type Option func(*options)

type options struct {
	observers int
	secure    bool
	cfg       server.Config
	clock     *session.ManualClock
	durable   bool
	logger    *slog.Logger
	commit    time.Duration // cluster Raft commit timer; 0: 2ms
}

// WithTickTime sets the tick (session-expiry granularity); default 100ms,
// so expiry tests stay fast. Session timeouts are clamped to [2, 20] ticks
// unless WithSessionTimeouts says otherwise.
func WithTickTime(d time.Duration) Option { return func(o *options) { o.cfg.TickTime = d } }

// WithSessionTimeouts sets the negotiated session-timeout bounds.
func WithSessionTimeouts(min, max time.Duration) Option {
	return func(o *options) { o.cfg.MinSessionTimeout, o.cfg.MaxSessionTimeout = min, max }
}

// WithFourLetterWords sets the 4lw whitelist ("*" for all; default all).
func WithFourLetterWords(words ...string) Option {
	return func(o *options) { o.cfg.FourLetterWords = words }
}

// WithReapInterval sets how often empty containers and expired TTL nodes
// are deleted (default 100ms). Server.Reap forces a sweep.
func WithReapInterval(d time.Duration) Option { return func(o *options) { o.cfg.ReapInterval = d } }

// WithMaxReapPerInterval bounds the nodes one container/TTL sweep deletes.
func WithMaxReapPerInterval(n int) Option { return func(o *options) { o.cfg.MaxReapPerInterval = n } }

// WithMaxFrame sets jute.maxbuffer, the largest request accepted.
func WithMaxFrame(n int) Option { return func(o *options) { o.cfg.MaxFrame = n } }

// WithMaxReplyFrame sets the largest reply to a read (server.Config.MaxReplyFrame).
func WithMaxReplyFrame(n int) Option { return func(o *options) { o.cfg.MaxReplyFrame = n } }

// WithMaxClientCnxns caps connections per client IP (default unlimited).
func WithMaxClientCnxns(n int) Option { return func(o *options) { o.cfg.MaxClientCnxns = n } }

// WithHandshakeTimeout bounds the time from accept to a complete
// ConnectRequest (or four-letter word); a slower client is disconnected.
func WithHandshakeTimeout(d time.Duration) Option {
	return func(o *options) { o.cfg.HandshakeTimeout = d }
}

// WithMaxOutboundBytes caps the bytes (replies and watch notifications)
// queued for one connection; a client that stops reading past it is
// disconnected.
func WithMaxOutboundBytes(n int) Option { return func(o *options) { o.cfg.MaxOutboundBytes = n } }

// WithManualClock drives session expiry from clock instead of real time:
// sessions expire only when the test calls clock.Advance (or
// Server.Advance). Client pings still refresh sessions in manual time.
func WithManualClock(clock *session.ManualClock) Option {
	return func(o *options) { o.clock = clock }
}

// WithDurableStorage keeps the Raft log in t.TempDir() instead of memory,
// so Restart is a real crash-free restart from disk. Restart preserves
// state either way; this option exercises the on-disk path.
func WithDurableStorage() Option { return func(o *options) { o.durable = true } }

// WithSnapshotEvery makes Raft snapshot every n log entries, keeping only
// n entries of log after each, so a follower that falls further behind
// catches up by snapshot install.
func WithSnapshotEvery(n uint64) Option {
	return func(o *options) {
		o.cfg.SnapshotThreshold, o.cfg.TrailingLogs = n, n
		o.cfg.SnapshotInterval = 50 * time.Millisecond
	}
}

// WithRaftCommitTimeout sets a cluster's Raft commit timer (default
// 2ms): the longest a follower may wait to learn of a commit when nothing
// else tells it sooner.
func WithRaftCommitTimeout(d time.Duration) Option { return func(o *options) { o.commit = d } }

// WithObservers makes the last k nodes of a cluster observers: Raft
// non-voters that serve reads and forward writes (server.N=...:observer).
func WithObservers(k int) Option { return func(o *options) { o.observers = k } }

// WithSuperDigest configures the super user: "user:base64(sha1(user:pw))"
// (ZooKeeper's DigestAuthenticationProvider.superDigest).
func WithSuperDigest(digest string) Option { return func(o *options) { o.cfg.SuperDigest = digest } }

// WithX509SuperUser makes the TLS client whose x509 identity is id a super
// user (ZooKeeper's X509AuthenticationProvider.superUser).
func WithX509SuperUser(id string) Option { return func(o *options) { o.cfg.X509SuperUser = id } }

// WithSkipACL disables ACL checks, as ZooKeeper's skipACL=yes.
func WithSkipACL() Option { return func(o *options) { o.cfg.SkipACL = true } }

// WithTLS also serves the client protocol over TLS on a second free
// loopback port (Server.SecureAddr) with cfg (set cfg.ClientCAs and
// ClientAuth to map client certificates to x509 identities).
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.cfg.TLS = cfg; o.secure = true } }

// WithClusterTLS secures a cluster's node-to-node traffic with mutual TLS:
// cfg holds the nodes' certificate and their CA (RootCAs).
func WithClusterTLS(cfg *tls.Config) Option { return func(o *options) { o.cfg.ClusterTLS = cfg } }

// WithReadOnlyMode lets cluster nodes cut off from the quorum serve
// read-only sessions (readonlymode.enabled).
func WithReadOnlyMode() Option { return func(o *options) { o.cfg.ReadOnlyMode = true } }

// WithReconfig enables the reconfig opcode (reconfigEnabled=true).
func WithReconfig() Option { return func(o *options) { o.cfg.ReconfigEnabled = true } }

// WithEnforceQuota makes hard quota limits refuse writes (enforceQuota).
func WithEnforceQuota() Option { return func(o *options) { o.cfg.EnforceQuota = true } }

// WithLogger sends the server's logs to l (default: discarded).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// Server is a running in-process Paddock server.
type Server struct {
	t    testing.TB
	opts options
	addr string

	mu  sync.Mutex
	srv *server.Server
	// disk is the Raft log's fault injector (nil with WithDurableStorage).
	disk *faultDisk
}

// Start starts a server on a free 127.0.0.1 port, ready to serve when it
// returns, and registers t.Cleanup to stop it.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	o := buildOptions(t, opts)
	s := &Server{t: t, opts: o}
	if !o.durable {
		s.opts.cfg.Stores, s.disk = memoryStoresWithDisk()
	}
	s.start("127.0.0.1:0")
	t.Cleanup(s.Stop)
	return s
}

func buildOptions(t testing.TB, opts []Option) options {
	o := options{cfg: server.DefaultConfig()}
	o.cfg.TickTime = 100 * time.Millisecond
	o.cfg.ReapInterval = 100 * time.Millisecond
	o.cfg.MaxClientCnxns = 0
	o.cfg.FourLetterWords = []string{"*"}
	for _, opt := range opts {
		opt(&o)
	}
	if o.clock != nil {
		o.cfg.Clock = o.clock
	}
	if o.logger == nil {
		o.logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	o.cfg.Logger = o.logger
	if o.durable {
		o.cfg.DataDir = t.TempDir()
	}
	return o
}

func (s *Server) start(addr string) {
	s.t.Helper()
	if err := s.startErr(addr, nil, nil); err != nil {
		s.t.Fatalf("zktest: start server: %v", err)
	}
}

// startErr starts the server on the client listener ln (nil: listen on
// addr); a cluster node also gets its cluster listener (nil: listen again
// on its address).
func (s *Server) startErr(addr string, ln, clusterLn net.Listener) error {
	cfg := s.opts.cfg
	var err error
	if ln == nil {
		if ln, err = listenAgain(addr); err != nil {
			return err
		}
	}
	cfg.Listener = ln
	if s.opts.secure {
		sec, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			ln.Close()
			return err
		}
		cfg.SecureListener = sec
	}
	if cfg.ID != "" {
		if clusterLn == nil {
			for _, p := range cfg.Peers {
				if p.ID == cfg.ID {
					if clusterLn, err = listenAgain(p.Addr); err != nil {
						ln.Close()
						return err
					}
				}
			}
		}
		cfg.ClusterListener = clusterLn
	}
	srv, err := server.New(cfg)
	if err != nil {
		ln.Close()
		if clusterLn != nil {
			clusterLn.Close()
		}
		return err
	}
	s.mu.Lock()
	s.srv, s.addr = srv, ln.Addr().String()
	s.mu.Unlock()
	return nil
}

// running returns the server if it runs, else nil.
func (s *Server) running() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv
}

func (s *Server) server() *server.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		s.t.Fatalf("zktest: server is stopped")
	}
	return s.srv
}

// Addr returns "host:port".
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// SecureAddr returns the TLS client address ("host:port"), with WithTLS.
func (s *Server) SecureAddr() string {
	if a := s.server().SecureAddr(); a != nil {
		return a.String()
	}
	return ""
}

// Servers returns the address list for go-zookeeper's zk.Connect or
// client.Connect.
func (s *Server) Servers() []string { return []string{s.Addr()} }

// ExpireSession expires session id now, exactly as a timeout would end it
// in ZooKeeper: its ephemerals are deleted (watchers get NodeDeleted and
// NodeChildrenChanged), and its connection is closed, so the client sees a
// disconnect and, when it reconnects, StateExpired. It returns
// wire.ErrSessionExpired if no such session exists.
func (s *Server) ExpireSession(id int64) error { return s.server().ExpireSession(id) }

// DropConnections closes every client TCP connection. Sessions live on:
// clients reconnect within their timeout with the same session, and
// restore their watches (go-zookeeper sees StateDisconnected, then
// StateHasSession with the same SessionID).
func (s *Server) DropConnections() { s.server().DropConnections() }

// DropSession closes the TCP connection of session id only; the session
// lives on, as with DropConnections.
func (s *Server) DropSession(id int64) { s.server().DropSession(id) }

// Stop stops the server: every connection closes and the port is released.
// Clients see a disconnect and keep retrying. State is kept for Restart.
// Stop is idempotent and is called by t.Cleanup.
func (s *Server) Stop() {
	s.mu.Lock()
	srv := s.srv
	s.srv = nil
	s.mu.Unlock()
	if srv != nil {
		if err := srv.Close(); err != nil {
			s.t.Logf("zktest: stop: %v", err)
		}
	}
}

// Restart stops the server if it runs and starts it again on the same
// port with the same data. Sessions survive and each gets a fresh full
// timeout, so clients that reconnect within it keep their session.
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	s.start(s.Addr())
}

// Advance moves the manual clock (WithManualClock) forward by d, expiring
// every session not heard from within its timeout; it returns once those
// expiries are applied (their ephemerals deleted, their watches fired).
// The manual clock drives session expiry only: TTL nodes age by the real
// clock.
func (s *Server) Advance(d time.Duration) {
	s.t.Helper()
	if s.opts.clock == nil {
		s.t.Fatalf("zktest: Advance needs WithManualClock")
	}
	s.opts.clock.Advance(d)
	deadline := time.Now().Add(advanceSettleTimeout)
	for !s.server().ExpiriesSettled() {
		if time.Now().After(deadline) {
			s.t.Fatalf("zktest: the expiries due after Advance(%v) were not applied within %v", d, advanceSettleTimeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// advanceSettleTimeout bounds how long Advance waits for the expiries it
// makes due to be applied.
const advanceSettleTimeout = 10 * time.Second

// Reap deletes empty containers and expired TTL nodes now; it returns how
// many nodes were deleted.
func (s *Server) Reap() int { return s.server().Reap() }

// Server returns the underlying server (for its FSM and watch registry).
func (s *Server) Server() *server.Server { return s.server() }

// Node describes one znode in Tree.
type Node struct {
	Path string
	Data []byte
	Stat wire.Stat
}

// Tree returns every znode (except / and /zookeeper), sorted by path,
// with its data and Stat; Stat.EphemeralOwner names ephemeral owners.
func (s *Server) Tree() []Node {
	f := s.server().FSM()
	var out []Node
	stack := []string{"/"}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		kids, _, err := f.Children(p)
		if err != nil {
			continue
		}
		for _, k := range kids {
			child := wire.JoinPath(p, k)
			if child == fsm.ZooKeeperPath {
				continue
			}
			data, st, err := f.Get(child)
			if err == nil {
				out = append(out, Node{Path: child, Data: data, Stat: st})
				stack = append(stack, child)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// Sessions returns the live sessions, sorted by id.
func (s *Server) Sessions() []fsm.SessionInfo { return s.server().FSM().Sessions() }

// Watch is one registered watch, for Watches.
type Watch struct {
	Path    string
	Session int64
}

// Watches returns every registered watch (data, child and persistent),
// sorted by path then session.
func (s *Server) Watches() []Watch {
	var out []Watch
	for p, ids := range s.server().Watches().ByPath() {
		for _, id := range ids {
			out = append(out, Watch{Path: p, Session: id})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Path != out[j].Path {
			return out[i].Path < out[j].Path
		}
		return out[i].Session < out[j].Session
	})
	return out
}

// Notifications returns how many watch notifications the server has sent.
func (s *Server) Notifications() uint64 { return s.server().Watches().Stats().Notifications }

func (s *Server) String() string { return fmt.Sprintf("zktest.Server(%s)", s.Addr()) }

// relistenTimeout bounds how long a restart waits for its old port: the
// port a stopped server freed is an ephemeral one, which an outgoing
// connection (a client reconnecting meanwhile) may hold for a moment.
const relistenTimeout = 5 * time.Second

// listenAgain listens on addr (a port this server or node used before),
// trying again while it is in use, for at most relistenTimeout.
func listenAgain(addr string) (net.Listener, error) {
	deadline := time.Now().Add(relistenTimeout)
	for {
		ln, err := net.Listen("tcp", addr)
		if err == nil || !errors.Is(err, syscall.EADDRINUSE) || time.Now().After(deadline) {
			return ln, err
		}
		time.Sleep(10 * time.Millisecond)
	}
}
