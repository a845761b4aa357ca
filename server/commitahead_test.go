package server

import (
	"io"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"
)

// startAhead runs a commitAheadTransport's reordering on a channel of
// its own (no network, no Raft).
func startAhead(t *testing.T) (chan<- raft.RPC, *commitAheadTransport) {
	in := make(chan raft.RPC)
	c := &commitAheadTransport{out: make(chan raft.RPC), done: make(chan struct{})}
	go c.run(in)
	t.Cleanup(func() { close(c.done) })
	return in, c
}

// appendRPC is an AppendEntries at term 2 with the given previous entry,
// commit index and entry indexes.
func appendRPC(prev, commit uint64, entries ...uint64) raft.RPC {
	req := &raft.AppendEntriesRequest{Term: 2, PrevLogEntry: prev, PrevLogTerm: 2, LeaderCommitIndex: commit}
	for _, i := range entries {
		req.Entries = append(req.Entries, &raft.Log{Index: i, Term: 2})
	}
	return raft.RPC{Command: req, RespChan: make(chan raft.RPCResponse, 1)}
}

func passedOn(t *testing.T, c *commitAheadTransport) *raft.AppendEntriesRequest {
	t.Helper()
	select {
	case rpc := <-c.out:
		return rpc.Command.(*raft.AppendEntriesRequest)
	case <-time.After(5 * time.Second):
		t.Fatal("no RPC passed on")
		return nil
	}
}

func feed(t *testing.T, in chan<- raft.RPC, rpc raft.RPC) *raft.AppendEntriesRequest {
	t.Helper()
	select {
	case in <- rpc:
	case <-time.After(5 * time.Second):
		t.Fatal("the transport does not take RPCs")
	}
	return rpc.Command.(*raft.AppendEntriesRequest)
}

func TestCommitAheadCommitsBeforeTheNewEntries(t *testing.T) {
	in, c := startAhead(t)
	first := feed(t, in, appendRPC(0, 0, 1, 2, 3, 4, 5))
	require.Same(t, first, passedOn(t, c), "nothing to commit yet: passed on as is")

	second := feed(t, in, appendRPC(5, 7, 6, 7, 8))
	early := passedOn(t, c)
	require.Empty(t, early.Entries)
	require.Equal(t, uint64(5), early.PrevLogEntry)
	require.Equal(t, uint64(2), early.PrevLogTerm)
	require.Equal(t, uint64(5), early.LeaderCommitIndex, "never beyond the previous entry")
	require.Same(t, second, passedOn(t, c))

	// Commit 7 was passed on with entries 6-8: nothing new before entry 9.
	third := feed(t, in, appendRPC(8, 7, 9))
	require.Same(t, third, passedOn(t, c))
}

func TestCommitAheadOnlyForEntriesPassedOn(t *testing.T) {
	in, c := startAhead(t)
	// Entry 5 is not known to be stored: Raft may refuse the original (and
	// catch the follower up); an early commit would only be refused too.
	rpc := feed(t, in, appendRPC(5, 5, 6))
	require.Same(t, rpc, passedOn(t, c))
}

func TestCommitAheadHoldsACommitUntilItsEntries(t *testing.T) {
	in, c := startAhead(t)
	feed(t, in, appendRPC(0, 0, 1, 2))
	passedOn(t, c)
	push := feed(t, in, appendRPC(4, 4)) // entries 3-4 are still on their way
	entries := feed(t, in, appendRPC(2, 2, 3, 4))
	require.Equal(t, uint64(2), passedOn(t, c).LeaderCommitIndex, "commit 2 ahead of entries 3-4")
	require.Same(t, entries, passedOn(t, c), "the entries next")
	require.Same(t, push, passedOn(t, c), "then the commit that needs them")

	// A commit for entries already passed on goes at once.
	now := feed(t, in, appendRPC(4, 4))
	require.Same(t, now, passedOn(t, c))
}

func TestCommitAheadPassesAHeldCommitOnAfterTheTimeout(t *testing.T) {
	in, c := startAhead(t)
	start := time.Now()
	push := feed(t, in, appendRPC(9, 9)) // no entries will come
	require.Same(t, push, passedOn(t, c))
	require.GreaterOrEqual(t, time.Since(start), commitHoldTimeout)
}

func TestCommitAheadSnapshotCountsAsStored(t *testing.T) {
	in, c := startAhead(t)
	snap := raft.RPC{Command: &raft.InstallSnapshotRequest{LastLogIndex: 50}, RespChan: make(chan raft.RPCResponse, 1)}
	in <- snap
	got := <-c.out
	require.Equal(t, snap.Command, got.Command)
	push := feed(t, in, appendRPC(50, 50))
	require.Same(t, push, passedOn(t, c), "entry 50 is in the snapshot: no wait")
}

func TestCommitAheadStopsOnClose(t *testing.T) {
	in := make(chan raft.RPC)
	c := &commitAheadTransport{out: make(chan raft.RPC), done: make(chan struct{})}
	stopped := make(chan struct{})
	go func() { c.run(in); close(stopped) }()
	in <- appendRPC(0, 0, 1) // nobody reads c.out: run blocks passing it on
	close(c.done)
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("run did not stop on close")
	}
}

func TestCommitAheadCloseTwice(t *testing.T) {
	nt, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, time.Second, io.Discard)
	require.NoError(t, err)
	c := newCommitAheadTransport(nt, nil)
	require.NoError(t, c.Close()) // as Raft's Shutdown does
	require.NoError(t, c.Close()) // and the node's closers after it
	require.True(t, nt.IsShutdown())
}
