package server

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/failpoint"
)

// leaderLog is the Raft log store of a clustered server with a data dir.
// hashicorp/raft's leader stores (and fsyncs) each batch of new entries
// before it sends the batch to any follower, so a write waits for two
// fsyncs in series: the leader's, then the followers'. ZooKeeper's leader
// sends a proposal to its followers while it logs the proposal itself.
// leaderLog does the same: while this node leads, StoreLogs queues the
// batch for a writer goroutine and returns, so Raft replicates the batch
// while the leader's fsync runs. As a follower (or candidate) it stores
// synchronously, after anything still queued: a follower acknowledges only
// what is on its disk.
//
// Raft now counts the leader's copy towards a commit before it is durable,
// so a "committed" entry may be durable on one node short of a majority
// until the leader's write finishes. Nothing may act on such an entry, and
// two guards make sure nothing does:
//
//   - durableFSM applies an entry only once no queued or in-flight write
//     holds it (waitDurable). The leader's clients, watches and reads see
//     only what the FSM applied.
//   - the transport caps the commit index the leader sends to followers at
//     the last entry before the queue (commitCap), so followers do not apply
//     it earlier either.
//   - a snapshot is persisted only once the log is durable up to its index
//     (durableSnapshot). Raft takes that index from the entries it applied,
//     barriers included, and barriers never reach durableFSM: without the
//     wait, a crash could leave a snapshot past the end of the log, which
//     raft-wal then refuses to extend.
//
// So an entry becomes visible anywhere only once it is committed (a
// majority stored it, counting the leader) and the leader's copy is
// durable: then every copy that counted is durable, and a majority holds
// it across any crash. An entry lost with an unfinished leader write was
// never applied, acknowledged or shown anywhere: the client saw its
// connection drop, the same uncertain outcome as a leader crash in
// ZooKeeper. A failed leader write stops the server (fail) without
// applying the entry.
//
// Config.SyncLeaderLog turns this off (Raft's own order).
type leaderLog struct {
	raft.LogStore // the durable store (under Raft's LogCache)

	// leader reports whether this node leads. Raft calls StoreLogs and
	// DeleteRange for new entries only from its main goroutine, which also
	// sets its state, so the answer cannot change under a call.
	leader func() bool
	// fail is called once, from the writer, with the first write error.
	fail func(error)

	mu      sync.Mutex
	cond    *sync.Cond  // the queue, err or released changed
	pending []*raft.Log // queued after writing, contiguous
	writing []*raft.Log // being stored by the writer
	err     error       // the first write error: the log is failed
	closed  bool        // Close was called: the writer exits when idle
	// released lets waitDurable give up (the server is stopping).
	released bool
	done     chan struct{} // closed when the writer exits

	// unsynced is the index of the first queued or in-flight entry, 0 when
	// none: every entry of the log below it is durable.
	unsynced atomic.Uint64
}

var (
	// errLogReleased is waitDurable's answer once the server is stopping
	// with the entry still not durable, and durableFSM's response for an
	// entry it therefore did not apply.
	errLogReleased = errors.New("raft log: server stopping before the entry was durable")
	// errLogClosed answers a store after Close.
	errLogClosed = errors.New("raft log: closed")
)

func newLeaderLog(store raft.LogStore, leader func() bool, fail func(error)) *leaderLog {
	l := &leaderLog{LogStore: store, leader: leader, fail: fail, done: make(chan struct{})}
	l.cond = sync.NewCond(&l.mu)
	go l.writer()
	return l
}

// StoreLog stores one entry (see StoreLogs).
func (l *leaderLog) StoreLog(e *raft.Log) error { return l.StoreLogs([]*raft.Log{e}) }

// StoreLogs queues the entries for the writer while this node leads, and
// otherwise stores them after the queue, returning once they are durable.
func (l *leaderLog) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	l.mu.Lock()
	if l.err != nil || l.closed {
		defer l.mu.Unlock()
		return l.failure()
	}
	if l.leader() {
		defer l.mu.Unlock()
		l.pending = append(l.pending, logs...)
		l.setUnsyncedLocked()
		l.cond.Broadcast()
		return nil
	}
	err := l.flushLocked()
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return l.LogStore.StoreLogs(logs)
}

// failure is the error for a store call on a failed or closed log.
func (l *leaderLog) failure() error {
	if l.err != nil {
		return l.err
	}
	return errLogClosed
}

