package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Values zoo.cfg gives meanings of their own, as ZooKeeper.
const (
	// ZooCfgBind is the client address of a server configured by a zoo.cfg
	// without clientPortAddress: every interface, as ZooKeeper binds.
	// `paddock server` without a zoo.cfg stays on DefaultBind.
	ZooCfgBind = "0.0.0.0"
	// ZooCfgTickTime is the tickTime of a zoo.cfg that sets none: ZooKeeper
	// 3.8's ZooKeeperServer.DEFAULT_TICK_TIME (session timeouts then default
	// to 2 and 20 ticks of it). `paddock server` without a zoo.cfg keeps
	// DefaultTickTime.
	ZooCfgTickTime = 3 * time.Second
	// zooCfgUnsetTimeout is ZooKeeper's minSessionTimeout/maxSessionTimeout
	// "not set": 2 and 20 ticks (Config's zero).
	zooCfgUnsetTimeout = -1
	// dynamicFileVersionKey is the one key a dynamic config file may hold
	// besides the ensemble; ZooKeeper keeps the version in the file name
	// and refuses the key, Paddock ignores it.
	dynamicFileVersionKey = "version"
	// clientAddrLookupTimeout bounds resolving the host names of
	// clientPortAddress and a server line's client address to compare them.
	clientAddrLookupTimeout = 5 * time.Second
	// maxPort is the largest TCP port.
	maxPort = 65535
)

// ZooCfgFourLetterWords is the 4lw whitelist of a server configured by a
// zoo.cfg without 4lw.commands.whitelist: ZooKeeper's default, srvr alone
// (zkServer.sh uses it), since such a server listens on every interface.
// `paddock server` without a zoo.cfg keeps DefaultFourLetterWords.
var ZooCfgFourLetterWords = []string{"srvr"}

// builtinAuthProviders are the authProvider.N classes whose schemes Paddock
// has built in (ip and digest always, x509 on the secure client port). Any
// other provider (SASL, a custom class) would authenticate clients Paddock
// cannot, so a zoo.cfg naming one is refused.
var builtinAuthProviders = []string{
	"org.apache.zookeeper.server.auth.DigestAuthenticationProvider",
	"org.apache.zookeeper.server.auth.IPAuthenticationProvider",
	"org.apache.zookeeper.server.auth.X509AuthenticationProvider",
}

// ZooCfg is what a zoo.cfg holds beyond the Config fields it sets.
type ZooCfg struct {
	// Unused lists the keys Paddock does not use (LogUnused logs them).
	Unused []string
	// Servers holds the server.N lines by key ("server.N"), from the
	// zoo.cfg or from its dynamic config file.
	Servers map[string]string
	// DynamicConfigFile is the dynamicConfigFile value, as given.
	DynamicConfigFile string
	// clientPort is whether the zoo.cfg sets a clientPort (0 is "not set",
	// as in ZooKeeper); clientPortAddress and secureClientPortAddress
	// whether it sets those.
	clientPort, clientPortAddress, secureClientPortAddress bool
	// adminDisabled is admin.enableServer=false, which holds whatever
	// admin.* line comes after it (ZooKeeper's AdminServerFactory checks it
	// on its own).
	adminDisabled bool
	// reapPerMinute is znode.container.maxPerMinute (0: not set), a rate
	// that applies once the sweep interval is known.
	reapPerMinute int
	// sslQuorum and quorumListenOnAllIPs are those keys; Finish applies
	// them once flags have had their say.
	sslQuorum, quorumListenOnAllIPs bool
	// standalonePeer is this node's server line (by myid) when the
	// ensemble runs standalone (one voting member), for its client
	// address; standalonePeers is that ensemble, where an --id applied
	// after LoadZooCfg finds its line.
	standalonePeer  *Peer
	standalonePeers []Peer
}

