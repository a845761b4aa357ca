package zktest

import (
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/server"
)

// faultDisk is a server's in-memory Raft log with a disk's two faults:
// appends that take longer (SlowDisk) and appends that fail (FailDisk).
type faultDisk struct {
	raft.LogStore
	delay atomic.Int64          // nanoseconds each append waits first
	err   atomic.Pointer[error] // the error every append fails with
}

// memoryStoresWithDisk returns in-memory stores whose log goes through a
// faultDisk.
func memoryStoresWithDisk() (*server.Stores, *faultDisk) {
	st := server.NewMemoryStores()
	d := &faultDisk{LogStore: st.Logs}
	st.Logs = d
	return st, d
}

func (d *faultDisk) StoreLog(l *raft.Log) error { return d.StoreLogs([]*raft.Log{l}) }

func (d *faultDisk) StoreLogs(logs []*raft.Log) error {
	if ns := d.delay.Load(); ns > 0 {
		time.Sleep(time.Duration(ns)) // the slow disk itself, not a wait for a condition
	}
	if p := d.err.Load(); p != nil {
		return *p
	}
	return d.LogStore.StoreLogs(logs)
}

// SlowDisk makes every later write of the server's Raft log take d more
// (a slow fsync); 0 makes the disk fast again. Writes still succeed, each
// acknowledged at least d after it reached a disk in its path: on a
// cluster's leader every write waits (the leader's copy must be durable
// before anything applies it); on a follower its own appends, and so its
// acknowledgements to the leader. Not with WithDurableStorage.
func (s *Server) SlowDisk(d time.Duration) { s.faultDisk().delay.Store(int64(d)) }

// FailDisk makes every later write of the server's Raft log fail with err
// (a full disk: syscall.ENOSPC); nil makes the disk work again. The
// server stops itself at its first failed write, as `paddock server` does
// and as ZooKeeper exits: every client connection drops (clients move to
// another node, or retry), the write is not acknowledged, and Err returns
// why it stopped. Call FailDisk(nil), then Restart, to bring it back with
// everything it had stored. Not with WithDurableStorage.
func (s *Server) FailDisk(err error) {
	d := s.faultDisk()
	if err == nil {
		d.err.Store(nil)
		return
	}
	d.err.Store(&err)
}

// Err returns the error the server stopped itself for (a write of its
// Raft log failed, see FailDisk), or nil.
func (s *Server) Err() error {
	if srv := s.running(); srv != nil {
		return srv.Err()
	}
	return nil
}

func (s *Server) faultDisk() *faultDisk {
	s.t.Helper()
	if s.disk == nil {
		s.t.Fatalf("zktest: disk faults need the in-memory stores (not WithDurableStorage)")
	}
	return s.disk
}

// SlowDisk makes node i's Raft log writes take d more (see Server.SlowDisk).
func (c *Cluster) SlowDisk(i int, d time.Duration) { c.nodes[i].SlowDisk(d) }

// FailDisk makes node i's Raft log writes fail with err, nil to undo it
// (see Server.FailDisk). A node stopped by it is brought back by
// FailDisk(i, nil) and Restart(i); the others go on without it.
func (c *Cluster) FailDisk(i int, err error) { c.nodes[i].FailDisk(err) }
