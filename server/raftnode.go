package server

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
)

// secretLen is the size of the cluster secret that keys session passwords.
const secretLen = 32

// raftNode owns the Raft instance and its stores.
type raftNode struct {
	r      *raft.Raft
	raft   atomic.Pointer[raft.Raft] // r, for leads before startRaft returns
	closer []io.Closer
	// trans and id are what pushCommits needs to speak Raft to peers.
	trans raft.Transport
	id    raft.ServerID
	// log is the leader's parallel log store (nil unless
	// parallelLeaderLog).
	log *leaderLog
	// stopped is closed once Raft has shut down: the futures settled on
	// it (raftstop.go) stop waiting then.
	stopped  chan struct{}
	stopOnce sync.Once
}

// maxAppendEntries caps the entries Raft batches into one disk write and
// one AppendEntries RPC (and sizes its apply channel). Raft's default: a
// larger value costs an allocation of that many slots on every commit
// (processLogs), garbage that dominated small batches at 1,024.
const maxAppendEntries = 64

// standaloneID is a standalone server's Raft id.
const standaloneID raft.ServerID = "1"

// standaloneRaftConfig is a single-voter configuration with short timers:
// with no peers there is nobody to wait for.
func standaloneRaftConfig(cfg *Config) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = standaloneID
	rc.HeartbeatTimeout = 5 * time.Millisecond
	rc.ElectionTimeout = 5 * time.Millisecond
	rc.LeaderLeaseTimeout = 5 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = maxAppendEntries
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	if cfg.TrailingLogs > 0 {
		rc.TrailingLogs = cfg.TrailingLogs
	}
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	rc.Logger = raftLogger(cfg, "raft")
	return rc
}

// startRaft creates the stores (in memory, or raft-boltdb and file
// snapshots under cfg.DataDir), bootstraps a single-voter configuration on
// first start, and starts Raft. fail is called if a write of the Raft log
// fails (failStopLog, leaderLog); the server must stop. A cluster node's forwarder
// (nil standalone) learns of each tagged entry it applies (fwdlocal.go).
func startRaft(cfg *Config, f *fsm.FSM, mux *clusterMux, fwd *forwarder, fail func(error)) (*raftNode, error) {
	rc := standaloneRaftConfig(cfg)
	if cfg.clustered() {
		clusterRaftConfig(rc, cfg)
	}
	n := &raftNode{stopped: make(chan struct{})}
	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	parallel := parallelLeaderLog(cfg)
	switch {
	case cfg.DataDir == "" && cfg.Stores != nil:
		logs, stable, snaps = newFailStopLog(cfg.Stores.Logs, fail, nil), cfg.Stores.Stable, cfg.Stores.Snaps
	case cfg.DataDir == "":
		st := NewMemoryStores()
		logs, stable, snaps = newFailStopLog(st.Logs, fail, nil), st.Stable, st.Snaps
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, err
		}
		var fileErrs fileErrors
		ls, st, closer, err := openLogStore(cfg, &fileErrs)
		if err != nil {
			return nil, err
		}
		n.closer = append(n.closer, closer)
		ls = newFailStopLog(ls, fail, fileErrs.lastErr)
		if gone, err := removeUnfinishedSnapshots(filepath.Join(cfg.DataDir, snapshotsDir)); err != nil {
			n.close()
			return nil, fmt.Errorf("remove unfinished snapshots: %w", err)
		} else if len(gone) > 0 {
			cfg.Logger.Warn("removed snapshots left unfinished by an earlier run", "snapshots", gone)
		}
		fss, err := raft.NewFileSnapshotStore(cfg.DataDir, 2, io.Discard)
		if err != nil {
			n.close()
			return nil, fmt.Errorf("open snapshot store: %w", err)
		}
		if parallel {
			ls = n.parallelLog(ls, fail)
			parallel = false
		}
		// Recent entries stay in memory for the leader to replicate
		// without reading them back from disk.
		cache, err := raft.NewLogCache(LogCacheSize, ls)
		if err != nil {
			n.close()
			return nil, err
		}
		logs, stable, snaps = cache, st, fss
	}
	if parallel {
		logs = n.parallelLog(logs, fail)
	}
	var (
		trans raft.Transport
		ahead *commitAheadTransport
	)
	conf := raft.Configuration{}
	if mux != nil {
		var flushLog func() error
		if n.log != nil {
			flushLog = n.log.flush
		}
		ahead = newCommitAheadTransport(raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: raftStream{mux}, MaxPool: 3, Timeout: 10 * time.Second,
			ServerAddressProvider: raftAddrs{cfg}, Logger: hclog.NewNullLogger()}), flushLog)
		if n.log != nil {
			ahead.capCommit = n.log.commitCap
		}
		trans = ahead
		n.closer = append(n.closer, ahead) // Raft closes it too; both may
		for _, p := range cfg.Peers {
			suffrage := raft.Voter
			if p.Observer {
				suffrage = raft.Nonvoter
			}
			conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr), Suffrage: suffrage})
		}
	} else {
		addr, mem := raft.NewInmemTransport("")
		trans = mem
		conf.Servers = []raft.Server{{ID: rc.LocalID, Address: addr}}
	}
	fstable := newFailStopStable(stable, fail)
	stable = fstable
	if ahead != nil {
		// Raft's goroutines may write a term as soon as they start (a
		// peer's heartbeat, an RPC already waiting).
		ahead.started = func() { fstable.running.Store(true) }
	}
	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		n.close()
		return nil, err
	}
	if !existing && !cfg.Join {
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, conf); err != nil {
			n.close()
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
	}
	var rfsm raft.FSM = f
	if n.log != nil {
		rfsm = &durableFSM{f: f, log: n.log}
	}
	if fwd != nil {
		rfsm = &tagFSM{inner: rfsm, applied: func(l *raft.Log, out interface{}) {
			fwd.resolveLocal(l.Extensions, l.Index, out)
		}, restored: fwd.s.snapshotInstalled}
	}
	r, err := newRaft(rc, withFailpoints(rfsm), logs, stable, snaps, trans)
	if err != nil {
		n.close()
		return nil, err
	}
	fstable.running.Store(true) // standalone: its first election is 5 ms away
	if existing {
		// Checked before Raft's first election timeout, so a refused
		// node never campaigns.
		if err := checkStoredMembership(cfg, r.GetConfiguration().Configuration()); err != nil {
			_ = r.Shutdown().Error()
			n.close()
			return nil, err
		}
	}
	n.raft.Store(r)
	n.r, n.trans, n.id = r, trans, rc.LocalID
	if ahead != nil {
		ahead.raft.Store(r)
	}
	return n, nil
}

