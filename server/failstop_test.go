package server

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// A full disk: raft-wal cannot create its next segment file, and refuses
// every append after that ("segment is sealed"). The server stops
// itself, naming the cause, instead of serving on without ever taking a
// write again; the write it could not store is not acknowledged; and a server
// reopened on the same dir, with space again, keeps every acknowledged
// write and takes new ones.
func TestFullDiskStopsTheServerAndARestartRecovers(t *testing.T) {
	var full atomic.Bool
	cfg := durableConfig(t.TempDir(), "")
	cfg.WALSegmentSize = 64 << 10 // a few writes fill a segment
	cfg.hooks = &testHooks{createSegment: func(string) error {
		if full.Load() {
			return syscall.ENOSPC
		}
		return nil
	}}
	s, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })

	data := make([]byte, 4<<10)
	create := func(srv *Server, i int) (string, error) {
		path := fmt.Sprintf("/n-%04d", i)
		res, err := srv.apply(&fsm.Command{Type: fsm.CmdOps,
			Ops: []fsm.Op{{Type: wire.OpCreate, Path: path, Data: data, ACL: wire.OpenACLUnsafe}}})
		if err == nil && res.Err != wire.OK {
			err = fmt.Errorf("create %s: %v", path, res.Err)
		}
		return path, err
	}
	var acked []string
	i := 0
	for ; i < 5; i++ {
		path, err := create(s, i)
		require.NoError(t, err)
		acked = append(acked, path)
	}
	full.Store(true)
	deadline := time.Now().Add(30 * time.Second)
	for ; ; i++ {
		path, err := create(s, i)
		if err != nil {
			break
		}
		acked = append(acked, path)
		require.True(t, time.Now().Before(deadline), "writes still succeed with no room for a segment")
	}
	select {
	case <-s.Failed():
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop after its log write failed")
	}
	require.ErrorIs(t, s.Err(), syscall.ENOSPC, "the error does not name the full disk")
	require.NoError(t, s.Close())

	full.Store(false)
	s2, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s2.Close() })
	for _, path := range acked {
		_, ok := s2.FSM().Exists(path)
		require.True(t, ok, "acknowledged %s lost", path)
	}
	_, err = create(s2, i+1)
	require.NoError(t, err, "the reopened server takes no write")
	require.NoError(t, s2.Err())
}

// failStopLog stops the server on a failed append, whatever the store,
// and passes Raft's monotonic-log question through.
func TestFailStopLogStopsOnAFailedAppend(t *testing.T) {
	var failed []error
	boom := errors.New("disk on fire")
	store := &failingLogs{InmemStore: raft.NewInmemStore()}
	l := newFailStopLog(store, func(err error) { failed = append(failed, err) }, func() error { return boom })
	require.NoError(t, l.StoreLog(&raft.Log{Index: 1}))
	require.Empty(t, failed)
	store.err = syscall.EIO
	err := l.StoreLogs([]*raft.Log{{Index: 2}})
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, err, boom, "the store's last file error is not named")
	require.Len(t, failed, 1)
	require.ErrorIs(t, failed[0], syscall.EIO)
	require.False(t, l.IsMonotonic())
	store.monotonic = true
	require.True(t, l.IsMonotonic())
}

// failingLogs is an in-memory log store whose appends fail with err.
type failingLogs struct {
	*raft.InmemStore
	err       error
	monotonic bool
}

func (f *failingLogs) StoreLogs(logs []*raft.Log) error {
	if f.err != nil {
		return f.err
	}
	return f.InmemStore.StoreLogs(logs)
}

func (f *failingLogs) IsMonotonic() bool { return f.monotonic }

// termFailingStable fails writes of Raft's current term: any (all) or
// only of a term higher than the stored one (newTerm).
type termFailingStable struct {
	raft.StableStore
	all, newTerm atomic.Bool
}

func (s *termFailingStable) SetUint64(key []byte, val uint64) error {
	if string(key) == keyCurrentTerm {
		cur, _ := s.StableStore.GetUint64(key)
		if s.all.Load() || (s.newTerm.Load() && val > cur) {
			return syscall.ENOSPC
		}
	}
	return s.StableStore.SetUint64(key, val)
}

