package server

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heldStore is an in-memory log store whose StoreLogs waits for a value
// on release (when hold is set) and records the order of the entries
// written.
type heldStore struct {
	*raft.InmemStore
	hold    atomic.Bool
	release chan error
	mu      sync.Mutex
	order   []uint64
	calls   int // StoreLogs calls that stored something
}

func newHeldStore() *heldStore {
	return &heldStore{InmemStore: raft.NewInmemStore(), release: make(chan error)}
}

func (h *heldStore) StoreLogs(logs []*raft.Log) error {
	if h.hold.Load() {
		if err := <-h.release; err != nil {
			return err
		}
	}
	h.mu.Lock()
	for _, l := range logs {
		h.order = append(h.order, l.Index)
	}
	h.calls++
	h.mu.Unlock()
	return h.InmemStore.StoreLogs(logs)
}

func (h *heldStore) storeCalls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls
}

func (h *heldStore) written() []uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]uint64(nil), h.order...)
}

func entries(from, to uint64) []*raft.Log {
	var out []*raft.Log
	for i := from; i <= to; i++ {
		out = append(out, &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: []byte{byte(i)}})
	}
	return out
}

// within runs fn and fails the test if it does not return in time.
func within(t *testing.T, what string, fn func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return", what)
	}
}

// notYet starts fn and checks it is still running after a moment; the
// returned channel closes when it returns.
func notYet(t *testing.T, what string, fn func()) <-chan struct{} {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); fn() }()
	select {
	case <-done:
		t.Fatalf("%s returned before the leader's write finished", what)
	case <-time.After(50 * time.Millisecond):
	}
	return done
}

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return after the write", what)
	}
}

type leaderLogTest struct {
	store  *heldStore
	log    *leaderLog
	leader atomic.Bool
	failed chan error
}

func newLeaderLogTest(t *testing.T) *leaderLogTest {
	lt := &leaderLogTest{store: newHeldStore(), failed: make(chan error, 1)}
	lt.leader.Store(true)
	lt.log = newLeaderLog(lt.store, lt.leader.Load, func(err error) { lt.failed <- err })
	t.Cleanup(func() {
		lt.store.hold.Store(false)
		select { // a writer still held
		case lt.store.release <- nil:
		case <-time.After(10 * time.Millisecond):
		}
		lt.log.release()
		_ = lt.log.Close()
	})
	return lt
}

func TestLeaderLogQueuesWhileLeading(t *testing.T) {
	lt := newLeaderLogTest(t)
	l := lt.log
	lt.store.hold.Store(true)
	within(t, "a leader's StoreLogs", func() { assert.NoError(t, l.StoreLogs(entries(1, 3))) })

	var got raft.Log
	require.NoError(t, l.GetLog(2, &got), "queued entries are readable")
	require.Equal(t, []byte{2}, got.Data)
	last, err := l.LastIndex()
	require.NoError(t, err)
	require.Equal(t, uint64(3), last)
	first, err := l.FirstIndex()
	require.NoError(t, err)
	require.Equal(t, uint64(1), first)
	require.Equal(t, uint64(0), l.commitCap(3), "nothing is durable: no commit may be sent")

	waited := notYet(t, "waitDurable(3)", func() { assert.NoError(t, l.waitDurable(3)) })
	lt.store.release <- nil
	waitClosed(t, "waitDurable(3)", waited)
	require.Equal(t, uint64(3), l.commitCap(3))
	require.Equal(t, uint64(7), l.commitCap(7), "no queue: no cap")
	require.Equal(t, []uint64{1, 2, 3}, lt.store.written())
}

// durableThenQueued leaves entries 1-4 durable and 5-6 queued behind a
// held write.
func (lt *leaderLogTest) durableThenQueued(t *testing.T) *leaderLog {
	l := lt.log
	require.NoError(t, l.StoreLogs(entries(1, 4)))
	within(t, "waitDurable(4)", func() { assert.NoError(t, l.waitDurable(4)) })
	lt.store.hold.Store(true)
	require.NoError(t, l.StoreLogs(entries(5, 6)))
	return l
}

func TestLeaderLogCapsCommitAtTheQueue(t *testing.T) {
	lt := newLeaderLogTest(t)
	l := lt.durableThenQueued(t)
	require.Equal(t, uint64(4), l.commitCap(6))
	require.Equal(t, uint64(3), l.commitCap(3))
	require.True(t, l.durable(4))
	require.False(t, l.durable(5))
	lt.store.release <- nil
	within(t, "waitDurable(6)", func() { assert.NoError(t, l.waitDurable(6)) })
	require.Equal(t, uint64(6), l.commitCap(6))
}

