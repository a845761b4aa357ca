package server

import (
	"io"
	"sync"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

func readSnap(t *testing.T, s raft.SnapshotStore, id string) (*raft.SnapshotMeta, string) {
	t.Helper()
	meta, rc, err := s.Open(id)
	require.NoError(t, err)
	defer rc.Close()
	b, err := io.ReadAll(rc)
	require.NoError(t, err)
	return meta, string(b)
}

// TestMemSnapshotStorePublishesOnClose checks that a snapshot being written
// is invisible until Close, and that Cancel keeps the previous one.
func TestMemSnapshotStorePublishesOnClose(t *testing.T) {
	s := newMemSnapshotStore()
	list, err := s.List()
	require.NoError(t, err)
	require.Empty(t, list)

	first, err := s.Create(1, 10, 2, raft.Configuration{}, 1, nil)
	require.NoError(t, err)
	_, err = first.Write([]byte("first"))
	require.NoError(t, err)
	list, _ = s.List()
	require.Empty(t, list, "an unfinished snapshot is not listed")
	require.NoError(t, first.Close())

	second, err := s.Create(1, 20, 2, raft.Configuration{}, 1, nil)
	require.NoError(t, err)
	_, err = second.Write([]byte("sec"))
	require.NoError(t, err)
	list, _ = s.List()
	require.Len(t, list, 1)
	require.Equal(t, first.ID(), list[0].ID, "the finished snapshot stays the latest while another is written")
	meta, data := readSnap(t, s, first.ID())
	require.Equal(t, "first", data)
	require.Equal(t, int64(5), meta.Size)
	require.Equal(t, uint64(10), meta.Index)
	require.NoError(t, second.Cancel())
	list, _ = s.List()
	require.Equal(t, first.ID(), list[0].ID, "a cancelled snapshot replaces nothing")
	_, _, err = s.Open(second.ID())
	require.Error(t, err)

	third, err := s.Create(1, 30, 3, raft.Configuration{}, 1, nil)
	require.NoError(t, err)
	_, err = third.Write([]byte("third"))
	require.NoError(t, err)
	require.NoError(t, third.Close())
	_, err = third.Write([]byte("more"))
	require.Error(t, err, "a closed sink refuses writes")
	_, _, err = s.Open(first.ID())
	require.Error(t, err, "only the latest snapshot is kept")
	meta, data = readSnap(t, s, third.ID())
	require.Equal(t, "third", data)
	require.Equal(t, uint64(3), meta.Term)
}

// TestMemSnapshotStoreConcurrentOpen reads the latest snapshot while a new
// one is written (what a leader does when it sends a snapshot to a lagging
// follower during its own snapshot); run with -race.
func TestMemSnapshotStoreConcurrentOpen(t *testing.T) {
	s := newMemSnapshotStore()
	sink, err := s.Create(1, 1, 1, raft.Configuration{}, 1, nil)
	require.NoError(t, err)
	_, err = sink.Write([]byte("old"))
	require.NoError(t, err)
	require.NoError(t, sink.Close())
	oldID := sink.ID()

	next, err := s.Create(1, 2, 1, raft.Configuration{}, 1, nil)
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < 1000; i++ {
			_, _ = next.Write(make([]byte, 64))
		}
	}()
	for i := 0; i < 100; i++ {
		_, data := readSnap(t, s, oldID)
		require.Equal(t, "old", data)
	}
	wg.Wait()
	require.NoError(t, next.Close())
	meta, data := readSnap(t, s, next.ID())
	require.Len(t, data, 64000)
	require.Equal(t, int64(64000), meta.Size)
}
