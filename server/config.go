package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/session"
)

// Defaults. Every limit is a named constant and a Config field.
const (
	// DefaultPort is ZooKeeper's client port.
	DefaultPort = 2181
	// DefaultBind is the address `paddock server` listens on with no flags.
	DefaultBind = "127.0.0.1"
	// DefaultTickTime is ZooKeeper's tickTime: the session-expiry bucket.
	DefaultTickTime = 2 * time.Second
	// DefaultMaxClientCnxns caps concurrent connections per client IP
	// (ZooKeeper's maxClientCnxns); 0 means unlimited.
	DefaultMaxClientCnxns = 60
	// DefaultMaxOutstanding caps requests in flight per connection; past it
	// the server stops reading that connection until replies drain.
	DefaultMaxOutstanding = 1000
	// DefaultMaxOutboundBytes caps bytes queued for one connection (replies
	// and notifications). A client that stops reading past it is
	// disconnected rather than allowed to grow the server's memory.
	DefaultMaxOutboundBytes = 32 << 20
	// DefaultHandshakeTimeout bounds the time from accept to a complete
	// ConnectRequest (or four-letter word).
	DefaultHandshakeTimeout = 10 * time.Second
	// DefaultWriteTimeout bounds one socket write.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultReapInterval is how often the leader looks for empty
	// containers and expired TTL nodes (znode.container.checkIntervalMs).
	DefaultReapInterval = 60 * time.Second
	// DefaultMaxReapPerInterval bounds deletions per sweep
	// (znode.container.maxPerMinute at the default interval).
	DefaultMaxReapPerInterval = 10000
	// DefaultProposeTimeout bounds how long a write waits to enter Raft.
	DefaultProposeTimeout = 10 * time.Second
	// DefaultReattachWait bounds how long a session re-attaching to this
	// node waits for its older connections' requests (sessionorder.go). A
	// reader stops as soon as its socket closes unless it is handing a
	// proposal to Raft, which DefaultProposeTimeout bounds.
	DefaultReattachWait = DefaultProposeTimeout
	// DefaultSnapshotThreshold is how many log entries trigger a snapshot.
	DefaultSnapshotThreshold = 100000
)

// DefaultFourLetterWords is the 4lw whitelist when none is configured.
// ZooKeeper's own default is only "srvr"; Paddock allows the read-only
// diagnostics that tools (and go-zookeeper's FLW helpers) use.
var DefaultFourLetterWords = []string{"ruok", "srvr", "stat", "mntr", "cons", "conf", "envi",
	"wchs", "wchc", "wchp", "dump", "isro", "dirs"}