func TestLeaderLogFollowerStoresAfterTheQueue(t *testing.T) {
	lt := newLeaderLogTest(t)
	l := lt.log
	lt.store.hold.Store(true)
	require.NoError(t, l.StoreLogs(entries(1, 2)))
	lt.leader.Store(false) // stepped down with entries 1-2 still queued
	stored := notYet(t, "a follower's StoreLogs", func() { assert.NoError(t, l.StoreLogs(entries(3, 3))) })
	lt.store.hold.Store(false)
	lt.store.release <- nil
	waitClosed(t, "a follower's StoreLogs", stored)
	require.Equal(t, []uint64{1, 2, 3}, lt.store.written(), "the store sees Raft's order")
	require.True(t, l.durable(3), "a follower's store returns once durable")
}

func TestLeaderLogDeleteRangeWaitsOnlyForTheQueue(t *testing.T) {
	lt := newLeaderLogTest(t)
	l := lt.durableThenQueued(t)

	within(t, "compaction below the queue", func() { assert.NoError(t, l.DeleteRange(1, 2)) })
	first, err := l.FirstIndex()
	require.NoError(t, err)
	require.Equal(t, uint64(3), first)

	lt.leader.Store(false)
	truncated := notYet(t, "truncating queued entries", func() { assert.NoError(t, l.DeleteRange(5, 6)) })
	lt.store.release <- nil
	waitClosed(t, "truncating queued entries", truncated)
	last, err := l.LastIndex()
	require.NoError(t, err)
	require.Equal(t, uint64(4), last)
}

func TestLeaderLogWriteFailureStopsEverything(t *testing.T) {
	lt := newLeaderLogTest(t)
	l := lt.log
	lt.store.hold.Store(true)
	require.NoError(t, l.StoreLogs(entries(1, 2)))
	boom := errors.New("disk on fire")
	lt.store.release <- boom

	select {
	case err := <-lt.failed:
		require.ErrorIs(t, err, boom)
	case <-time.After(5 * time.Second):
		t.Fatal("a failed write was not reported")
	}
	require.ErrorIs(t, l.StoreLogs(entries(3, 3)), boom, "a failed log takes no more entries")
	lt.leader.Store(false)
	require.ErrorIs(t, l.StoreLogs(entries(3, 3)), boom)
	require.ErrorIs(t, l.DeleteRange(2, 2), boom, "nor truncates over the failed write")
	require.Equal(t, uint64(0), l.commitCap(2), "the failed entries are never sent as committed")

	waited := notYet(t, "waitDurable(1)", func() { assert.ErrorIs(t, l.waitDurable(1), errLogReleased) })
	l.release()
	waitClosed(t, "waitDurable(1)", waited)
	require.ErrorIs(t, l.Close(), boom)
}

func initEntry(index uint64) *raft.Log {
	b, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdInit, Secret: []byte("secret")})
	if err != nil {
		panic(err)
	}
	return &raft.Log{Index: index, Term: 1, Type: raft.LogCommand, Data: b}
}

func TestDurableFSMAppliesOnlyDurableEntries(t *testing.T) {
	lt := newLeaderLogTest(t)
	f := fsm.New()
	d := &durableFSM{f: f, log: lt.log}

	lt.store.hold.Store(true)
	conf := &raft.Log{Index: 2, Term: 1, Type: raft.LogConfiguration}
	require.NoError(t, lt.log.StoreLogs([]*raft.Log{initEntry(1), conf}))
	var out []interface{}
	applied := notYet(t, "ApplyBatch", func() { out = d.ApplyBatch([]*raft.Log{initEntry(1), conf}) })
	require.Equal(t, int64(0), f.LastZxid(), "nothing applied before the write")
	lt.store.release <- nil
	waitClosed(t, "ApplyBatch", applied)
	require.Len(t, out, 2)
	require.IsType(t, &fsm.Result{}, out[0])
	require.Nil(t, out[1], "a configuration entry has no result")
	require.Equal(t, int64(1), f.LastZxid())

	snap, err := d.Snapshot()
	require.NoError(t, err)
	snap.Release()
}

func TestDurableFSMGivesUpOnRelease(t *testing.T) {
	lt := newLeaderLogTest(t)
	f := fsm.New()
	d := &durableFSM{f: f, log: lt.log}
	require.NoError(t, lt.log.StoreLogs([]*raft.Log{initEntry(1)}))
	within(t, "waitDurable(1)", func() { assert.NoError(t, lt.log.waitDurable(1)) })
	lt.store.hold.Store(true)
	require.NoError(t, lt.log.StoreLogs([]*raft.Log{initEntry(2)}))

	var res interface{}
	gaveUp := notYet(t, "Apply", func() { res = d.Apply(initEntry(2)) })
	lt.log.release()
	waitClosed(t, "Apply", gaveUp)
	require.ErrorIs(t, res.(error), errLogReleased, "an entry not durable is answered with an error")
	_, err := resultOf(doneFuture{res})
	require.ErrorIs(t, err, errLogReleased, "which the write path reports as a failure")
	require.Equal(t, int64(0), f.LastZxid(), "and not applied")

	_, err = d.Snapshot()
	require.ErrorIs(t, err, errLogReleased, "an FSM behind Raft's applied index is never snapshotted")
	out := d.ApplyBatch([]*raft.Log{initEntry(3)})
	require.ErrorIs(t, out[0].(error), errLogReleased, "nor applies anything after the gap")
	lt.store.release <- nil
}

