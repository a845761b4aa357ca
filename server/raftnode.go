package server

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/paddockzk/paddock/fsm"
)

// secretLen is the size of the cluster secret that keys session passwords.
const secretLen = 32

// raftNode owns the Raft instance and its stores.
type raftNode struct {
	r      *raft.Raft
	closer []io.Closer
}

// standaloneRaftConfig is a single-voter configuration with short timers:
// with no peers there is nobody to wait for.
func standaloneRaftConfig(cfg *Config) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = "1"
	rc.HeartbeatTimeout = 20 * time.Millisecond
	rc.ElectionTimeout = 20 * time.Millisecond
	rc.LeaderLeaseTimeout = 20 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	rc.BatchApplyCh = true
	rc.MaxAppendEntries = 1024
	rc.SnapshotThreshold = cfg.SnapshotThreshold
	if cfg.SnapshotInterval > 0 {
		rc.SnapshotInterval = cfg.SnapshotInterval
	}
	rc.Logger = hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Error, Output: os.Stderr})
	return rc
}

// startRaft creates the stores (in memory, or raft-boltdb and file
// snapshots under cfg.DataDir), bootstraps a single-voter configuration on
// first start, and starts Raft.
func startRaft(cfg *Config, f *fsm.FSM) (*raftNode, error) {
	rc := standaloneRaftConfig(cfg)
	n := &raftNode{}
	var (
		logs   raft.LogStore
		stable raft.StableStore
		snaps  raft.SnapshotStore
	)
	switch {
	case cfg.DataDir == "" && cfg.Stores != nil:
		logs, stable, snaps = cfg.Stores.Logs, cfg.Stores.Stable, cfg.Stores.Snaps
	case cfg.DataDir == "":
		st := NewMemoryStores()
		logs, stable, snaps = st.Logs, st.Stable, st.Snaps
	default:
		if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
			return nil, err
		}
		bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(cfg.DataDir, "raft.db"), NoSync: cfg.NoSync})
		if err != nil {
			return nil, fmt.Errorf("open raft log: %w", err)
		}
		n.closer = append(n.closer, bolt)
		fss, err := raft.NewFileSnapshotStore(cfg.DataDir, 2, io.Discard)
		if err != nil {
			_ = bolt.Close()
			return nil, fmt.Errorf("open snapshot store: %w", err)
		}
		logs, stable, snaps = bolt, bolt, fss
	}
	addr, trans := raft.NewInmemTransport("")
	existing, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		n.close()
		return nil, err
	}
	if !existing {
		conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}
		if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, conf); err != nil {
			n.close()
			return nil, fmt.Errorf("bootstrap: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, f, logs, stable, snaps, trans)
	if err != nil {
		n.close()
		return nil, err
	}
	n.r = r
	return n, nil
}

// waitReady waits until this node leads, every committed entry is applied,
// and the cluster secret exists (proposing it on first start).
func (n *raftNode) waitReady(f *fsm.FSM, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for n.r.State() != raft.Leader {
		if time.Now().After(deadline) {
			return errors.New("raft: no leadership")
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := n.r.Barrier(time.Until(deadline)).Error(); err != nil {
		return fmt.Errorf("raft barrier: %w", err)
	}
	if f.HasSecret() {
		return nil
	}
	secret := make([]byte, secretLen)
	if _, err := rand.Read(secret); err != nil {
		return err
	}
	b, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdInit, Secret: secret})
	if err != nil {
		return err
	}
	return n.r.Apply(b, time.Until(deadline)).Error()
}

func (n *raftNode) close() {
	if n.r != nil {
		_ = n.r.Shutdown().Error()
	}
	for _, c := range n.closer {
		_ = c.Close()
	}
}
