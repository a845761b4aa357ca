package server

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// fakePipeline is a network pipeline whose answers the test gives.
type fakePipeline struct {
	sent     chan *raft.AppendEntriesRequest
	consumer chan raft.AppendFuture
	mu       sync.Mutex
	inflight []*mergeFuture
	closed   bool
	// failSend, if set, fails every send; hold, if set, makes a send wait
	// until it is closed.
	failSend error
	hold     chan struct{}
}

func newFakePipeline() *fakePipeline {
	return &fakePipeline{sent: make(chan *raft.AppendEntriesRequest, 1024), consumer: make(chan raft.AppendFuture, 1024)}
}

func (f *fakePipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	f.mu.Lock()
	failSend, hold := f.failSend, f.hold
	f.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if failSend != nil {
		return nil, failSend
	}
	fut := &mergeFuture{req: args, resp: resp, done: make(chan struct{})}
	f.mu.Lock()
	f.inflight = append(f.inflight, fut)
	f.mu.Unlock()
	f.sent <- args
	return fut, nil
}

// answer answers the oldest AppendEntries in flight.
func (f *fakePipeline) answer(t *testing.T, resp raft.AppendEntriesResponse) {
	t.Helper()
	f.mu.Lock()
	require.NotEmpty(t, f.inflight, "nothing in flight to answer")
	fut := f.inflight[0]
	f.inflight = f.inflight[1:]
	f.mu.Unlock()
	fut.complete(resp, nil)
	f.consumer <- fut
}

func (f *fakePipeline) Consumer() <-chan raft.AppendFuture { return f.consumer }
func (f *fakePipeline) Close() error                       { f.mu.Lock(); f.closed = true; f.mu.Unlock(); return nil }

func noCap(r *raft.AppendEntriesRequest) *raft.AppendEntriesRequest { return r }

// appendReq is an AppendEntries of entries first..last after prev.
func appendReq(term, prev, first, last, commit uint64) *raft.AppendEntriesRequest {
	r := &raft.AppendEntriesRequest{Term: term, PrevLogEntry: prev, PrevLogTerm: term, LeaderCommitIndex: commit}
	for i := first; i <= last; i++ {
		r.Entries = append(r.Entries, &raft.Log{Index: i, Term: term})
	}
	return r
}

// withData gives each of r's entries n bytes of data.
func withData(r *raft.AppendEntriesRequest, n int) *raft.AppendEntriesRequest {
	for _, e := range r.Entries {
		e.Data = make([]byte, n)
	}
	return r
}

func entryIndexes(r *raft.AppendEntriesRequest) []uint64 {
	var out []uint64
	for _, e := range r.Entries {
		out = append(out, e.Index)
	}
	return out
}

func recvSent(t *testing.T, f *fakePipeline) *raft.AppendEntriesRequest {
	t.Helper()
	select {
	case r := <-f.sent:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("nothing sent")
		return nil
	}
}

func recvAnswer(t *testing.T, p *mergingPipeline) raft.AppendFuture {
	t.Helper()
	select {
	case f := <-p.Consumer():
		return f
	case <-time.After(10 * time.Second):
		t.Fatal("no answer")
		return nil
	}
}

func TestMergingPipelineSendsAtOnceWhenIdle(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	defer p.Close()
	req := appendReq(2, 10, 11, 12, 10)
	_, err := p.AppendEntries(req, new(raft.AppendEntriesResponse))
	require.NoError(t, err)
	require.Same(t, req, recvSent(t, inner), "nothing in flight: sent as is")
	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: true, LastLog: 12})
	got := recvAnswer(t, p)
	require.Same(t, req, got.Request())
	require.True(t, got.Response().Success)
	require.NoError(t, got.Error())

	// Idle again: the next goes out at once too.
	req2 := appendReq(2, 12, 13, 13, 12)
	_, err = p.AppendEntries(req2, new(raft.AppendEntriesResponse))
	require.NoError(t, err)
	require.Same(t, req2, recvSent(t, inner))
}

func TestMergingPipelineMergesWhatWaits(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	defer p.Close()
	reqs := []*raft.AppendEntriesRequest{
		appendReq(2, 10, 11, 12, 9),
		appendReq(2, 12, 13, 15, 10),
		appendReq(2, 15, 16, 16, 12),
		appendReq(2, 16, 17, 18, 13),
	}
	resps := make([]*raft.AppendEntriesResponse, len(reqs))
	for i, r := range reqs {
		resps[i] = new(raft.AppendEntriesResponse)
		_, err := p.AppendEntries(r, resps[i])
		require.NoError(t, err)
	}
	require.Same(t, reqs[0], recvSent(t, inner))
	require.Empty(t, inner.sent, "the rest wait for the answer")

	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: true, LastLog: 12})
	merged := recvSent(t, inner)
	require.Equal(t, []uint64{13, 14, 15, 16, 17, 18}, entryIndexes(merged))
	require.Equal(t, uint64(12), merged.PrevLogEntry)
	require.Equal(t, uint64(13), merged.LeaderCommitIndex, "the last request's commit index")
	require.Equal(t, []uint64{13, 14, 15}, entryIndexes(reqs[1]), "Raft's requests are not changed")
	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: true, LastLog: 18})

	for i := range reqs {
		got := recvAnswer(t, p)
		require.Same(t, reqs[i], got.Request(), "answers in request order")
		require.Same(t, resps[i], got.Response())
		require.True(t, got.Response().Success)
		require.Equal(t, uint64(2), got.Response().Term)
	}
	require.Empty(t, inner.sent)
}