// Config configures a Server. Start from DefaultConfig.
type Config struct {
	// hooks are set by this package's tests only.
	hooks *testHooks

	// Bind and Port are the client address. Port 0 picks a free port.
	Bind string
	Port int
	// Listener, if set, is used instead of Bind/Port.
	Listener net.Listener
	// SecurePort and SecureBind are the TLS client address
	// (ZooKeeper's secureClientPort); SecureListener overrides them. TLS
	// is its configuration (certificate; ClientCAs and ClientAuth to
	// verify client certificates, which become x509 identities).
	SecurePort     int
	SecureBind     string
	SecureListener net.Listener
	TLS            *tls.Config
	// ClusterTLS, if set, secures the cluster port with mutual TLS: it must
	// hold this node's certificate and the CAs peers' certificates chain
	// to (used both to serve and to dial; client certificates required).
	ClusterTLS *tls.Config
	// TLSFiles and ClusterTLSFiles build TLS and ClusterTLS from PEM files
	// when those are nil (zoo.cfg's ssl.* and ssl.quorum.* keys).
	TLSFiles        TLSFiles
	ClusterTLSFiles TLSFiles
	// DataDir holds the Raft log and snapshots; empty means in memory.
	DataDir string
	// Stores, if set (and DataDir is empty), are the Raft stores to use
	// instead of fresh in-memory ones: a server started again on the same
	// Stores resumes with the same state, as from a data dir.
	Stores *Stores
	// NoSync disables fsync of the Raft log (faster, not durable on power loss).
	NoSync bool
	// SyncLeaderLog makes a cluster leader with a data dir store each
	// batch of new entries before it replicates them (hashicorp/raft's
	// order). By default the leader replicates while it writes, as
	// ZooKeeper's does, and applies an entry only once its own copy is
	// durable too (see leaderlog.go): the same guarantee, one fsync less
	// per write on the critical path.
	SyncLeaderLog bool
	// LogStore picks the Raft log store of a data dir: LogStoreWAL
	// (raft-wal), LogStoreBolt (raft-boltdb), or LogStoreAuto (the one the
	// dir already holds; raft-wal for a new dir).
	LogStore string
	// WALSegmentSize is the size of one raft-wal segment file (0:
	// DefaultWALSegmentSize).
	WALSegmentSize int
	// TickTime is the session-expiry bucket width.
	TickTime time.Duration
	// MinSessionTimeout and MaxSessionTimeout clamp requested timeouts;
	// zero means 2 and 20 ticks.
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxClientCnxns caps connections per client IP; 0 is unlimited.
	MaxClientCnxns int
	// MaxFrame is jute.maxbuffer: the largest request frame accepted.
	MaxFrame int
	// MaxOutstanding caps in-flight requests per connection.
	MaxOutstanding int
	// MaxOutboundBytes caps queued outbound bytes per connection.
	MaxOutboundBytes int
	// HandshakeTimeout bounds accept-to-ConnectRequest time.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one socket write.
	WriteTimeout time.Duration
	// ReattachWait bounds a re-attach's wait for the session's older
	// connections on this node (0: DefaultReattachWait).
	ReattachWait time.Duration
	// FourLetterWords is the 4lw whitelist; "*" allows all.
	FourLetterWords []string
	// TTLEnabled allows TTL nodes (ZooKeeper's extendedTypesEnabled).
	// Paddock enables them by default; ZooKeeper does not.
	TTLEnabled bool
	// ReapInterval and MaxReapPerInterval drive container/TTL reaping.
	ReapInterval       time.Duration
	MaxReapPerInterval int
	// MaxWatchesPerSession caps watches one connection may register; 0 is
	// unlimited.
	MaxWatchesPerSession int
	// SnapshotThreshold and SnapshotInterval drive Raft snapshots (and so
	// log compaction); TrailingLogs is how many entries stay in the log
	// after a snapshot for followers that are slightly behind (0: Raft's
	// default, 10240). A follower further behind gets the snapshot.
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	TrailingLogs      uint64
	// ID is this node's id in a cluster (ZooKeeper's myid); Peers lists
	// every member including this one. No Peers means standalone.
	ID    string
	Peers []Peer
	// Join makes a new cluster node wait to be added (paddock cluster add)
	// instead of bootstrapping the configuration from Peers.
	Join bool
	// ClusterListener, if set, is the cluster port's listener.
	ClusterListener net.Listener
	// ClusterBind overrides the address the cluster port listens on
	// (default: this node's Peer.Addr).
	ClusterBind string
	// ClusterNet dials and wraps cluster connections (fault injection in
	// tests); nil means plain TCP.
	ClusterNet ClusterNet
	// Raft holds cluster Raft timers; zero means DefaultRaftTimers.
	Raft RaftTimers
	// ReconfigEnabled allows the reconfig opcode (ZooKeeper's
	// reconfigEnabled, default false).
	ReconfigEnabled bool
	// ReadOnlyMode lets a node cut off from the quorum keep serving
	// clients that ask for read-only sessions (readonlymode.enabled).
	ReadOnlyMode bool
	// ReadOnlyDelay is how long a node must have known no leader before
	// it serves read-only sessions; 0 means max(DefaultReadOnlyDelay,
	// TickTime), as ZooKeeper.
	ReadOnlyDelay time.Duration
	// SuperDigest is "user:base64(sha1(user:password))"; a client that
	// authenticates as that digest user bypasses every ACL (ZooKeeper's
	// DigestAuthenticationProvider.superDigest).
	SuperDigest string
	// EnforceQuota makes hard quota limits (countHardLimit/byteHardLimit
	// under /zookeeper/quota) refuse writes with QuotaExceeded, as
	// ZooKeeper's enforceQuota; soft limits are only logged.
	EnforceQuota bool
	// SkipACL disables ACL checks (ZooKeeper's skipACL=yes), for trusted
	// test setups.
	SkipACL bool
	// AdminAddr, if set, serves the admin HTTP endpoints (ZooKeeper's
	// AdminServer commands, /metrics, health, cluster membership).
	AdminAddr string
	// MetricsAddr, if set, serves /metrics only.
	MetricsAddr string
	// FanoutLogThreshold logs (rate-limited) a change that notifies more
	// watchers than this; 0 disables the log line.
	FanoutLogThreshold int
	// Clock drives session expiry; nil means the real clock.
	Clock session.Clock
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the configuration of `paddock server` with no flags.
func DefaultConfig() Config {
	return Config{
		Bind:               DefaultBind,
		Port:               DefaultPort,
		TickTime:           DefaultTickTime,
		MaxClientCnxns:     DefaultMaxClientCnxns,
		MaxFrame:           wire.DefaultMaxFrame,
		MaxOutstanding:     DefaultMaxOutstanding,
		MaxOutboundBytes:   DefaultMaxOutboundBytes,
		HandshakeTimeout:   DefaultHandshakeTimeout,
		WriteTimeout:       DefaultWriteTimeout,
		ReattachWait:       DefaultReattachWait,
		FourLetterWords:    DefaultFourLetterWords,
		TTLEnabled:         true,
		ReapInterval:       DefaultReapInterval,
		MaxReapPerInterval: DefaultMaxReapPerInterval,
		SnapshotThreshold:  DefaultSnapshotThreshold,
		SnapshotInterval:   2 * time.Minute,
		FanoutLogThreshold: DefaultFanoutLogThreshold,
	}
}

// Validate checks the configuration and fills derived defaults.
func (c *Config) Validate() error {
	var errs []error
	if c.TickTime <= 0 {
		errs = append(errs, fmt.Errorf("tickTime must be positive, got %v", c.TickTime))
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.MinSessionTimeout > c.MaxSessionTimeout {
		errs = append(errs, fmt.Errorf("minSessionTimeout %v > maxSessionTimeout %v", c.MinSessionTimeout, c.MaxSessionTimeout))
	}
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("bad client port %d", c.Port))
	}
	if c.LogStore != LogStoreAuto && c.LogStore != LogStoreWAL && c.LogStore != LogStoreBolt {
		errs = append(errs, fmt.Errorf("unknown log store %q (want %q or %q)", c.LogStore, LogStoreWAL, LogStoreBolt))
	}
	if c.MaxFrame <= 0 {
		c.MaxFrame = wire.DefaultMaxFrame
	}
	positive := map[string]*int{"maxOutstanding": &c.MaxOutstanding, "maxOutboundBytes": &c.MaxOutboundBytes,
		"maxReapPerInterval": &c.MaxReapPerInterval}
	for name, v := range positive {
		if *v <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %d", name, *v))
		}
	}
	if c.HandshakeTimeout <= 0 || c.WriteTimeout <= 0 || c.ReapInterval <= 0 {
		errs = append(errs, errors.New("handshake, write and reap intervals must be positive"))
	}
	if c.clustered() {
		if _, err := c.self(); err != nil {
			errs = append(errs, err)
		}
		if c.Raft == (RaftTimers{}) {
			c.Raft = DefaultRaftTimers
		}
	}
	if c.TLS == nil && !c.TLSFiles.empty() {
		t, err := c.TLSFiles.ServerTLSConfig()
		if err != nil {
			errs = append(errs, err)
		}
		c.TLS = t
	}
	if c.ClusterTLS == nil && !c.ClusterTLSFiles.empty() {
		t, err := c.ClusterTLSFiles.ServerTLSConfig()
		if err != nil {
			errs = append(errs, err)
		}
		c.ClusterTLS = t
	}
	if (c.SecurePort > 0 || c.SecureListener != nil) && c.TLS == nil {
		errs = append(errs, errors.New("a secure client port needs a TLS configuration (certificate and key)"))
	}
	if c.Clock == nil {
		c.Clock = session.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return errors.Join(errs...)
}

// clampTimeout negotiates a session timeout (ms) as ZooKeeper does.
func (c *Config) clampTimeout(ms int32) int32 {
	lo, hi := int32(c.MinSessionTimeout.Milliseconds()), int32(c.MaxSessionTimeout.Milliseconds())
	return max(lo, min(hi, ms))
}

func (c *Config) addr() string {
	return net.JoinHostPort(c.Bind, strconv.Itoa(c.Port))
}

// Stores are the Raft log, stable and snapshot stores of a server.
type Stores struct {
	Logs   raft.LogStore
	Stable raft.StableStore
	Snaps  raft.SnapshotStore
}

// NewMemoryStores returns in-memory Raft stores that can outlive a Server.
func NewMemoryStores() *Stores {
	mem := raft.NewInmemStore()
	return &Stores{Logs: mem, Stable: mem, Snaps: newMemSnapshotStore()}
}