// LoadZooCfg reads the zoo.cfg at path into cfg as ZooKeeper 3.8 does: the
// static file, then the ensemble from its dynamicConfigFile (a relative
// path is opened from the working directory, as ZooKeeper opens it), then
// this node's id from dataDir/myid if that file exists. A dataDir becomes
// required (Config.Validate): flags may still supply it. The server has no
// plaintext client port unless clientPort, this node's server.N line or a
// flag gives one (Config.NoClientPort). After applying flags, call Finish.
func LoadZooCfg(path string, cfg *Config) (*ZooCfg, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zc, err := applyZooCfg(f, cfg)
	if err != nil {
		return nil, err
	}
	if zc.DynamicConfigFile != "" {
		if err := zc.readDynamic(); err != nil {
			return nil, err
		}
	}
	if cfg.Peers, err = PeersFromZooCfg(zc.Servers); err != nil {
		return nil, err
	}
	if len(cfg.Peers) > 0 && cfg.DataDir != "" {
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "myid")); err == nil {
			if cfg.ID, err = ReadMyID(cfg.DataDir); err != nil {
				return nil, err
			}
		}
	}
	zc.standalone(cfg)
	return zc, nil
}

// standalone makes an ensemble of one voting member a standalone server,
// as ZooKeeper's QuorumPeerConfig.isDistributed does unless
// standaloneEnabled=false: it serves clients on its server line's client
// address (when the line is this node's, by myid) and has no cluster.
// A data dir a one-node cluster wrote starts standalone with its data.
func (z *ZooCfg) standalone(cfg *Config) {
	voters := 0
	for _, p := range cfg.Peers {
		if !p.Observer {
			voters++
		}
	}
	if voters != 1 || cfg.OneVoterCluster {
		return
	}
	if self, err := cfg.self(); err == nil && !self.Observer {
		z.standalonePeer = &self
	}
	z.standalonePeers = cfg.Peers
	cfg.Peers, cfg.ID = nil, ""
}

// Finish completes a configuration LoadZooCfg read, once flags are applied
// to it: the client address of this node's server.N line
// (ApplyServerClientAddr, unless clientFlags says --bind or --port gave
// one), then sslQuorum and quorumListenOnAllIPs, which depend on the
// cluster and its TLS files that flags may also give.
func (z *ZooCfg) Finish(cfg *Config, clientFlags bool) error {
	if !clientFlags {
		if err := z.ApplyServerClientAddr(cfg); err != nil {
			return err
		}
	}
	if err := z.checkSSLQuorum(cfg); err != nil {
		return err
	}
	z.listenOnAllIPs(cfg)
	return nil
}

// checkSSLQuorum refuses sslQuorum=true on a cluster node without the
// quorum key and trust stores: ZooKeeper would fail to start on it, and
// Paddock would otherwise run its cluster port in plaintext.
func (z *ZooCfg) checkSSLQuorum(cfg *Config) error {
	if !z.sslQuorum || !cfg.clustered() || cfg.ClusterTLS != nil {
		return nil
	}
	f := cfg.ClusterTLSFiles
	if (f.KeyStore != "" || f.CertFile != "" && f.KeyFile != "") && f.TrustStore != "" {
		return nil
	}
	return errors.New("sslQuorum=true needs the quorum key and trust stores (ssl.quorum.keyStore.location and " +
		"ssl.quorum.trustStore.location, or --cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca): " +
		"without them the cluster port would carry Raft and forwarded writes in plaintext")
}

// listenOnAllIPs applies quorumListenOnAllIPs=true: the cluster port
// listens on every interface (ZooKeeper binds the wildcard address) at the
// port of this node's server.N line, whose address stays the one peers
// dial (a NAT or public address need not be local).
func (z *ZooCfg) listenOnAllIPs(cfg *Config) {
	if !z.quorumListenOnAllIPs || !cfg.clustered() || cfg.ClusterBind != "" {
		return
	}
	self, err := cfg.self()
	if err != nil {
		return // Validate reports it
	}
	if _, port, err := net.SplitHostPort(self.Addr); err == nil {
		cfg.ClusterBind = net.JoinHostPort("", port)
	}
}

