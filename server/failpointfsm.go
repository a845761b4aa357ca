//go:build failpoints

package server

import (
	"io"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/failpoint"
)

// withFailpoints wraps the FSM Raft drives with the apply and snapshot
// failpoints (internal/failpoint; only in a -tags failpoints build).
func withFailpoints(f raft.FSM) raft.FSM { return &failpointFSM{inner: f} }

// failpointFSM marks the failpoints around applying a batch and writing a
// snapshot. It is a raft.BatchingFSM whatever the inner FSM is, and passes
// a batch on as Raft would (configuration entries only to a batching
// inner FSM).
type failpointFSM struct{ inner raft.FSM }

// ApplyBatch applies logs between BeforeApply and AfterApply.
func (f *failpointFSM) ApplyBatch(logs []*raft.Log) []interface{} {
	failpoint.Hit(failpoint.BeforeApply)
	out := applyBatch(f.inner, logs)
	failpoint.Hit(failpoint.AfterApply)
	return out
}

// Apply applies one entry (see ApplyBatch).
func (f *failpointFSM) Apply(l *raft.Log) interface{} { return f.ApplyBatch([]*raft.Log{l})[0] }

// Snapshot snapshots the inner FSM; writing it marks the snapshot
// failpoints.
func (f *failpointFSM) Snapshot() (raft.FSMSnapshot, error) {
	snap, err := f.inner.Snapshot()
	if err != nil {
		return nil, err
	}
	return &failpointSnapshot{FSMSnapshot: snap}, nil
}

// Restore installs a snapshot in the inner FSM.
func (f *failpointFSM) Restore(rc io.ReadCloser) error { return f.inner.Restore(rc) }

type failpointSnapshot struct{ raft.FSMSnapshot }

// Persist marks BeforeSnapshotPersist, then writes the snapshot to a sink
// whose Close marks BeforeSnapshotClose.
func (s *failpointSnapshot) Persist(sink raft.SnapshotSink) error {
	failpoint.Hit(failpoint.BeforeSnapshotPersist)
	return s.FSMSnapshot.Persist(failpointSink{sink})
}

type failpointSink struct{ raft.SnapshotSink }

// Close marks BeforeSnapshotClose, then closes the sink.
func (s failpointSink) Close() error {
	failpoint.Hit(failpoint.BeforeSnapshotClose)
	return s.SnapshotSink.Close()
}