func TestMergingPipelineMergesOnlyContiguousRequests(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	defer p.Close()
	big := appendReq(2, 13, 14, 14+maxMergedEntries-1, 10)
	for _, r := range []*raft.AppendEntriesRequest{
		appendReq(2, 10, 11, 11, 9),
		appendReq(2, 11, 12, 12, 9),
		appendReq(2, 20, 21, 21, 9), // a gap: Raft went back (never in one pipeline, but safe)
		appendReq(2, 21, 22, 22, 9),
		appendReq(3, 22, 23, 23, 9), // another term
		appendReq(3, 23, 24, 24, 9),
		big, // too many to merge with the one before
		withData(appendReq(3, big.Entries[len(big.Entries)-1].Index, 300, 300, 9), maxMergedBytes/2),
		withData(appendReq(3, 300, 301, 301, 9), maxMergedBytes/2+1), // too large to merge
	} {
		_, err := p.AppendEntries(r, new(raft.AppendEntriesResponse))
		require.NoError(t, err)
	}
	want := [][]uint64{{11}, {12}, {21, 22}, {23, 24}, entryIndexes(big), {300}, {301}}
	for _, w := range want {
		require.Equal(t, w, entryIndexes(recvSent(t, inner)))
		inner.answer(t, raft.AppendEntriesResponse{Term: 3, Success: true})
	}
	for range 9 {
		recvAnswer(t, p)
	}
}

func TestMergingPipelineStopsAtARejection(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	defer p.Close()
	for _, r := range []*raft.AppendEntriesRequest{appendReq(2, 10, 11, 11, 9), appendReq(2, 11, 12, 12, 9)} {
		_, err := p.AppendEntries(r, new(raft.AppendEntriesResponse))
		require.NoError(t, err)
	}
	recvSent(t, inner)
	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: false, LastLog: 5})
	first, second := recvAnswer(t, p), recvAnswer(t, p)
	require.False(t, first.Response().Success)
	require.Equal(t, uint64(5), first.Response().LastLog, "the follower's own answer")
	require.False(t, second.Response().Success, "what waited fails")
	require.Error(t, second.Error())
	require.Empty(t, inner.sent, "nothing is sent after a rejection")
	_, err := p.AppendEntries(appendReq(2, 12, 13, 13, 9), new(raft.AppendEntriesResponse))
	require.Error(t, err, "the pipeline is broken: Raft replicates without it")
}

// fillQueue puts one request in flight and fills the queue behind it,
// then makes one more request, which must block; its result arrives on
// the returned channel once it returns.
func fillQueue(t *testing.T, p *mergingPipeline, inner *fakePipeline) <-chan error {
	t.Helper()
	next := uint64(10)
	add := func() error {
		_, err := p.AppendEntries(appendReq(2, next, next+1, next+1, 9), new(raft.AppendEntriesResponse))
		next++
		return err
	}
	for range maxQueuedAppends + 1 { // one in flight, the queue full
		require.NoError(t, add())
	}
	recvSent(t, inner)
	added := make(chan error, 1)
	go func() { added <- add() }()
	require.Never(t, func() bool { return len(added) > 0 }, 50*time.Millisecond, time.Millisecond,
		"a full queue takes no more")
	return added
}

// A full queue takes no more requests: the sender waits until an answer
// drains it, or, when the pipeline breaks, returns the error instead of
// blocking Raft's replication for good.
func TestMergingPipelineBoundsItsQueue(t *testing.T) {
	for _, tc := range []struct {
		name    string
		success bool
		wantErr error
	}{
		{"drained", true, nil},
		{"broken", false, errAppendRejected},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inner := newFakePipeline()
			p := newMergingPipeline(inner, noCap)
			defer p.Close()
			added := fillQueue(t, p, inner)
			inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: tc.success})
			select {
			case err := <-added:
				require.ErrorIs(t, err, tc.wantErr)
			case <-time.After(10 * time.Second):
				t.Fatal("the sender still waits")
			}
			if tc.success {
				require.Len(t, recvSent(t, inner).Entries, maxQueuedAppends, "the drained queue went out merged")
			}
		})
	}
}