// ApplyServerClientAddr makes this node (cfg.ID) serve clients on the
// client address of its server.N line (";[host:]port"), if the line has
// one, as ZooKeeper 3.5+ does. A clientPort in the zoo.cfg must then agree
// with it, as in ZooKeeper: the same port, and the same address unless
// clientPortAddress is unset or a wildcard. Finish calls it unless --bind
// or --port is given.
func (z *ZooCfg) ApplyServerClientAddr(cfg *Config) error {
	self, err := cfg.self()
	switch {
	case z.standalonePeers != nil && cfg.ID != "": // --id
		one := Config{ID: cfg.ID, Peers: z.standalonePeers}
		if self, err = one.self(); err == nil && self.Observer {
			err = errors.New("an observer serves no standalone client address")
		}
	case z.standalonePeer != nil:
		self, err = *z.standalonePeer, nil
	}
	if err != nil || self.ClientAddr == "" {
		return nil // standalone, no client part, or an id Validate refuses
	}
	host, port, err := splitClientAddr(self.ClientAddr)
	if err != nil {
		return fmt.Errorf("server.%s: client address %q: %w", self.ID, self.ClientAddr, err)
	}
	if z.clientPort && clientAddrConflict(cfg.Bind, cfg.Port, host, port) {
		return fmt.Errorf("client address for this server (id %s) in zoo.cfg (clientPortAddress:clientPort) is %s, "+
			"which is different from client address %s in its server.%s line; make them agree or drop clientPort",
			self.ID, cfg.addr(), self.ClientAddr, self.ID)
	}
	cfg.Bind, cfg.Port, cfg.NoClientPort = host, port, false
	return nil
}

// normalizeServerID returns a server id (server.N, myid) as ZooKeeper
// reads it, with Long.parseLong: server.01 and a myid of 1 are server 1.
func normalizeServerID(id string) (string, error) {
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(n, 10), nil
}

// splitClientAddr splits "[host:]port"; no host is every interface.
func splitClientAddr(addr string) (string, int, error) {
	host, port := ZooCfgBind, addr
	if strings.Contains(addr, ":") {
		var err error
		if host, port, err = net.SplitHostPort(addr); err != nil {
			return "", 0, err
		}
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 0 || n > maxPort {
		return "", 0, fmt.Errorf("bad port %q", port)
	}
	return host, n, nil
}

// clientAddrConflict reports whether zoo.cfg's clientPortAddress:clientPort
// disagrees with a server line's client address, by ZooKeeper's rule.
func clientAddrConflict(staticHost string, staticPort int, host string, port int) bool {
	if staticPort != port {
		return true
	}
	ip := net.ParseIP(staticHost)
	wildcard := staticHost == "" || ip != nil && ip.IsUnspecified()
	return !wildcard && !sameHost(staticHost, host)
}

// sameHost reports whether two host names or addresses share an address
// (ZooKeeper compares resolved addresses).
func sameHost(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), clientAddrLookupTimeout)
	defer cancel()
	as, errA := net.DefaultResolver.LookupHost(ctx, a)
	bs, errB := net.DefaultResolver.LookupHost(ctx, b)
	if errA != nil || errB != nil {
		return false
	}
	for _, x := range as {
		for _, y := range bs {
			if net.ParseIP(x).Equal(net.ParseIP(y)) {
				return true
			}
		}
	}
	return false
}

