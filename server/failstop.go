package server

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/internal/failpoint"
)

// failStopLog stops the server (fail) on the first failed append to the
// Raft log, in every role. hashicorp/raft answers a failed StoreLogs by
// failing the batch's proposals and stepping down (a follower answers
// the leader with a failure), and then carries on with the same store:
// a standalone voter elects itself again at once. A store may not recover:
// after raft-wal failed to create its next segment file (a full disk),
// it refuses every later append ("segment is sealed") until reopened, so
// the server went on taking sessions and reads but never another write,
// even once space was freed. And a failed fsync leaves what is on the
// disk unknown. ZooKeeper and etcd exit on a failed log write; so does
// the server, and a restart (systemd's Restart=on-failure) reopens the
// log, which keeps every acknowledged write (README: "A full disk").
//
// In a cluster it sits under leaderLog, so a leader's queued writes and a
// follower's direct ones both pass through it.
type failStopLog struct {
	raft.LogStore
	fail func(error)
	// cause, if set, returns the store's last file error, which the
	// failed append's own error may not name (raft-wal creates segment
	// files in the background and only logs a failure there).
	cause func() error
}

func newFailStopLog(store raft.LogStore, fail func(error), cause func() error) *failStopLog {
	return &failStopLog{LogStore: store, fail: fail, cause: cause}
}

// StoreLog stores one entry (see StoreLogs).
func (l *failStopLog) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs stores the entries; if that fails, the server stops.
func (l *failStopLog) StoreLogs(logs []*raft.Log) error {
	failpoint.Hit(failpoint.BeforeStoreLogs)
	err := l.LogStore.StoreLogs(logs)
	if err == nil {
		failpoint.Hit(failpoint.AfterStoreLogs)
		return nil
	}
	if l.cause != nil {
		if c := l.cause(); c != nil {
			err = fmt.Errorf("%w (the log's last file error: %w)", err, c)
		}
	}
	err = fmt.Errorf("raft log write failed: %w", err)
	l.fail(err)
	return err
}

// IsMonotonic forwards raft.MonotonicLogStore (raft-wal is one): Raft
// clears such a log after installing a snapshot instead of leaving a gap.
func (l *failStopLog) IsMonotonic() bool {
	m, ok := l.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// fileErrors remembers the last error of a file operation the log store
// ran where its caller does not see the error (raft-wal's segment
// rotation).
type fileErrors struct{ last atomic.Pointer[error] }

// record remembers err.
func (f *fileErrors) record(err error) { f.last.Store(&err) }

// lastErr returns the last recorded error, nil if none.
func (f *fileErrors) lastErr() error {
	if p := f.last.Load(); p != nil {
		return *p
	}
	return nil
}

// keyCurrentTerm is the stable-store key hashicorp/raft keeps its current
// term under.
const keyCurrentTerm = "CurrentTerm"

// failStopStable stops the server (fail) on the first failed write of
// Raft's stable store (its current term and vote). hashicorp/raft panics
// when it cannot store a new term (setCurrentTerm), which took the whole
// process down with a Go stack trace (a full disk during an election);
// a failed vote write only loses that election and leaves the node to
// try again on the same broken store. Once Raft runs, a failed term
// write ends the goroutine that made it (runtime.Goexit: Raft's own
// goroutines release what they hold in deferred calls) instead of
// returning to Raft's panic: that goroutine never acts in a term it
// could not store, and the server stops and reports the error as it does
// for a failed log write. During Raft's start the error is returned (its
// panic there is recovered by newRaft, which reports it).
type failStopStable struct {
	raft.StableStore
	fail func(error)
	// running is set once Raft's goroutines may run: when NewRaft
	// installs the transport's heartbeat handler (commitAheadTransport)
	// or, standalone, when it returns.
	running atomic.Bool
	// err is the first write error.
	err atomic.Pointer[error]
}

func newFailStopStable(store raft.StableStore, fail func(error)) *failStopStable {
	return &failStopStable{StableStore: store, fail: fail}
}

// Set stores a value; if that fails, the server stops.
func (s *failStopStable) Set(key, val []byte) error {
	return s.failed(key, s.StableStore.Set(key, val))
}

// SetUint64 stores a value; if that fails, the server stops, and a
// running Raft's term write does not return (see failStopStable).
func (s *failStopStable) SetUint64(key []byte, val uint64) error {
	return s.failed(key, s.StableStore.SetUint64(key, val))
}

func (s *failStopStable) failed(key []byte, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("raft stable store write of %s failed: %w", key, err)
	s.err.CompareAndSwap(nil, &err)
	if !s.running.Load() {
		return err
	}
	s.fail(err)
	if string(key) == keyCurrentTerm {
		runtime.Goexit()
	}
	return err
}

// firstErr returns the first write error, nil if none.
func (s *failStopStable) firstErr() error {
	if p := s.err.Load(); p != nil {
		return *p
	}
	return nil
}