// checkStoredMembership refuses state of the other kind: a cluster node
// on a standalone server's state (its one member has no cluster address:
// the node would lead a cluster of its own that its peers can never
// join), and a standalone server on a cluster member's state (it would
// wait forever for an election over the cluster port it does not have).
func checkStoredMembership(cfg *Config, conf raft.Configuration) error {
	clusterAddrs := 0
	for _, srv := range conf.Servers {
		if _, _, err := net.SplitHostPort(string(srv.Address)); err == nil {
			clusterAddrs++
		}
	}
	where := cfg.DataDir
	if where == "" {
		where = "the configured stores"
	}
	switch {
	case cfg.clustered() && len(conf.Servers) > 0 && clusterAddrs == 0:
		return fmt.Errorf("%s holds a standalone server's state (restored or imported without --peer, or written by "+
			"a standalone server), which a cluster node cannot start from. Seed each node's data dir for the cluster "+
			"instead: paddock snapshot restore FILE (or import-zk) --data-dir DIR --id N with a --peer ID=HOST:PORT "+
			"for every member, as its server.N lines give them (a running standalone server's state: paddock snapshot save)", where)
	case !cfg.clustered() && clusterAddrs > 0 && !soleVoter(conf, standaloneID):
		var members []string
		for _, srv := range conf.Servers {
			members = append(members, fmt.Sprintf("%s=%s", srv.ID, srv.Address))
		}
		return fmt.Errorf("%s holds a cluster member's state (members %s); start it with its cluster's "+
			"configuration (zoo.cfg server.N lines and myid, or --id and --peer), or restore a snapshot into a new "+
			"data dir without --peer for a standalone server", where, strings.Join(members, ", "))
	}
	return nil
}

// soleVoter reports whether id is conf's only member, a voter: a
// one-node cluster's state (a zoo.cfg with one server line and
// standaloneEnabled=false), which a standalone server of that id starts
// from as ZooKeeper's does, its one voter electing itself.
func soleVoter(conf raft.Configuration, id raft.ServerID) bool {
	return len(conf.Servers) == 1 && conf.Servers[0].ID == id && conf.Servers[0].Suffrage == raft.Voter
}

func newSecret() []byte {
	secret := make([]byte, secretLen)
	if _, err := rand.Read(secret); err != nil {
		panic("paddock: no randomness for the cluster secret: " + err.Error())
	}
	return secret
}

// parallelLeaderLog reports whether a leader writes its log in parallel
// with replication (leaderLog): in a cluster unless SyncLeaderLog or
// NoSync (no fsync, nothing to overlap) is set. In memory too, so that
// every cluster test runs it.
func parallelLeaderLog(cfg *Config) bool {
	return cfg.clustered() && !cfg.NoSync && !cfg.SyncLeaderLog
}

