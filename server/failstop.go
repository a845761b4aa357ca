package server

import (
	"fmt"
	"sync/atomic"

	"github.com/hashicorp/raft"
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
	err := l.LogStore.StoreLogs(logs)
	if err == nil {
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
