package server

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
	// DefaultMaxReplyFrame is the largest reply to a read the server sends
	// (Config.MaxReplyFrame): what the Java client reads by default. A
	// larger one is answered MARSHALLINGERROR instead (ZooKeeper sends it,
	// and the Java client drops the connection). A write's reply is sent
	// whatever its size.
	DefaultMaxReplyFrame = 4 << 20
	// replySlack is ZooKeeper's jute.maxbuffer.extrasize default: a node
	// written with the largest request can be read back even when
	// MaxFrame is raised past DefaultMaxReplyFrame.
	replySlack = 1024
	// DefaultProposeTimeout bounds how long a write waits to enter Raft's
	// queue (Config.ProposeTimeout). A client's write refused for it ends
	// its connection: nothing the client sent after it is proposed.
	DefaultProposeTimeout = 10 * time.Second
	// DefaultReattachWait bounds how long a session re-attaching to this
	// node waits for its older connections' requests (sessionorder.go). A
	// reader stops as soon as its socket closes unless it is handing a
	// proposal to Raft, which Config.ProposeTimeout bounds (the wait is
	// never shorter).
	DefaultReattachWait = DefaultProposeTimeout
	// DefaultSnapshotThreshold is how many log entries trigger a snapshot.
	DefaultSnapshotThreshold = 100000
	// DefaultSnapshotInterval is how often Raft checks the snapshot
	// threshold (it waits between once and twice this).
	DefaultSnapshotInterval = 2 * time.Minute
	// MinSnapshotInterval is the shortest SnapshotInterval Raft accepts.
	MinSnapshotInterval = 5 * time.Millisecond
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
	// NoClientPort opens no plaintext client port (a zoo.cfg without
	// clientPort, as ZooKeeper): clients connect to the secure port only.
	NoClientPort bool
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
	// ClusterTLSNoHostCheck turns off the check that a peer's certificate
	// names its host, on both ends of a cluster connection (zoo.cfg
	// ssl.quorum.hostnameVerification=false); chaining to the CA is still
	// required.
	ClusterTLSNoHostCheck bool
	// DataDir holds the Raft snapshots, and the Raft log unless LogDir is
	// set; empty means in memory.
	DataDir string
	// LogDir, if set, holds the Raft log (and its stable store) instead of
	// DataDir, as ZooKeeper's dataLogDir holds its transaction log. It
	// needs a DataDir.
	LogDir string
	// fromZooCfg marks a configuration read from a zoo.cfg, which needs a
	// DataDir as ZooKeeper's does.
	fromZooCfg bool
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
	// zero means 2 and 20 ticks, SessionTimeoutZero a bound of 0 ms (a
	// zoo.cfg's explicit 0).
	MinSessionTimeout time.Duration
	MaxSessionTimeout time.Duration
	// MaxClientCnxns caps connections per client IP; 0 is unlimited.
	MaxClientCnxns int
	// MaxFrame is jute.maxbuffer: the largest request frame accepted.
	MaxFrame int
	// MaxReplyFrame is the largest reply to a read (0: DefaultMaxReplyFrame,
	// or MaxFrame plus 1 KiB if that is more).
	MaxReplyFrame int
	// MaxOutstanding caps in-flight requests per connection.
	MaxOutstanding int
	// MaxOutboundBytes caps queued outbound bytes per connection.
	MaxOutboundBytes int
	// HandshakeTimeout bounds accept-to-ConnectRequest time.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one socket write.
	WriteTimeout time.Duration
	// ReattachWait bounds a re-attach's wait for the session's older
	// connections on this node (0: DefaultReattachWait; never less than
	// the propose timeout).
	ReattachWait time.Duration
	// ProposeTimeout bounds how long a client's write waits to enter
	// Raft's queue when Raft falls behind (0: DefaultProposeTimeout).
	ProposeTimeout time.Duration
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
	// OneVoterCluster is zoo.cfg's standaloneEnabled=false: an ensemble of
	// one voting member runs as a cluster instead of standalone, and a
	// reconfig may leave one voting member (ZooKeeper refuses that with
	// BADARGUMENTS while standaloneEnabled is true, its default).
	OneVoterCluster bool
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
	// X509SuperUser is a TLS client identity (as x509 ids read, Java's
	// X500Principal.getName()) that bypasses every ACL, as ZooKeeper's
	// X509AuthenticationProvider.superUser: a client whose certificate
	// gives this id also gets a "super" identity.
	X509SuperUser string
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
	// AdminHosts are the host names (besides IP addresses and localhost)
	// the admin endpoint's sensitive routes accept in the Host header
	// (adminGuard).
	AdminHosts []string
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
		SnapshotInterval:   DefaultSnapshotInterval,
		FanoutLogThreshold: DefaultFanoutLogThreshold,
	}
}