// Raft panics when it cannot store a new term; the server stops with the
// error instead, as for a failed log write, and the process lives on.
func TestFailedTermWriteStopsTheServer(t *testing.T) {
	mem := NewMemoryStores()
	stable := &termFailingStable{StableStore: mem.Stable}
	mem.Stable = stable
	start := func() (*Server, error) {
		cfg := DefaultConfig()
		cfg.Port, cfg.Stores = 0, mem
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		return New(cfg)
	}
	s, err := start()
	require.NoError(t, err)
	res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/kept", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Equal(t, wire.OK, res.Err)
	require.NoError(t, s.Close())

	// The restart's election cannot store its term.
	stable.newTerm.Store(true)
	s, err = start()
	if err == nil {
		select {
		case <-s.Failed():
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not stop after its term write failed")
		}
		err = s.Err()
		within(t, "Close", func() { _ = s.Close() })
	}
	require.ErrorIs(t, err, syscall.ENOSPC)
	require.ErrorContains(t, err, "stable store write of CurrentTerm failed")

	// Nor can Raft's start store the term it read.
	stable.all.Store(true)
	_, err = start()
	require.ErrorIs(t, err, syscall.ENOSPC, "the error names the failed term write, not a damaged snapshot")

	stable.all.Store(false)
	stable.newTerm.Store(false)
	s, err = start()
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	_, ok := s.FSM().Exists("/kept")
	require.True(t, ok)
}

// A barrier that never applies (its log write hangs) does not hold up a
// server that has failed: New's wait for readiness returns the failure.
func TestBarrierOrFailureReturnsOnceTheServerFailed(t *testing.T) {
	srv, st := heldStoreServer(t, nil)
	st.hold.Store(true)
	boom := errors.New("disk gone")
	done := make(chan error, 1)
	go func() { done <- srv.barrierOrFailure(time.Second) }()
	select {
	case err := <-done:
		t.Fatalf("the barrier returned (%v) while its write hangs", err)
	case <-time.After(50 * time.Millisecond):
	}
	srv.fail(boom)
	select {
	case err := <-done:
		require.ErrorIs(t, err, boom)
	case <-time.After(5 * time.Second):
		t.Fatal("still waiting for the barrier after the server failed")
	}
}

// heldStoreServer is attachServer on in-memory stores whose log is a
// heldStore (released at cleanup).
func heldStoreServer(t *testing.T, adjust func(*Config)) (*Server, *heldStore) {
	t.Helper()
	st := newHeldStore()
	srv := attachServer(t, func(c *Config) {
		mem := NewMemoryStores()
		mem.Logs = st
		c.Stores = mem
		if adjust != nil {
			adjust(c)
		}
	})
	t.Cleanup(func() {
		st.hold.Store(false)
		select {
		case st.release <- nil:
		default:
		}
	})
	return srv, st
}

// A Close that meets one already under way (the server stopping itself
// after a failure, as its owner closes it) returns once that one is done:
// Raft has stopped and the client port is free for a restart on it
// (zktest's Restart after FailDisk met "address already in use").
func TestCloseWaitsForACloseUnderWay(t *testing.T) {
	for round := range 10 {
		cfg := DefaultConfig()
		cfg.Port = 0
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		s, err := New(cfg)
		require.NoError(t, err)
		addr := s.Addr().String()
		s.fail(errors.New("test: a failed log write")) // stopOnFailure closes it
		deadline := time.Now().Add(10 * time.Second)
		for !s.closing() {
			require.True(t, time.Now().Before(deadline), "the failed server never began to close")
			runtime.Gosched()
		}
		require.NoError(t, s.Close())
		require.Equal(t, raft.Shutdown, s.node.r.State(), "round %d: Close returned before Raft stopped", round)
		ln, err := net.Listen("tcp", addr)
		require.NoError(t, err, "round %d: the client port is still taken after Close", round)
		require.NoError(t, ln.Close())
	}
}

// closing reports whether a Close has begun.
func (s *Server) closing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}
