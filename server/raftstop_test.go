package server

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// heldFSM holds its first Apply until release is closed.
type heldFSM struct {
	entered, release chan struct{}
	once             sync.Once
}

func (h *heldFSM) Apply(*raft.Log) interface{} {
	h.once.Do(func() {
		close(h.entered)
		<-h.release
	})
	return nil
}

func (h *heldFSM) Snapshot() (raft.FSMSnapshot, error) { return nil, errors.New("no snapshots") }
func (h *heldFSM) Restore(io.ReadCloser) error         { return errors.New("no snapshots") }

// TestSettledFutureEndsAtShutdown strands committed entries in Raft's
// queue to its FSM (the FSM holds the first one while the rest commit,
// and Raft shuts down meanwhile: its FSM goroutine then takes the
// shutdown before the queue, about one time in two) and checks that
// every settled future still answers once Raft has stopped. Without
// settleOn, some round leaves a wait that never ends.
func TestSettledFutureEndsAtShutdown(t *testing.T) {
	const rounds, queued = 10, 8
	stranded := 0
	for round := range rounds {
		r, h := heldRaft(t)
		stopped := make(chan struct{})
		propose := func() raft.ApplyFuture {
			f := r.Apply([]byte("x"), time.Second)
			require.True(t, settleOn(f, stopped), "round %d: Raft's apply future has no ShutdownCh to settle on", round)
			return f
		}
		futures := []raft.ApplyFuture{propose()}
		<-h.entered
		held := r.LastIndex()
		for range queued {
			futures = append(futures, propose())
		}
		deadline := time.Now().Add(10 * time.Second)
		for r.LastIndex() < held+queued || r.CommitIndex() < r.LastIndex() {
			require.True(t, time.Now().Before(deadline), "round %d: the entries never committed", round)
			time.Sleep(time.Millisecond) // a poll interval: Raft has no commit notification
		}
		shut := r.Shutdown()
		close(h.release)
		require.NoError(t, shut.Error())
		close(stopped)
		for i, f := range futures {
			err := errorWithin(f, 5*time.Second)
			require.NotErrorIs(t, err, errStillWaiting, "round %d: future %d unanswered after Raft stopped", round, i)
			if errors.Is(err, raft.ErrRaftShutdown) {
				stranded++
			}
		}
	}
	t.Logf("%d of %d futures answered ErrRaftShutdown (stranded, or first asked after the stop)", stranded, rounds*(queued+1))
}

var errStillWaiting = errors.New("still waiting")

// errorWithin is f.Error(), or errStillWaiting after d.
func errorWithin(f raft.Future, d time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		return errStillWaiting
	}
}

// heldRaft starts a single-node Raft on in-memory stores with a heldFSM,
// and waits until it leads.
func heldRaft(t *testing.T) (*raft.Raft, *heldFSM) {
	t.Helper()
	rc := raft.DefaultConfig()
	rc.LocalID = "1"
	rc.HeartbeatTimeout, rc.ElectionTimeout = 20*time.Millisecond, 20*time.Millisecond
	rc.LeaderLeaseTimeout, rc.CommitTimeout = 20*time.Millisecond, 5*time.Millisecond
	rc.BatchApplyCh = true
	rc.LogOutput = io.Discard
	logs, snaps := raft.NewInmemStore(), raft.NewInmemSnapshotStore()
	addr, trans := raft.NewInmemTransport("")
	conf := raft.Configuration{Servers: []raft.Server{{ID: rc.LocalID, Address: addr}}}
	require.NoError(t, raft.BootstrapCluster(rc, logs, logs, snaps, trans, conf))
	h := &heldFSM{entered: make(chan struct{}), release: make(chan struct{})}
	r, err := raft.NewRaft(rc, h, logs, logs, snaps, trans)
	require.NoError(t, err)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		_ = r.Shutdown().Error()
	})
	deadline := time.Now().Add(10 * time.Second)
	for r.State() != raft.Leader {
		require.True(t, time.Now().Before(deadline), "the single node never led")
		time.Sleep(time.Millisecond) // a poll interval: see above
	}
	return r, h
}

// The server settles what it proposes and its barriers on its node's
// stopped channel, which Close closes.
func TestServerSettlesItsProposals(t *testing.T) {
	s := attachServer(t, nil)
	b, err := fsm.EncodeCommand(&fsm.Command{Type: fsm.CmdOps,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/settled", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	f := s.enqueue(raft.Log{Data: b})
	require.Equal(t, s.node.stopped, settledOn(t, f), "enqueue's future")
	_, err = resultOf(f)
	require.NoError(t, err)
	require.Equal(t, s.node.stopped, settledOn(t, settled(s.node, s.node.r.Barrier(time.Second))), "a barrier")
	require.NoError(t, s.Close())
	select {
	case <-s.node.stopped:
	default:
		t.Fatal("Close left the node's stopped channel open")
	}
}

// settledOn reads a Raft future's ShutdownCh.
func settledOn(t *testing.T, f raft.Future) chan struct{} {
	t.Helper()
	v := reflect.ValueOf(f)
	require.Equal(t, reflect.Pointer, v.Kind(), fmt.Sprintf("%T", f))
	ch, ok := v.Elem().FieldByName("ShutdownCh").Interface().(chan struct{})
	require.True(t, ok)
	return ch
}

// BenchmarkSettleOn is the cost settleOn adds to every proposal.
func BenchmarkSettleOn(b *testing.B) {
	s := fuzzServer(b)
	f := s.node.r.Barrier(time.Second)
	require.NoError(b, f.Error())
	stopped := make(chan struct{})
	b.ReportAllocs()
	for b.Loop() {
		settleOn(f, stopped)
	}
}