// writer stores queued batches, everything queued so far in one call (one
// fsync), until Close.
func (l *leaderLog) writer() {
	defer close(l.done)
	for {
		l.mu.Lock()
		for len(l.pending) == 0 && !l.closed {
			l.cond.Wait()
		}
		if len(l.pending) == 0 {
			l.mu.Unlock()
			return
		}
		l.writing, l.pending = l.pending, nil
		batch := l.writing
		l.mu.Unlock()

		failpoint.Hit(failpoint.LeaderLogWriting)
		err := l.LogStore.StoreLogs(batch)

		l.mu.Lock()
		if err != nil {
			// The batch stays queued (unsynced), so nothing at or after
			// it is applied or sent as committed.
			l.err = fmt.Errorf("raft log: store entries %d-%d: %w", batch[0].Index, batch[len(batch)-1].Index, err)
			l.cond.Broadcast()
			l.mu.Unlock()
			l.fail(l.err)
			return
		}
		failpoint.Hit(failpoint.LeaderLogStored)
		l.writing = nil
		l.setUnsyncedLocked()
		l.cond.Broadcast()
		l.mu.Unlock()
	}
}

// setUnsyncedLocked recomputes unsynced from the queue.
func (l *leaderLog) setUnsyncedLocked() {
	switch {
	case len(l.writing) > 0:
		l.unsynced.Store(l.writing[0].Index)
	case len(l.pending) > 0:
		l.unsynced.Store(l.pending[0].Index)
	default:
		l.unsynced.Store(0)
	}
}

// flushLocked waits, with l.mu held, until nothing is queued or being
// written.
func (l *leaderLog) flushLocked() error {
	for (len(l.pending) > 0 || len(l.writing) > 0) && l.err == nil {
		l.cond.Wait()
	}
	return l.err
}

// flush waits until the entries queued or being written when it is
// called are durable (at once when none are; not for an empty queue, which
// a node that still leads may go on filling). A node that stepped down
// with entries still queued must not answer an AppendEntries before they
// are durable: hashicorp/raft's follower skips the entries it already
// holds without storing them, and its answer counts as a durable copy
// towards the new leader's commit (commitAheadTransport calls this before
// it hands Raft an AppendEntries).
func (l *leaderLog) flush() error {
	if l.unsynced.Load() == 0 {
		return nil
	}
	return l.waitWritten(l.lastQueued())
}

// durable reports whether entry index is not waiting for a write.
func (l *leaderLog) durable(index uint64) bool {
	u := l.unsynced.Load()
	return u == 0 || index < u
}

// waitDurable blocks until entry index is durable, or returns
// errLogReleased if the server stops first. A failed write keeps it
// waiting: the server stops, and the entry's fate is unknown until then.
func (l *leaderLog) waitDurable(index uint64) error { return l.wait(index, false) }

// waitWritten is waitDurable that also fails, with the write error, once
// the write holding the entry failed.
func (l *leaderLog) waitWritten(index uint64) error { return l.wait(index, true) }

func (l *leaderLog) wait(index uint64, failFast bool) error {
	if l.durable(index) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.durable(index) {
		switch {
		case failFast && l.err != nil:
			return l.err
		case l.released:
			return errLogReleased
		}
		l.cond.Wait()
	}
	return nil
}

// commitCap returns the highest commit index the leader may send: commit
// itself, or the last entry before the queue if that is lower.
func (l *leaderLog) commitCap(commit uint64) uint64 {
	if u := l.unsynced.Load(); u != 0 && commit >= u {
		return u - 1
	}
	return commit
}

// release makes waitDurable give up: the server is stopping, and Raft's
// FSM goroutine must not wait for a write that may never finish.
func (l *leaderLog) release() {
	l.mu.Lock()
	l.released = true
	l.cond.Broadcast()
	l.mu.Unlock()
}

// queuedLocked returns the queued or in-flight entry with this index.
func (l *leaderLog) queuedLocked(index uint64) *raft.Log {
	for _, q := range [2][]*raft.Log{l.writing, l.pending} {
		if len(q) > 0 && index >= q[0].Index && index <= q[len(q)-1].Index {
			if e := q[index-q[0].Index]; e.Index == index {
				return e
			}
		}
	}
	return nil
}

// GetLog finds an entry in the queue or the durable store.
func (l *leaderLog) GetLog(index uint64, out *raft.Log) error {
	l.mu.Lock()
	e := l.queuedLocked(index)
	l.mu.Unlock()
	if e != nil {
		*out = *e
		return nil
	}
	return l.LogStore.GetLog(index, out)
}

// FirstIndex is the durable store's, or the first queued entry's when the
// store is empty.
func (l *leaderLog) FirstIndex() (uint64, error) {
	first, err := l.LogStore.FirstIndex()
	if err != nil || first != 0 {
		return first, err
	}
	return l.unsynced.Load(), nil
}

