package server

import (
	"bytes"
	"fmt"
	"io"
	"sync"

	"github.com/hashicorp/raft"
)

// memSnapshotStore is an in-memory raft.SnapshotStore that keeps the latest
// finished snapshot. It replaces raft.InmemSnapshotStore, which makes a
// snapshot visible to List and Open as soon as it is created: a leader that
// sends its latest snapshot to a lagging follower while a new one is being
// written then reads a buffer that is still growing (a data race, and a
// truncated snapshot on the wire). Here a snapshot is published only by its
// sink's Close, and Cancel leaves the previous one in place.
type memSnapshotStore struct {
	mu     sync.RWMutex
	latest *memSnapshot // nil until the first Close
}

type memSnapshot struct {
	meta raft.SnapshotMeta
	data []byte // immutable once published
}

func newMemSnapshotStore() *memSnapshotStore { return &memSnapshotStore{} }

// Create starts a snapshot; it is not listed until its sink is closed.
func (m *memSnapshotStore) Create(version raft.SnapshotVersion, index, term uint64,
	configuration raft.Configuration, configurationIndex uint64, _ raft.Transport) (raft.SnapshotSink, error) {
	if version != 1 {
		return nil, fmt.Errorf("memory snapshot store: unsupported snapshot version %d", version)
	}
	return &memSnapshotSink{store: m, meta: raft.SnapshotMeta{
		Version:            version,
		ID:                 fmt.Sprintf("%d-%d", term, index),
		Index:              index,
		Term:               term,
		Configuration:      configuration,
		ConfigurationIndex: configurationIndex,
	}}, nil
}

// List returns the latest finished snapshot, if any.
func (m *memSnapshotStore) List() ([]*raft.SnapshotMeta, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.latest == nil {
		return nil, nil
	}
	meta := m.latest.meta
	return []*raft.SnapshotMeta{&meta}, nil
}

// Open returns a reader over the latest snapshot if its ID is id.
func (m *memSnapshotStore) Open(id string) (*raft.SnapshotMeta, io.ReadCloser, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.latest == nil || m.latest.meta.ID != id {
		return nil, nil, fmt.Errorf("memory snapshot store: no snapshot %q", id)
	}
	meta := m.latest.meta
	return &meta, io.NopCloser(bytes.NewReader(m.latest.data)), nil
}

// memSnapshotSink buffers one snapshot until Close publishes it.
type memSnapshotSink struct {
	store *memSnapshotStore
	meta  raft.SnapshotMeta
	buf   bytes.Buffer
	done  bool
}

func (s *memSnapshotSink) Write(p []byte) (int, error) {
	if s.done {
		return 0, fmt.Errorf("memory snapshot store: write to a finished snapshot %q", s.meta.ID)
	}
	return s.buf.Write(p)
}

// Close publishes the snapshot as the store's latest.
func (s *memSnapshotSink) Close() error {
	if s.done {
		return nil
	}
	s.done = true
	snap := &memSnapshot{meta: s.meta, data: s.buf.Bytes()}
	snap.meta.Size = int64(len(snap.data))
	s.store.mu.Lock()
	s.store.latest = snap
	s.store.mu.Unlock()
	return nil
}

// Cancel drops the snapshot; the previous one stays the latest.
func (s *memSnapshotSink) Cancel() error {
	s.done = true
	s.buf = bytes.Buffer{}
	return nil
}

func (s *memSnapshotSink) ID() string { return s.meta.ID }
