package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// ApplyZooCfg reads a ZooKeeper zoo.cfg (Java properties: key=value lines,
// # comments) into cfg. A key may also be written with the "zookeeper."
// prefix of its system-property form. Keys Paddock does not use are
// returned (and logged once by the caller), not fatal. server.N lines are
// returned in servers for the cluster configuration.
func ApplyZooCfg(r io.Reader, cfg *Config) (unused []string, servers map[string]string, err error) {
	servers = make(map[string]string)
	sc := bufio.NewScanner(r)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		key, val, ok := cutProperty(text)
		if !ok {
			return nil, nil, fmt.Errorf("zoo.cfg line %d: expected key=value, got %q", line, text)
		}
		key = strings.TrimPrefix(key, "zookeeper.")
		if strings.HasPrefix(key, "server.") {
			servers[key] = val
			continue
		}
		used, err := applyKey(cfg, key, val)
		if err != nil {
			return nil, nil, fmt.Errorf("zoo.cfg line %d: %s: %w", line, key, err)
		}
		if !used {
			unused = append(unused, key)
		}
	}
	return unused, servers, sc.Err()
}

func cutProperty(s string) (string, string, bool) {
	i := strings.IndexAny(s, "=:")
	if i < 0 {
		return "", "", false
	}
	return strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:]), true
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
	case "clientPort":
		cfg.Port = num()
	case "clientPortAddress":
		cfg.Bind = val
	case "maxClientCnxns":
		cfg.MaxClientCnxns = num()
	case "minSessionTimeout":
		cfg.MinSessionTimeout = ms()
	case "maxSessionTimeout":
		cfg.MaxSessionTimeout = ms()
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
	case "znode.container.maxPerMinute":
		cfg.MaxReapPerInterval = num()
	case "snapCount":
		var n uint64
		n, err = strconv.ParseUint(val, 10, 64)
		cfg.SnapshotThreshold = n
	case "admin.serverPort":
		cfg.AdminAddr = withPort(cfg.AdminAddr, val)
	case "admin.serverAddress":
		cfg.AdminAddr = withHost(cfg.AdminAddr, val)
	case "admin.enableServer":
		if strings.EqualFold(val, "false") {
			cfg.AdminAddr = ""
		}
	case "metricsProvider.httpPort":
		cfg.MetricsAddr = withPort(cfg.MetricsAddr, val)
	case "metricsProvider.httpHost":
		cfg.MetricsAddr = withHost(cfg.MetricsAddr, val)
	case "metricsProvider.className":
		// Paddock always exports Prometheus metrics.
	case "DigestAuthenticationProvider.superDigest":
		cfg.SuperDigest = val
	case "skipACL":
		cfg.SkipACL = strings.EqualFold(val, "yes") || strings.EqualFold(val, "true")
	case "secureClientPort":
		cfg.SecurePort = num()
	case "secureClientPortAddress":
		cfg.SecureBind = val
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
	case "sslQuorum", "serverCnxnFactory", "client.secure", "ssl.hostnameVerification", "ssl.quorum.hostnameVerification":
		// Implied by the ssl.quorum.* files / the secure port; accepted.
	case "enforceQuota":
		cfg.EnforceQuota, err = strconv.ParseBool(val)
	case "reconfigEnabled":
		cfg.ReconfigEnabled, err = strconv.ParseBool(val)
	case "readonlymode.enabled":
		cfg.ReadOnlyMode, err = strconv.ParseBool(val)
	case "standaloneEnabled":
		// Paddock is standalone exactly when no server.N lines are given.
	case "forceSync":
		cfg.NoSync = strings.EqualFold(val, "no")
	default:
		return false, nil
	}
	return true, err
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