// Validate checks the configuration and fills derived defaults.
func (c *Config) Validate() error {
	var errs []error
	if c.TickTime <= 0 {
		errs = append(errs, fmt.Errorf("tickTime must be positive, got %v", c.TickTime))
	}
	errs = append(errs, c.validateSessionTimeouts()...)
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("bad client port %d", c.Port))
	}
	if c.LogStore != LogStoreAuto && c.LogStore != LogStoreWAL && c.LogStore != LogStoreBolt {
		errs = append(errs, fmt.Errorf("unknown log store %q (want %q or %q)", c.LogStore, LogStoreWAL, LogStoreBolt))
	}
	if c.SnapshotInterval != 0 && c.SnapshotInterval < MinSnapshotInterval {
		errs = append(errs, fmt.Errorf("snapshot interval %v is below Raft's minimum of %v", c.SnapshotInterval, MinSnapshotInterval))
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
		if self, err := c.self(); err != nil {
			errs = append(errs, err)
		} else {
			c.ID = self.ID // the peer list's spelling: Raft's id for this node
		}
		if c.Raft == (RaftTimers{}) {
			c.Raft = DefaultRaftTimers
		}
	}
	secure := c.SecurePort > 0 || c.SecureListener != nil
	// A zoo.cfg's ssl.* keys configure the secure client port; without one
	// ZooKeeper builds no client TLS, and neither does Paddock.
	if c.TLS == nil && !c.TLSFiles.empty() && (secure || !c.fromZooCfg) {
		files := c.TLSFiles
		if files.ClientAuth == "" && c.fromZooCfg {
			files.ClientAuth = ClientAuthNeed // ZooKeeper's default
		}
		t, err := files.ServerTLSConfig()
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
	if c.ClusterTLS != nil && c.ClusterTLS.ClientCAs == nil && c.ClusterTLS.RootCAs == nil {
		errs = append(errs, errors.New("cluster TLS needs a CA (--cluster-tls-ca, zoo.cfg ssl.quorum.trustStore.location): "+
			"without one a peer's certificate would be checked against the system's roots, and any certificate "+
			"from a public CA would be taken for a member"))
	}
	if (c.SecurePort > 0 || c.SecureListener != nil) && c.TLS == nil && c.TLSFiles.empty() {
		errs = append(errs, errors.New("a secure client port needs a TLS configuration (certificate and key)"))
	}
	if c.NoClientPort && c.Listener == nil && c.SecurePort <= 0 && c.SecureListener == nil {
		errs = append(errs, errors.New("no client port: set clientPort or secureClientPort in the zoo.cfg, or a "+
			"client port on this server's server.N line (server.N=host:2888:3888;2181), or pass --port"))
	}
	if c.Clock == nil {
		c.Clock = session.RealClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	errs = append(errs, c.validateDirs())
	return errors.Join(errs...)
}

// SessionTimeoutZero, as MinSessionTimeout or MaxSessionTimeout, is a
// bound of 0 ms set on purpose (Config's zero means the default bound): a
// zoo.cfg's minSessionTimeout=0 grants every timeout a client asks for up
// to the maximum, as in ZooKeeper, and down to 0 (a client that asks for 0
// or less gets 0, an expired session). Bounds are compared in whole
// milliseconds, so this one nanosecond counts as 0.
const SessionTimeoutZero = time.Nanosecond

// validateSessionTimeouts fills the default session timeout bounds (2 and
// 20 ticks) and checks them as ZooKeeper does.
func (c *Config) validateSessionTimeouts() []error {
	var errs []error
	for _, t := range []struct {
		name string
		d    time.Duration
	}{{"minSessionTimeout", c.MinSessionTimeout}, {"maxSessionTimeout", c.MaxSessionTimeout}} {
		if t.d < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative, got %v (zoo.cfg's -1 means the default)", t.name, t.d))
		}
	}
	if c.MinSessionTimeout == 0 {
		c.MinSessionTimeout = 2 * c.TickTime
	}
	if c.MaxSessionTimeout == 0 {
		c.MaxSessionTimeout = 20 * c.TickTime
	}
	if c.MinSessionTimeout.Milliseconds() > c.MaxSessionTimeout.Milliseconds() {
		errs = append(errs, fmt.Errorf("minSessionTimeout %dms must not be larger than maxSessionTimeout %dms",
			c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds()))
	}
	return errs
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

// Apache ZooKeeper's on-disk layout, recognised so that Paddock never
// starts an empty tree beside a ZooKeeper one, and Paddock's own.
const (
	// zkVersionDir holds ZooKeeper's snapshots (in dataDir) and
	// transaction logs (in dataLogDir).
	zkVersionDir = "version-2"
	// zkSnapshotPrefix and zkLogPrefix start the names of ZooKeeper's
	// snapshot and transaction log files (then the zxid in hex).
	zkSnapshotPrefix = "snapshot."
	zkLogPrefix      = "log."
	// snapshotsDir is raft.FileSnapshotStore's directory in a data dir.
	snapshotsDir = "snapshots"
)

// logDir is where the Raft log lives: LogDir, or else the data dir.
func (c *Config) logDir() string {
	if c.LogDir != "" {
		return c.LogDir
	}
	return c.DataDir
}

// separateLogDir reports whether the Raft log lives outside the data dir.
func (c *Config) separateLogDir() bool {
	return c.LogDir != "" && filepath.Clean(c.LogDir) != filepath.Clean(c.DataDir)
}

// validateDirs checks the data and log dirs: a zoo.cfg needs a dataDir
// (ZooKeeper refuses to start without one: "dataDir is not set"), a log
// dir needs a data dir, and a data dir holding a ZooKeeper data tree and
// no Paddock state is refused.
func (c *Config) validateDirs() error {
	switch {
	case c.DataDir == "" && c.fromZooCfg:
		return errors.New("dataDir is not set: a server configured by a zoo.cfg keeps its data on disk, " +
			"and ZooKeeper refuses to start without it; set dataDir in the zoo.cfg or pass --data-dir " +
			"(paddock server without --config serves from memory)")
	case c.DataDir == "" && c.LogDir != "":
		return errors.New("a log dir needs a data dir (zoo.cfg dataLogDir without dataDir)")
	case c.DataDir == "":
		return nil
	}
	return c.checkZooKeeperTree()
}

// checkZooKeeperTree refuses a data dir (or log dir) holding Apache
// ZooKeeper's snapshots or transaction logs when it holds no Paddock
// state: Paddock does not read them in place, and would bootstrap an empty
// tree beside them. Beside Paddock state they are only logged.
func (c *Config) checkZooKeeperTree() error {
	dirs := []string{c.DataDir}
	if c.separateLogDir() {
		dirs = append(dirs, c.LogDir)
	}
	found := ""
	for _, d := range dirs {
		if found = zkDataFile(d); found != "" {
			break
		}
	}
	if found == "" {
		return nil
	}
	if hasPaddockState(dirs) {
		c.Logger.Warn("the data dir also holds an Apache ZooKeeper data tree, which Paddock ignores", "file", found)
		return nil
	}
	from := "--from " + c.DataDir
	if c.separateLogDir() {
		from += " --log-dir " + c.LogDir
	}
	return fmt.Errorf("data dir %s holds an Apache ZooKeeper data tree (%s) and no Paddock state; Paddock does not "+
		"serve ZooKeeper's files in place and would start an empty tree beside them. Stop ZooKeeper and migrate it "+
		"with `paddock import-zk %s --data-dir NEW_DIR`, then set dataDir (--data-dir) to NEW_DIR; or set dataDir "+
		"to an empty directory to start with an empty tree", c.DataDir, found, from)
}

// zkDataFile returns a ZooKeeper snapshot or transaction log file in
// dir/version-2, or "".
func zkDataFile(dir string) string {
	entries, err := os.ReadDir(filepath.Join(dir, zkVersionDir))
	if err != nil {
		return ""
	}
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, zkSnapshotPrefix) || strings.HasPrefix(n, zkLogPrefix) {
			return filepath.Join(dir, zkVersionDir, n)
		}
	}
	return ""
}