// LastIndex counts the queued entries.
func (l *leaderLog) LastIndex() (uint64, error) {
	if last := l.lastQueued(); last != 0 {
		return last, nil
	}
	return l.LogStore.LastIndex()
}

// lastQueued returns the index of the last queued or in-flight entry, 0
// when none is.
func (l *leaderLog) lastQueued() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range [2][]*raft.Log{l.pending, l.writing} {
		if len(q) > 0 {
			return q[len(q)-1].Index
		}
	}
	return 0
}

// DeleteRange deletes from the durable store; a range that reaches the
// queue (a new follower truncating entries its old term left) waits for
// the queue first, so the store sees Raft's order of operations.
// Compaction deletes only applied, hence durable, entries and does not
// wait.
func (l *leaderLog) DeleteRange(lo, hi uint64) error {
	l.mu.Lock()
	var err error
	if u := l.unsynced.Load(); u != 0 && hi >= u {
		err = l.flushLocked()
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	return l.LogStore.DeleteRange(lo, hi)
}

// IsMonotonic forwards raft.MonotonicLogStore (raft-wal is one).
func (l *leaderLog) IsMonotonic() bool {
	m, ok := l.LogStore.(raft.MonotonicLogStore)
	return ok && m.IsMonotonic()
}

// Close writes out the queue and stops the writer. The durable store is
// closed by its owner afterwards. It returns the write error, if any.
func (l *leaderLog) Close() error {
	l.mu.Lock()
	l.closed = true
	l.cond.Broadcast()
	l.mu.Unlock()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// durableFSM is the FSM of a node with a leaderLog: it applies an entry
// only once the entry is durable in this node's log. It is a
// raft.BatchingFSM so that configuration entries pass through it too (Raft
// answers a membership change once its entry is "applied").
type durableFSM struct {
	f   *fsm.FSM
	log *leaderLog
	// lost is set once an entry was skipped because the server stopped
	// first: from then on the FSM is behind the index Raft believes it
	// applied, so it applies nothing more and is never snapshotted.
	lost atomic.Bool
}

// Apply applies one entry (see ApplyBatch).
func (d *durableFSM) Apply(l *raft.Log) interface{} {
	return d.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch waits until the batch is durable, then applies its commands.
// If the server stops first, it applies nothing and answers each entry
// with errLogReleased, which the write path reports as a lost connection:
// the entry's fate is unknown.
func (d *durableFSM) ApplyBatch(logs []*raft.Log) []interface{} {
	out := make([]interface{}, len(logs))
	if len(logs) == 0 {
		return out
	}
	err := errLogReleased
	if !d.lost.Load() {
		err = d.log.waitDurable(logs[len(logs)-1].Index)
	}
	if err != nil {
		d.lost.Store(true)
		for i := range out {
			out[i] = err
		}
		return out
	}
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = d.f.Apply(l)
		}
	}
	return out
}

// Snapshot snapshots the FSM, unless an entry was skipped. Raft labels the
// snapshot with the last entry it applied, which may be a barrier that
// never passed ApplyBatch and is still queued; the last entry queued now
// is at or past it (Raft applies only entries this node stored or queued),
// so Persist waits for that one (durableSnapshot).
func (d *durableFSM) Snapshot() (raft.FSMSnapshot, error) {
	if d.lost.Load() {
		return nil, errLogReleased
	}
	snap, err := d.f.Snapshot()
	if err != nil {
		return nil, err
	}
	return &durableSnapshot{FSMSnapshot: snap, log: d.log, index: d.log.lastQueued()}, nil
}

// durableSnapshot is an FSM snapshot that is written only once the log is
// durable up to index, so a snapshot never gets ahead of the log across a
// crash. It waits on Raft's snapshot goroutine, not the FSM's, and only for
// the writer, which never waits for Raft.
type durableSnapshot struct {
	raft.FSMSnapshot
	log   *leaderLog
	index uint64 // the last entry queued when the snapshot was taken, or 0
}

// Persist waits for the log, then writes the snapshot. If the log write
// failed (or the server is stopping first) it cancels the snapshot
// instead: the snapshot must not claim an index the log may not have.
func (s *durableSnapshot) Persist(sink raft.SnapshotSink) error {
	if err := s.log.waitWritten(s.index); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("snapshot: raft log not durable up to entry %d: %w", s.index, err)
	}
	return s.FSMSnapshot.Persist(sink)
}

// Restore replaces the FSM's state with a snapshot.
func (d *durableFSM) Restore(rc io.ReadCloser) error { return d.f.Restore(rc) }