func TestMergingPipelineCloseStopsIt(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	_, err := p.AppendEntries(appendReq(2, 10, 11, 11, 9), new(raft.AppendEntriesResponse))
	require.NoError(t, err)
	require.NoError(t, p.Close())
	require.NoError(t, p.Close(), "twice is fine")
	inner.mu.Lock()
	require.True(t, inner.closed)
	inner.mu.Unlock()
	_, err = p.AppendEntries(appendReq(2, 11, 12, 12, 9), new(raft.AppendEntriesResponse))
	require.ErrorIs(t, err, errPipelineClosed)
}

// A request that cannot be sent gets the error and no answer, as the
// network pipeline does it: Raft stops the pipeline at the error and must
// not meet the request again on the Consumer.
func TestMergingPipelineFailedSendIsNotAnswered(t *testing.T) {
	inner := newFakePipeline()
	inner.failSend = errors.New("connection reset")
	p := newMergingPipeline(inner, noCap)
	defer p.Close()
	_, err := p.AppendEntries(appendReq(2, 10, 11, 11, 9), new(raft.AppendEntriesResponse))
	require.ErrorIs(t, err, inner.failSend)
	require.Never(t, func() bool { return len(p.Consumer()) > 0 }, 50*time.Millisecond, time.Millisecond)
	_, err = p.AppendEntries(appendReq(2, 11, 12, 12, 9), new(raft.AppendEntriesResponse))
	require.ErrorIs(t, err, inner.failSend, "the pipeline stays broken")
}

// Raft gets an answer before the next AppendEntries is written, so its
// commit does not wait for that write.
func TestMergingPipelineAnswersBeforeItSendsMore(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	defer p.Close()
	first := appendReq(2, 10, 11, 11, 9)
	for _, r := range []*raft.AppendEntriesRequest{first, appendReq(2, 11, 12, 12, 9)} {
		_, err := p.AppendEntries(r, new(raft.AppendEntriesResponse))
		require.NoError(t, err)
	}
	recvSent(t, inner)
	hold := make(chan struct{})
	inner.mu.Lock()
	inner.hold = hold
	inner.mu.Unlock()
	inner.answer(t, raft.AppendEntriesResponse{Term: 2, Success: true})
	require.Same(t, first, recvAnswer(t, p).Request(), "answered while the next send is held")
	close(hold)
	require.Equal(t, []uint64{12}, entryIndexes(recvSent(t, inner)))
}

// Close sends what still waits behind the AppendEntries in flight (Raft's
// last send to a follower it stops replicating to), merged.
func TestMergingPipelineCloseSendsWhatWaits(t *testing.T) {
	inner := newFakePipeline()
	p := newMergingPipeline(inner, noCap)
	for _, r := range []*raft.AppendEntriesRequest{appendReq(2, 10, 11, 11, 9),
		appendReq(2, 11, 12, 12, 9), appendReq(2, 12, 13, 14, 11)} {
		_, err := p.AppendEntries(r, new(raft.AppendEntriesResponse))
		require.NoError(t, err)
	}
	require.Equal(t, []uint64{11}, entryIndexes(recvSent(t, inner)))
	require.NoError(t, p.Close())
	last := recvSent(t, inner)
	require.Equal(t, []uint64{12, 13, 14}, entryIndexes(last))
	require.Equal(t, uint64(11), last.LeaderCommitIndex)
}

// TestClusterMergesAppendEntriesForABusyFollower holds one follower's
// disk write while the leader commits ten writes with the other: once
// the write ends, the follower stores the ten in one merged AppendEntries
// instead of ten.
func TestClusterMergesAppendEntriesForABusyFollower(t *testing.T) {
	servers, stores := startHeldCluster(t)
	l := clusterLeader(t, servers)
	f := (l + 1) % len(servers)
	create := func(path string) {
		t.Helper()
		res, err := servers[l].apply(&fsm.Command{Type: fsm.CmdOps,
			Ops: []fsm.Op{{Type: wire.OpCreate, Path: path, ACL: wire.OpenACLUnsafe}}})
		require.NoError(t, err)
		require.Equal(t, wire.OK, res.Err)
	}
	caughtUp := func() bool {
		last, _ := stores[f].LastIndex()
		return last == servers[l].node.r.LastIndex()
	}
	for i := range 3 { // Raft replicates through its pipeline from here on
		create(fmt.Sprintf("/warm%d", i))
	}
	require.Eventually(t, caughtUp, 10*time.Second, time.Millisecond)

	stores[f].hold.Store(true)
	create("/first") // in flight to the held follower, committed with the other
	for i := range 10 {
		create(fmt.Sprintf("/queued%d", i))
	}
	before := stores[f].storeCalls()
	stores[f].hold.Store(false)
	stores[f].release <- nil
	require.Eventually(t, caughtUp, 10*time.Second, time.Millisecond)
	calls := stores[f].storeCalls() - before
	require.LessOrEqual(t, calls, 3, "the ten waiting writes reach the follower in one AppendEntries (plus the one held)")
	require.Eventually(t, func() bool { _, ok := servers[f].FSM().Exists("/queued9"); return ok },
		10*time.Second, time.Millisecond)
}