// applyZooCfg reads a ZooKeeper zoo.cfg (Java properties: key=value lines,
// # comments) into cfg. A key may also be written with the "zookeeper."
// prefix of its system-property form. Keys Paddock does not use are
// returned (and logged once by the caller), not fatal; keys that would
// make Paddock serve clients or form quorums otherwise than the file says
// are refused (applyZooCfgKey). server.N lines are returned for the
// cluster configuration. As in ZooKeeper, the client port binds every
// interface (ZooCfgBind) unless clientPortAddress is set, there is none
// unless clientPort is set (or this node's server.N line gives one), a
// missing tickTime is ZooCfgTickTime, and the configuration needs a
// dataDir (Config.Validate checks it, after flags).
func applyZooCfg(r io.Reader, cfg *Config) (*ZooCfg, error) {
	zc := &ZooCfg{Servers: make(map[string]string)}
	cfg.Bind = ZooCfgBind
	cfg.TickTime = ZooCfgTickTime
	cfg.FourLetterWords = ZooCfgFourLetterWords
	cfg.fromZooCfg = true
	err := scanProperties(r, "zoo.cfg", func(key, val string) error {
		key = strings.TrimPrefix(key, "zookeeper.")
		switch {
		case strings.HasPrefix(key, "server."):
			zc.Servers[key] = val
			return nil
		case key == "dynamicConfigFile":
			zc.DynamicConfigFile = val
			return nil
		}
		if used, err := zc.applyZooCfgKey(cfg, key, val); used {
			return err
		}
		used, err := applyKey(cfg, key, val)
		if !used {
			zc.Unused = append(zc.Unused, key)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	cfg.NoClientPort = !zc.clientPort
	if zc.reapPerMinute > 0 {
		cfg.MaxReapPerInterval = max(1, int(int64(zc.reapPerMinute)*int64(cfg.ReapInterval)/int64(time.Minute)))
	}
	if zc.adminDisabled {
		cfg.AdminAddr = ""
	}
	switch {
	case zc.clientPortAddress && !zc.clientPort:
		return nil, errors.New("zoo.cfg: clientPortAddress is set but clientPort is not set")
	case zc.secureClientPortAddress && cfg.SecurePort == 0:
		return nil, errors.New("zoo.cfg: secureClientPortAddress is set but secureClientPort is not set")
	}
	if cfg.SecurePort != 0 && !zc.secureClientPortAddress {
		// As ZooKeeper: the secure port listens on every interface unless
		// secureClientPortAddress says otherwise, whatever clientPortAddress
		// says (a local plaintext port beside a public TLS one).
		cfg.SecureBind = ZooCfgBind
	}
	if cfg.ReadOnlyMode && !slices.Contains(cfg.FourLetterWords, "isro") && !slices.Contains(cfg.FourLetterWords, "*") {
		// As ZooKeeper: clients in read-only mode look for a read-write
		// server with isro, whatever the whitelist.
		cfg.FourLetterWords = append(slices.Clone(cfg.FourLetterWords), "isro")
	}
	return zc, zc.checkStaticEnsemble()
}

// errHierarchical refuses the group.N and weight.N lines of hierarchical
// quorums: Paddock's quorum is a majority of the voting servers, so
// ignoring them would silently change which servers make a quorum.
var errHierarchical = errors.New("hierarchical quorums (group.N and weight.N lines) are not supported: " +
	"Paddock's quorum is a majority of the voting servers, which is not the quorum these lines define; " +
	"remove them to run with a plain majority")

// applyZooCfgKey applies the keys whose meaning depends on the rest of the
// file, and refuses those Paddock cannot honour, where ignoring them would
// serve clients the operator meant to refuse or change the quorum. It
// reports whether key was one of them.
func (z *ZooCfg) applyZooCfgKey(cfg *Config, key, val string) (bool, error) {
	var err error
	switch {
	case key == "clientPort":
		cfg.Port, err = strconv.Atoi(val)
		z.clientPort = cfg.Port != 0 // 0 is "not set" in ZooKeeper
	case key == "clientPortAddress":
		cfg.Bind, z.clientPortAddress = val, true
	case key == "secureClientPortAddress":
		cfg.SecureBind, z.secureClientPortAddress = val, true
	case key == "admin.enableServer":
		// Exactly "false", as ZooKeeper's "false".equals(...): FALSE or no
		// leave the admin server on.
		z.adminDisabled = val == "false"
	case key == "sslQuorum":
		z.sslQuorum, err = zkBool(val)
	case key == "quorumListenOnAllIPs":
		z.quorumListenOnAllIPs, err = zkBool(val)
	case key == "znode.container.maxPerMinute":
		// ZooKeeper spaces its deletions 60000/maxPerMinute ms apart;
		// Paddock deletes up to a sweep's share at each sweep (below).
		z.reapPerMinute, err = strconv.Atoi(val)
		if err == nil && z.reapPerMinute <= 0 {
			err = fmt.Errorf("znode.container.maxPerMinute must be positive, not %d", z.reapPerMinute)
		}
	case key == "standaloneEnabled":
		var enabled bool
		enabled, err = zkBool(val)
		cfg.OneVoterCluster = !enabled
	case strings.HasPrefix(key, "group"), strings.HasPrefix(key, "weight"):
		err = errHierarchical
	case strings.HasPrefix(key, "authProvider."):
		if !slices.Contains(builtinAuthProviders, val) {
			err = fmt.Errorf("authentication provider %s is not supported: Paddock's schemes are built in "+
				"(digest, ip, and x509 on the secure client port), and authProvider.N may name only %s",
				val, strings.Join(builtinAuthProviders, ", "))
		}
	case key == "enforce.auth.enabled", key == "sessionRequireClientSASLAuth":
		// Boolean.parseBoolean, as ZooKeeper's AuthenticationHelper.
		if strings.EqualFold(val, "true") {
			err = errNoEnforcement
		}
	case key == "enforce.auth.schemes":
		// Read only with enforce.auth.enabled=true, which is refused.
	case key == "requireClientAuthScheme":
		if val != "" {
			err = fmt.Errorf("%w (ZooKeeper 3.8 does not read this key either, and serves unauthenticated clients)",
				errNoEnforcement)
		}
	default:
		return false, nil
	}
	return true, err
}

// errNoEnforcement refuses the keys that make ZooKeeper refuse
// unauthenticated clients.
var errNoEnforcement = errors.New("cannot require clients to authenticate: Paddock has no SASL and no " +
	"enforce.auth, so it would serve the clients this line is meant to refuse; remove the line, and protect " +
	"data with ACLs, or serve only a secure client port with ssl.clientAuth=need")

// zkBool parses a boolean as ZooKeeper's QuorumPeerConfig.parseBoolean:
// true or false, in any case; anything else is an error.
func zkBool(val string) (bool, error) {
	switch {
	case strings.EqualFold(val, "true"):
		return true, nil
	case strings.EqualFold(val, "false"):
		return false, nil
	}
	return false, fmt.Errorf("invalid value %q: choose true or false", val)
}

// checkStaticEnsemble refuses ensemble lines in a zoo.cfg that names a
// dynamic config file, as ZooKeeper does.
func (z *ZooCfg) checkStaticEnsemble() error {
	if z.DynamicConfigFile == "" {
		return nil
	}
	if keys := slices.Sorted(maps.Keys(z.Servers)); len(keys) > 0 {
		return fmt.Errorf("%s must be in the dynamic config file %s, not in zoo.cfg", keys[0], z.DynamicConfigFile)
	}
	return nil
}

// readDynamic reads the ensemble from the dynamic config file: server.N
// lines (group/weight lines of hierarchical quorums are refused, as in
// zoo.cfg); any other key is an error, as in ZooKeeper.
func (z *ZooCfg) readDynamic() error {
	f, err := os.Open(z.DynamicConfigFile)
	if err != nil {
		return fmt.Errorf("dynamicConfigFile: %w", err)
	}
	defer f.Close()
	err = scanProperties(f, "dynamic config file", func(key, val string) error {
		switch {
		case strings.HasPrefix(key, "server."):
			z.Servers[key] = val
		case strings.HasPrefix(key, "group"), strings.HasPrefix(key, "weight"):
			return errHierarchical
		case key == dynamicFileVersionKey:
			// Ignored (ZooKeeper refuses it: the version is in the name).
		default:
			return errors.New("unrecognised parameter (a dynamic config file holds only server.N lines)")
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", z.DynamicConfigFile, err)
	}
	return nil
}

func applyKey(cfg *Config, key, val string) (bool, error) {
	var err error
	ms := func() time.Duration {
		var n int
		n, err = strconv.Atoi(val)
		return time.Duration(n) * time.Millisecond
	}
	num := func() int {
		var n int
		n, err = strconv.Atoi(val)
		return n
	}
	switch key {
	case "tickTime":
		cfg.TickTime = ms()
	case "dataDir":
		cfg.DataDir = val
	case "dataLogDir":
		cfg.LogDir = val
	case "maxClientCnxns":
		cfg.MaxClientCnxns = num()
	case "minSessionTimeout":
		cfg.MinSessionTimeout = sessionTimeout(ms())
	case "maxSessionTimeout":
		cfg.MaxSessionTimeout = sessionTimeout(ms())
	case "4lw.commands.whitelist":
		cfg.FourLetterWords = nil
		for _, w := range strings.Split(val, ",") {
			if w = strings.TrimSpace(w); w != "" {
				cfg.FourLetterWords = append(cfg.FourLetterWords, w)
			}
		}
	case "extendedTypesEnabled":
		cfg.TTLEnabled, err = strconv.ParseBool(val)
	case "jute.maxbuffer":
		cfg.MaxFrame = num()
	case "znode.container.checkIntervalMs":
		cfg.ReapInterval = ms()
	case "snapCount":
		var n uint64
		n, err = strconv.ParseUint(val, 10, 64)
		cfg.SnapshotThreshold = n
	case "admin.serverPort":
		cfg.AdminAddr = withPort(cfg.AdminAddr, val)
	case "admin.serverAddress":
		cfg.AdminAddr = withHost(cfg.AdminAddr, val)
	case "metricsProvider.httpPort":
		cfg.MetricsAddr = withPort(cfg.MetricsAddr, val)
	case "metricsProvider.httpHost":
		cfg.MetricsAddr = withHost(cfg.MetricsAddr, val)
	case "metricsProvider.className":
		// Paddock always exports Prometheus metrics.
	case "DigestAuthenticationProvider.superDigest":
		cfg.SuperDigest = val
	case "X509AuthenticationProvider.superUser":
		// ZooKeeper reads it as the zookeeper.X509AuthenticationProvider
		// .superUser system property, which any zoo.cfg key not its own
		// becomes.
		cfg.X509SuperUser = val
	case "skipACL":
		// Exactly "yes", as ZooKeeper's "yes".equals(...): true or YES
		// leave ACLs on.
		cfg.SkipACL = val == "yes"
	case "secureClientPort":
		cfg.SecurePort = num()
	case "ssl.keyStore.location":
		cfg.TLSFiles.KeyStore = val
	case "ssl.trustStore.location":
		cfg.TLSFiles.TrustStore = val
	case "ssl.clientAuth":
		cfg.TLSFiles.ClientAuth = val
	case "ssl.quorum.keyStore.location":
		cfg.ClusterTLSFiles.KeyStore = val
	case "ssl.quorum.trustStore.location":
		cfg.ClusterTLSFiles.TrustStore = val
	case "ssl.keyStore.type", "ssl.trustStore.type", "ssl.quorum.keyStore.type", "ssl.quorum.trustStore.type":
		if !strings.EqualFold(val, "PEM") {
			err = fmt.Errorf("only PEM key and trust stores are supported, not %s", val)
		}
	case "ssl.quorum.hostnameVerification":
		var verify bool
		verify, err = strconv.ParseBool(val)
		cfg.ClusterTLSNoHostCheck = !verify
	case "serverCnxnFactory", "client.secure", "ssl.hostnameVerification":
		// Implied by the secure port; accepted.
	case "enforceQuota":
		cfg.EnforceQuota, err = strconv.ParseBool(val)
	case "reconfigEnabled":
		cfg.ReconfigEnabled, err = strconv.ParseBool(val)
	case "readonlymode.enabled":
		cfg.ReadOnlyMode, err = strconv.ParseBool(val)
	case "forceSync":
		// Exactly "no", as ZooKeeper's FileTxnLog: NO or false still sync.
		cfg.NoSync = val == "no"
	default:
		return false, nil
	}
	return true, err
}

// sessionTimeout maps zoo.cfg's "not set" (-1) to Config's default (0);
// any other value stands, and Config.Validate refuses negative ones.
func sessionTimeout(d time.Duration) time.Duration {
	switch d {
	case zooCfgUnsetTimeout * time.Millisecond:
		return 0
	case 0: // ZooKeeper takes an explicit 0 as 0 ms
		return SessionTimeoutZero
	}
	return d
}

// LogUnused logs each unused zoo.cfg key once.
func LogUnused(log *slog.Logger, keys []string) {
	for _, k := range keys {
		log.Info("zoo.cfg key not used by Paddock", "key", k)
	}
}

// withPort and withHost set one half of a host:port address; the host
// defaults to 127.0.0.1 (ZooKeeper's AdminServer binds 0.0.0.0; Paddock's
// admin endpoints stay on loopback unless told otherwise).
func withPort(addr, port string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

func withHost(addr, host string) string {
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		port = "8080"
	}
	return net.JoinHostPort(host, port)
}
