package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/paddockzk/paddock/internal/sysmon"
	"github.com/paddockzk/paddock/server"
	"github.com/spf13/cobra"
)

func newServerCmd() *cobra.Command {
	cfg := server.DefaultConfig()
	var configFile, logFormat, id string
	var peers []string
	rt := runtimeTuning{GC: server.DefaultGCTuning(), SysmonSlack: sysmon.DefaultSlack}
	gc := &rt.GC
	commitTimeout := server.DefaultRaftTimers.Commit
	var gcHeadroomMiB uint64 = gc.MinHeadroom >> 20
	var gcIdleMiB uint64 = gc.IdleAlloc >> 20
	cmd := &cobra.Command{
		Use:   "server [zoo.cfg]",
		Short: "Run a ZooKeeper-compatible server (standalone, in memory by default)",
		Long: `Run a Paddock server. With no flags it serves ZooKeeper's client protocol on
127.0.0.1:2181 and keeps everything in memory. --data-dir makes it durable.
--config (or the zoo.cfg path as the one argument, as zkServer.sh takes it)
reads a ZooKeeper zoo.cfg; flags given explicitly override it.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log := newLogger(logFormat)
			path, err := zooCfgPath(configFile, args)
			if err != nil {
				return err
			}
			final := server.DefaultConfig()
			var zc *server.ZooCfg
			if path != "" {
				if zc, err = server.LoadZooCfg(path, &final); err != nil {
					return err
				}
				server.LogUnused(log, zc.Unused)
			}
			overrideFromFlags(cmd, &final, &cfg)
			clientFlags := cmd.Flags().Changed("bind") || cmd.Flags().Changed("port")
			if zc != nil && cmd.Flags().Changed("bind") && !cmd.Flags().Changed("port") && final.NoClientPort {
				return fmt.Errorf("--bind replaces the zoo.cfg's client address (a server line's too) and the zoo.cfg sets no clientPort: pass --port too")
			}
			if zc != nil && cmd.Flags().Changed("data-dir") && id == "" {
				final.ID = "" // read myid from the data dir in use, not the zoo.cfg's
			}
			if err := clusterFromFlags(&final, id, peers); err != nil {
				return err
			}
			// Explicit --bind/--port win over the zoo.cfg's client address.
			if zc != nil {
				if err := zc.Finish(&final, clientFlags); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("raft-commit-timeout") {
				if final.Raft == (server.RaftTimers{}) {
					final.Raft = server.DefaultRaftTimers
				}
				final.Raft.Commit = commitTimeout
			}
			final.Logger = log
			gc.MinHeadroom = gcHeadroomMiB << 20
			gc.IdleAlloc = gcIdleMiB << 20
			return serve(final, rt, log)
		},
	}
	f := cmd.Flags()
	f.StringVar(&configFile, "config", "", "ZooKeeper zoo.cfg to read")
	f.StringVar(&cfg.Bind, "bind", cfg.Bind, "client address to listen on")
	f.IntVar(&cfg.Port, "port", cfg.Port, "client port (0 picks a free one)")
	f.StringVar(&cfg.DataDir, "data-dir", "", "directory for the Raft log and snapshots (empty: in memory)")
	f.DurationVar(&cfg.TickTime, "tick", cfg.TickTime, "tick time: the session-expiry granularity")
	f.IntVar(&cfg.MaxClientCnxns, "max-client-cnxns", cfg.MaxClientCnxns, "connections per client IP (0: unlimited)")
	f.BoolVar(&cfg.NoSync, "no-sync", false, "do not fsync the Raft log (not durable on power loss)")
	f.BoolVar(&cfg.SyncLeaderLog, "sync-leader-log", false, "cluster: the leader stores each batch before it replicates it, instead of while (slower; same durability)")
	f.Uint64Var(&cfg.SnapshotThreshold, "snapshot-threshold", cfg.SnapshotThreshold, "Raft log entries since the last snapshot that make the next one (zoo.cfg snapCount)")
	f.DurationVar(&cfg.SnapshotInterval, "snapshot-interval", cfg.SnapshotInterval, "how often Raft checks --snapshot-threshold (each wait between once and twice this; at least 5ms)")
	f.StringVar(&cfg.LogStore, "log-store", "", "Raft log store of a data dir: wal or bolt (default: what the dir holds, wal for a new one)")
	f.IntVar(&gc.Percent, "gc-percent", gc.Percent, "Go heap headroom as a percentage of the live heap, once above --gc-min-headroom (GOGC in the environment overrides both)")
	f.Uint64Var(&gcHeadroomMiB, "gc-min-headroom", gcHeadroomMiB, "garbage in MiB the Go heap may gather between collections, at least")
	f.Uint64Var(&gcIdleMiB, "gc-idle-alloc", gcIdleMiB, "MiB allocated per second below which the server counts as idle and returns its free heap to the OS (0: never)")
	f.DurationVar(&gc.IdleAfter, "gc-idle-after", gc.IdleAfter, "how long the server must stay idle before it returns its free heap to the OS")
	f.DurationVar(&gc.IdleMinGap, "gc-idle-min-gap", gc.IdleMinGap, "least time between two returns of the free heap to the OS")
	f.DurationVar(&rt.SysmonSlack, "sysmon-slack", rt.SysmonSlack, "Linux timer slack of the Go runtime's monitor thread: about how often it polls while the server is busy (0: the kernel's default, ~20-70µs; needs CAP_SYS_NICE)")
	f.DurationVar(&commitTimeout, "raft-commit-timeout", commitTimeout, "cluster: longest wait before the leader tells idle followers the commit index (latency of writes through followers vs idle heartbeat traffic)")
	f.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	f.IntVar(&cfg.SecurePort, "secure-port", 0, "also serve clients over TLS on this port (zoo.cfg secureClientPort)")
	f.StringVar(&cfg.TLSFiles.CertFile, "tls-cert", "", "PEM certificate (chain) for the secure client port")
	f.StringVar(&cfg.TLSFiles.KeyFile, "tls-key", "", "PEM private key for the secure client port")
	f.StringVar(&cfg.TLSFiles.TrustStore, "tls-ca", "", "PEM CA certificates that client certificates must chain to (client certs become x509 identities)")
	f.StringVar(&cfg.TLSFiles.ClientAuth, "tls-client-auth", "", "none, want or need (default: need when --tls-ca is set, else none; need with a zoo.cfg, as ZooKeeper)")
	f.StringVar(&cfg.ClusterTLSFiles.CertFile, "cluster-tls-cert", "", "PEM certificate for mutual TLS between cluster nodes")
	f.StringVar(&cfg.ClusterTLSFiles.KeyFile, "cluster-tls-key", "", "PEM private key for the cluster port")
	f.StringVar(&cfg.ClusterTLSFiles.TrustStore, "cluster-tls-ca", "", "PEM CA certificates peers' certificates must chain to")
	f.StringVar(&cfg.SuperDigest, "super-digest", "", "super user digest user:base64(sha1(user:password)); that user bypasses ACLs")
	f.StringVar(&cfg.X509SuperUser, "x509-super-user", "", "TLS client identity (as x509 ids read, e.g. \"O=example,CN=admin\") that bypasses ACLs")
	f.BoolVar(&cfg.SkipACL, "skip-acl", false, "disable ACL checks (trusted test setups only)")
	f.StringVar(&cfg.AdminAddr, "admin-addr", "", "serve the admin HTTP endpoints (/commands, /metrics, /healthz, /readyz, /cluster) on this address, e.g. 127.0.0.1:8080")
	f.StringSliceVar(&cfg.AdminHosts, "admin-allowed-hosts", nil, "host names the admin endpoint accepts in the Host header of /snapshot, /debug/pprof and changes (IP addresses and localhost always)")
	f.StringVar(&cfg.MetricsAddr, "metrics-addr", "", "serve Prometheus /metrics on this address")
	f.BoolVar(&cfg.Join, "join", false, "join an existing cluster (wait for `paddock cluster add`) instead of bootstrapping")
	f.StringVar(&id, "id", "", "this node's id in a cluster (default: dataDir/myid)")
	f.StringArrayVar(&peers, "peer", nil, "cluster member ID=HOST:CLUSTERPORT[;CLIENTHOST:CLIENTPORT], repeated for every member including this one")
	return cmd
}

// overrideFromFlags copies every flag the user set explicitly.
func overrideFromFlags(cmd *cobra.Command, dst, flags *server.Config) {
	set := func(name string, apply func()) {
		if cmd.Flags().Changed(name) {
			apply()
		}
	}
	set("bind", func() {
		dst.Bind = flags.Bind
		if dst.SecureBind == server.ZooCfgBind {
			// zoo.cfg's default for the secure port, every interface:
			// --bind, given, restricts it as it restricts the plain one.
			dst.SecureBind = ""
		}
	})
	set("port", func() { dst.Port, dst.NoClientPort = flags.Port, false })
	set("data-dir", func() { dst.DataDir = flags.DataDir })
	set("tick", func() { dst.TickTime = flags.TickTime })
	set("max-client-cnxns", func() { dst.MaxClientCnxns = flags.MaxClientCnxns })
	set("no-sync", func() { dst.NoSync = flags.NoSync })
	set("sync-leader-log", func() { dst.SyncLeaderLog = flags.SyncLeaderLog })
	set("log-store", func() { dst.LogStore = flags.LogStore })
	set("snapshot-threshold", func() { dst.SnapshotThreshold = flags.SnapshotThreshold })
	set("snapshot-interval", func() { dst.SnapshotInterval = flags.SnapshotInterval })
	set("admin-addr", func() { dst.AdminAddr = flags.AdminAddr })
	set("admin-allowed-hosts", func() { dst.AdminHosts = flags.AdminHosts })
	set("metrics-addr", func() { dst.MetricsAddr = flags.MetricsAddr })
	set("join", func() { dst.Join = flags.Join })
	set("secure-port", func() { dst.SecurePort = flags.SecurePort })
	set("tls-cert", func() { dst.TLSFiles.CertFile = flags.TLSFiles.CertFile })
	set("tls-key", func() { dst.TLSFiles.KeyFile = flags.TLSFiles.KeyFile })
	set("tls-ca", func() { dst.TLSFiles.TrustStore = flags.TLSFiles.TrustStore })
	set("tls-client-auth", func() { dst.TLSFiles.ClientAuth = flags.TLSFiles.ClientAuth })
	set("cluster-tls-cert", func() { dst.ClusterTLSFiles.CertFile = flags.ClusterTLSFiles.CertFile })
	set("cluster-tls-key", func() { dst.ClusterTLSFiles.KeyFile = flags.ClusterTLSFiles.KeyFile })
	set("cluster-tls-ca", func() { dst.ClusterTLSFiles.TrustStore = flags.ClusterTLSFiles.TrustStore })
	set("super-digest", func() { dst.SuperDigest = flags.SuperDigest })
	set("skip-acl", func() { dst.SkipACL = flags.SkipACL })
	set("x509-super-user", func() { dst.X509SuperUser = flags.X509SuperUser })
}

// zooCfgPath returns the zoo.cfg to read: --config, or the one positional
// argument (paddock server zoo.cfg, as QuorumPeerMain and zkServer.sh take
// it); both must then name the same file.
func zooCfgPath(flag string, args []string) (string, error) {
	if len(args) == 0 {
		return flag, nil
	}
	if flag != "" && filepath.Clean(flag) != filepath.Clean(args[0]) {
		return "", fmt.Errorf("two zoo.cfg files: --config %s and %s", flag, args[0])
	}
	return args[0], nil
}

// clusterFromFlags applies --id and --peer; with peers and no id, the id
// comes from dataDir/myid as in ZooKeeper.
func clusterFromFlags(cfg *server.Config, id string, peers []string) error {
	if len(peers) > 0 {
		cfg.Peers = nil
		for _, s := range peers {
			p, err := server.ParsePeerFlag(s)
			if err != nil {
				return err
			}
			cfg.Peers = append(cfg.Peers, p)
		}
	}
	if id != "" {
		cfg.ID = id
	}
	if len(cfg.Peers) > 0 && cfg.ID == "" {
		if cfg.DataDir == "" {
			return fmt.Errorf("a cluster node needs --id (or a dataDir with a myid file)")
		}
		myid, err := server.ReadMyID(cfg.DataDir)
		if err != nil {
			return err
		}
		cfg.ID = myid
	}
	return nil
}

func newLogger(format string) *slog.Logger {
	if format == "json" {
		return slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, nil))
}

// serve runs the server paddock server configured (tests replace it).
var serve = runServer

// runtimeTuning is how `paddock server` tunes the Go runtime of its
// process: not set by an embedding program.
type runtimeTuning struct {
	GC server.GCTuning
	// SysmonSlack is the timer slack given to the runtime's monitor
	// thread (internal/sysmon); 0 leaves it alone.
	SysmonSlack time.Duration
}

func runServer(cfg server.Config, rt runtimeTuning, log *slog.Logger) error {
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	storage := "in memory"
	if cfg.DataDir != "" {
		storage = cfg.DataDir
	}
	addr := "none (secure client port only)"
	if a := srv.Addr(); a != nil {
		addr = a.String()
	}
	log.Info("paddock serving ZooKeeper clients", "addr", addr, "mode", srv.Mode(),
		"storage", storage, "version", server.ZooKeeperVersion)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go server.TuneGC(ctx, rt.GC)
	relaxSysmon(ctx, rt.SysmonSlack, log)
	select {
	case <-ctx.Done():
	case <-srv.Failed():
		return fmt.Errorf("server stopped: %w", srv.Err())
	}
	log.Info("shutting down")
	done := make(chan error, 1)
	go func() {
		// A leader hands over first: the others have a leader at once
		// instead of after an election timeout.
		if err := srv.StepDown(); err != nil {
			log.Warn("could not hand leadership over before shutting down", "err", err)
		}
		done <- srv.Close()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		return fmt.Errorf("shutdown timed out")
	}
}

// relaxSysmon gives the runtime's monitor thread its timer slack, and
// keeps the threads it starts at the process's, until ctx ends.
func relaxSysmon(ctx context.Context, slack time.Duration, log *slog.Logger) {
	if slack <= 0 {
		return
	}
	r, err := sysmon.Relax(slack)
	if err != nil {
		log.Info("runtime monitor's timer slack left at the default", "err", err)
		return
	}
	log.Debug("runtime monitor's timer slack set", "thread", r.Thread(), "slack", slack)
	go r.Keep(ctx, sysmon.DefaultKeepInterval)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "paddock %s (reports ZooKeeper %s)\n", server.Version, server.ZooKeeperVersion)
		},
	}
}