// parallelLog wraps store in the node's leaderLog.
func (n *raftNode) parallelLog(store raft.LogStore, fail func(error)) raft.LogStore {
	n.log = newLeaderLog(store, n.leads, fail)
	// Closed first: it writes to the store the other closers close.
	n.closer = append([]io.Closer{n.log}, n.closer...)
	return n.log
}

// leads reports whether this node is Raft's leader (false until Raft
// runs).
func (n *raftNode) leads() bool {
	r := n.raft.Load()
	return r != nil && r.State() == raft.Leader
}

// release lets the FSM give up waiting for the leader's log write: the
// server is stopping, and nothing it still answers reaches a client.
func (n *raftNode) release() {
	if n.log != nil {
		n.log.release()
	}
}

func (n *raftNode) close() {
	n.release()
	if n.r != nil {
		_ = n.r.Shutdown().Error()
	}
	if n.stopped != nil {
		n.stopOnce.Do(func() { close(n.stopped) })
	}
	for _, c := range n.closer {
		_ = c.Close()
	}
}

// clusterRaftConfig adjusts a Raft config for a multi-node cluster.
func clusterRaftConfig(rc *raft.Config, cfg *Config) {
	rc.LocalID = raft.ServerID(cfg.ID)
	rc.HeartbeatTimeout = cfg.Raft.Heartbeat
	rc.ElectionTimeout = cfg.Raft.Election
	rc.LeaderLeaseTimeout = cfg.Raft.LeaderLease
	rc.CommitTimeout = cfg.Raft.Commit
	rc.Logger = raftLogger(cfg, "raft-"+cfg.ID)
	// A node removed from the configuration stays a follower that starts
	// no election (it has no vote) and answers every proposal
	// ErrNotLeader. Raft's default shuts it down instead, and then a
	// proposal its buffered apply channel still takes is never answered:
	// a write racing the removal, or the removed leader's own publication
	// of the new configuration, waited for ever. It can also be added
	// back without a restart.
	rc.ShutdownOnRemove = false
}

// raftLogger sends Raft's warnings and errors to the server's slog logger.
func raftLogger(cfg *Config, name string) hclog.Logger {
	level := hclog.Warn
	if !cfg.clustered() {
		level = hclog.Error // a lone voter's election chatter is noise
	}
	return hclog.New(&hclog.LoggerOptions{Name: name, Level: level,
		Output: slogWriter{cfg.Logger}, DisableTime: true})
}

// slogWriter turns each line hclog writes into one slog record.
type slogWriter struct{ log *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.log.Warn(strings.TrimSpace(string(p)))
	return len(p), nil
}

// newRaft is raft.NewRaft, with the panic it raises when the log does not
// reach back to the snapshot it restored turned into an error that says
// why. That happens when the newest snapshot is damaged: Raft falls back
// to an older one, whose successors the log, compacted past it, no longer
// holds. Starting from the older state would silently lose writes, so the
// server refuses to start instead. Raft also panics there when it cannot
// store the term it read; the stable store's error is returned then.
func newRaft(rc *raft.Config, f raft.FSM, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore,
	trans raft.Transport) (r *raft.Raft, err error) {
	defer func() {
		if p := recover(); p != nil {
			if fs, ok := stable.(*failStopStable); ok && fs.firstErr() != nil {
				r, err = nil, fs.firstErr() // Raft could not store its term
				return
			}
			r, err = nil, fmt.Errorf("the Raft log does not continue the snapshot Raft could restore (%v)%s; "+
				"restore the data dir from a backup (paddock snapshot restore) or, in a cluster, start this node "+
				"from an empty data dir so that it gets the leader's snapshot", p, damagedSnapshots(snaps))
		}
	}()
	return raft.NewRaft(rc, f, logs, stable, snaps, trans)
}

// damagedSnapshots names the snapshots in snaps that cannot be read back
// (FileSnapshotStore checks each one's CRC as it opens it).
func damagedSnapshots(snaps raft.SnapshotStore) string {
	metas, err := snaps.List()
	if err != nil {
		return fmt.Sprintf(": listing snapshots: %v", err)
	}
	var bad []string
	for _, m := range metas {
		_, rc, err := snaps.Open(m.ID)
		if err != nil {
			bad = append(bad, fmt.Sprintf("snapshot %s is damaged (%v)", m.ID, err))
			continue
		}
		_ = rc.Close()
	}
	if len(bad) == 0 {
		return ""
	}
	return ": " + strings.Join(bad, "; ")
}
