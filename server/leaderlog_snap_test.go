package server

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// snapNode is a one-voter Raft over a leaderLog whose durable store can
// hold a write.
type snapNode struct {
	*leaderLogTest
	r     *raft.Raft
	snaps *memSnapshotStore
}

func snapRaftConfig() *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = "1"
	rc.HeartbeatTimeout = 50 * time.Millisecond
	rc.ElectionTimeout = 50 * time.Millisecond
	rc.LeaderLeaseTimeout = 50 * time.Millisecond
	rc.CommitTimeout = 5 * time.Millisecond
	rc.BatchApplyCh = true
	rc.SnapshotThreshold = 1 << 40 // only the test takes snapshots
	rc.SnapshotInterval = time.Hour
	rc.Logger = hclog.NewNullLogger()
	return rc
}

func newSnapNode(t *testing.T) *snapNode {
	n := &snapNode{leaderLogTest: newLeaderLogTest(t), snaps: newMemSnapshotStore()}
	var leader atomic.Pointer[raft.Raft]
	n.log.leader = func() bool { r := leader.Load(); return r != nil && r.State() == raft.Leader }
	rc := snapRaftConfig()
	addr, trans := raft.NewInmemTransport("")
	stable := raft.NewInmemStore()
	conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}
	require.NoError(t, raft.BootstrapCluster(rc, n.log, stable, n.snaps, trans, conf))
	r, err := raft.NewRaft(rc, &durableFSM{f: fsm.New(), log: n.log}, n.log, stable, n.snaps, trans)
	require.NoError(t, err)
	leader.Store(r)
	n.r = r
	t.Cleanup(func() {
		n.log.release()
		_ = r.Shutdown().Error()
	})
	require.Eventually(t, func() bool { return r.State() == raft.Leader }, 5*time.Second, 5*time.Millisecond)
	return n
}

// queuedBarrier applies a command, waits until the log is durable, then
// holds the next write and commits a barrier behind it. It returns the
// barrier's index: applied, yet still queued.
func (n *snapNode) queuedBarrier(t *testing.T) uint64 {
	require.NoError(t, n.r.Apply(initEntry(0).Data, 2*time.Second).Error())
	require.NoError(t, n.r.Barrier(2*time.Second).Error())
	last, err := n.log.LastIndex()
	require.NoError(t, err)
	within(t, "waitDurable", func() { assert.NoError(t, n.log.waitDurable(last)) })

	n.store.hold.Store(true)
	require.NoError(t, n.r.Barrier(2*time.Second).Error())
	// Raft's FSM goroutine answers the barrier's future before Raft's loop
	// records the index as applied (raft.go: processLogs hands the batch to
	// fsmMutateCh, then calls setLastApplied), so AppliedIndex may still
	// read the old index for a moment.
	require.Eventually(t, func() bool { return n.r.AppliedIndex() > last }, 5*time.Second, time.Millisecond)
	barrier := n.r.AppliedIndex()
	require.False(t, n.log.durable(barrier), "Raft applied the barrier before it was durable")
	return barrier
}

// snapshotIndex returns the index of the latest snapshot, 0 if none.
func (n *snapNode) snapshotIndex(t *testing.T) uint64 {
	list, err := n.snaps.List()
	require.NoError(t, err)
	if len(list) == 0 {
		return 0
	}
	return list[0].Index
}

func TestLeaderLogSnapshotWaitsForQueuedBarrier(t *testing.T) {
	n := newSnapNode(t)
	barrier := n.queuedBarrier(t)

	var snapErr error
	snapped := notYet(t, "a snapshot", func() { snapErr = n.r.Snapshot().Error() })
	require.Equal(t, uint64(0), n.snapshotIndex(t), "no snapshot past the durable log")
	n.store.release <- nil
	waitClosed(t, "a snapshot", snapped)
	require.NoError(t, snapErr)
	require.Equal(t, barrier, n.snapshotIndex(t))
	stored, err := n.store.LastIndex()
	require.NoError(t, err)
	require.GreaterOrEqual(t, stored, barrier, "the snapshot's entry is in the durable log")
}

func TestLeaderLogSnapshotFailsWithTheLogWrite(t *testing.T) {
	n := newSnapNode(t)
	n.queuedBarrier(t)

	var snapErr error
	snapped := notYet(t, "a snapshot", func() { snapErr = n.r.Snapshot().Error() })
	boom := errors.New("disk on fire")
	n.store.release <- boom
	waitClosed(t, "a snapshot", snapped)
	require.ErrorContains(t, snapErr, boom.Error())
	require.Equal(t, uint64(0), n.snapshotIndex(t), "a failed log write leaves no snapshot of its entries")
	select {
	case err := <-n.failed:
		require.ErrorIs(t, err, boom)
	case <-time.After(5 * time.Second):
		t.Fatal("the failed write was not reported")
	}
}

func TestDurableSnapshotGivesUpOnRelease(t *testing.T) {
	lt := newLeaderLogTest(t)
	lt.durableThenQueued(t) // 5-6 held
	d := &durableFSM{f: fsm.New(), log: lt.log}
	snap, err := d.Snapshot()
	require.NoError(t, err)
	defer snap.Release()

	store := newMemSnapshotStore()
	sink, err := store.Create(1, 6, 1, raft.Configuration{}, 1, nil)
	require.NoError(t, err)
	persisted := notYet(t, "Persist", func() { assert.ErrorIs(t, snap.Persist(sink), errLogReleased) })
	lt.log.release()
	waitClosed(t, "Persist", persisted)
	require.NoError(t, sink.Close(), "a canceled sink closes as a no-op")
	list, err := store.List()
	require.NoError(t, err)
	require.Empty(t, list, "the canceled snapshot is not published")
}