// hasPaddockState reports whether any of dirs holds what a Paddock server
// (or snapshot restore, or import-zk) leaves: snapshots, a raft-wal log or
// a raft-boltdb file.
func hasPaddockState(dirs []string) bool {
	for _, d := range dirs {
		for _, name := range []string{snapshotsDir, walDir, boltFile} {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				return true
			}
		}
	}
	return false
}

// checkLogDir refuses a log dir that would leave behind the Raft log an
// earlier start kept in the data dir (dataLogDir added later): the server
// would start without its log, and a cluster node without its term and
// vote.
func checkLogDir(c *Config) error {
	if !c.separateLogDir() || c.DataDir == "" {
		return nil
	}
	for _, name := range []string{walDir, boltFile} {
		if _, err := os.Stat(filepath.Join(c.LogDir, name)); err == nil {
			return nil
		}
	}
	for _, name := range []string{walDir, boltFile} {
		old := filepath.Join(c.DataDir, name)
		if _, err := os.Stat(old); err == nil {
			return fmt.Errorf("the Raft log is in the data dir (%s) but the log dir is %s: with the server stopped, "+
				"move %s into %s, or unset dataLogDir", old, c.LogDir, old, c.LogDir)
		}
	}
	return nil
}

// maxReadReply is the largest reply to a read sent (MaxReplyFrame).
func (c *Config) maxReadReply() int {
	if c.MaxReplyFrame > 0 {
		return c.MaxReplyFrame
	}
	return max(DefaultMaxReplyFrame, c.MaxFrame+replySlack)
}