// doneFuture is a succeeded raft.ApplyFuture with a response.
type doneFuture struct{ resp interface{} }

func (d doneFuture) Error() error          { return nil }
func (d doneFuture) Response() interface{} { return d.resp }
func (d doneFuture) Index() uint64         { return 0 }

func TestCommitAheadTransportCapsOutgoingCommits(t *testing.T) {
	c := &commitAheadTransport{capCommit: func(commit uint64) uint64 { return min(commit, 4) }}
	req := &raft.AppendEntriesRequest{PrevLogEntry: 10, LeaderCommitIndex: 9}
	capped := c.capRequest(req)
	require.Equal(t, uint64(4), capped.LeaderCommitIndex)
	require.Equal(t, uint64(9), req.LeaderCommitIndex, "a shared request is not changed")
	req.LeaderCommitIndex = 3
	require.Same(t, req, c.capRequest(req), "nothing to cap: sent as is")

	inner := newFakePipeline()
	p := newMergingPipeline(inner, c.capRequest)
	defer p.Close()
	_, err := p.AppendEntries(&raft.AppendEntriesRequest{PrevLogEntry: 10, LeaderCommitIndex: 8}, &raft.AppendEntriesResponse{})
	require.NoError(t, err)
	require.Equal(t, uint64(4), (<-inner.sent).LeaderCommitIndex, "the pipeline caps too")
}

func TestCapRequestKeepsTheCommitWithinTheRequestsEntries(t *testing.T) {
	c := &commitAheadTransport{}
	req := appendReq(2, 10, 11, 12, 40) // Raft's own, to a follower catching up
	require.Equal(t, uint64(12), c.capRequest(req).LeaderCommitIndex)
	require.Equal(t, uint64(40), req.LeaderCommitIndex, "a shared request is not changed")
	heartbeat := &raft.AppendEntriesRequest{Term: 2}
	require.Same(t, heartbeat, c.capRequest(heartbeat))
	push := &raft.AppendEntriesRequest{Term: 2, PrevLogEntry: 12, PrevLogTerm: 2, LeaderCommitIndex: 12}
	require.Same(t, push, c.capRequest(push))
}

// A leader that stepped down with entries still queued answers the next
// leader's AppendEntries only once they are durable: Raft's follower
// skips the entries it holds already, and its answer counts as a copy.
func TestCommitAheadTransportWaitsForAStepDownsQueuedWrites(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprintf("write fails=%v", fail), func(t *testing.T) {
			lt := newLeaderLogTest(t)
			l := lt.log
			lt.store.hold.Store(true)
			require.NoError(t, l.StoreLogs(entries(1, 2)))
			lt.leader.Store(false)
			c := &commitAheadTransport{out: make(chan raft.RPC, 1), done: make(chan struct{}), flushLog: l.flush}
			answer := make(chan raft.RPCResponse, 1)
			rpc := raft.RPC{Command: appendReq(2, 0, 1, 2, 0), RespChan: answer}
			routed := notYet(t, "passing on an AppendEntries", func() { assert.True(t, c.route(rpc)) })
			require.Empty(t, c.out)
			var err error
			if fail {
				err = errors.New("disk gone")
			}
			lt.store.hold.Store(false)
			lt.store.release <- err
			waitClosed(t, "passing on an AppendEntries", routed)
			if fail {
				require.Empty(t, c.out, "not handed to Raft")
				require.ErrorContains(t, (<-answer).Error, "disk gone")
				<-lt.failed
				return
			}
			require.Len(t, c.out, 1)
			require.True(t, l.durable(2))
		})
	}
}

// flush waits for what was queued when it was called, not for an empty
// queue, which a node that still leads may keep refilling.
func TestLeaderLogFlushWaitsOnlyForWhatWasQueued(t *testing.T) {
	lt := newLeaderLogTest(t)
	l := lt.log
	lt.store.hold.Store(true)
	require.NoError(t, l.StoreLogs(entries(1, 2)))
	flushed := notYet(t, "flush", func() { assert.NoError(t, l.flush()) })
	require.NoError(t, l.StoreLogs(entries(3, 4)), "still leading, still queueing")
	lt.store.release <- nil // writes 1-2; 3-4 wait for the next release
	waitClosed(t, "flush", flushed)
	require.True(t, l.durable(2))
	require.False(t, l.durable(3))
}
