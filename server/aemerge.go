package server

import (
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// hashicorp/raft's leader replicates to each follower through a pipeline:
// every batch the leader's loop dispatches becomes one AppendEntries, sent
// at once even while earlier ones are unanswered. A follower handles the
// AppendEntries of one connection strictly one after another (decode,
// store and fsync, answer, then read the next), so under load the later
// ones only wait in the socket, and each costs the follower a disk write
// and a sync of its own, and both sides an encode, a decode and a system
// call each way, for a few entries (under 16 clients' writes on a 3-node
// cluster: ~5 entries per AppendEntries, half of a follower's CPU in
// storing them and a fifth of the leader's in sending them).
//
// mergingPipeline keeps one AppendEntries in flight per follower. What
// Raft sends meanwhile waits, and goes out as one AppendEntries as soon as
// the follower answers: the next batch costs the follower one write and
// one sync. An entry that would have waited in the follower's socket
// instead waits in the leader, for the answer's way back and its own way
// over, two loopback hops, and a pipeline with nothing in flight sends at
// once, so an idle or lightly loaded cluster sees no delay at all.
//
// Raft still gets one answer per request it made, in order: each request
// merged into one AppendEntries gets a copy of that AppendEntries' answer,
// which is what the follower would have answered each (Raft uses the
// answer's Term and Success, and the request's own entries).
type mergingPipeline struct {
	inner raft.AppendPipeline
	// capReq caps the commit index of what is sent (commitAheadTransport).
	capReq func(*raft.AppendEntriesRequest) *raft.AppendEntriesRequest
	out    chan raft.AppendFuture
	done   chan struct{}
	once   sync.Once
	space  chan struct{} // signalled when requests leave the queue
	// sendMu serialises writes to inner: run's, and Close's last one.
	sendMu sync.Mutex

	mu       sync.Mutex
	inflight []*mergeFuture // the requests of the AppendEntries on the wire
	queue    []*mergeFuture // requests waiting for it
	err      error          // a send failed: the pipeline is broken
}

const (
	// maxMergedEntries bounds the entries of one merged AppendEntries.
	maxMergedEntries = 4 * maxAppendEntries
	// maxMergedBytes bounds the entries' data in one merged AppendEntries
	// (a request Raft made larger than that still goes out, unmerged).
	maxMergedBytes = 4 << 20
	// maxQueuedAppends bounds the requests waiting behind the one in
	// flight (as the network pipeline bounds its own, rpcMaxPipeline):
	// Raft blocks once that many wait.
	maxQueuedAppends = 128
)

var (
	errPipelineClosed = errors.New("paddock: append pipeline closed")
	errAppendRejected = errors.New("paddock: follower rejected an AppendEntries")
)

func newMergingPipeline(inner raft.AppendPipeline, capReq func(*raft.AppendEntriesRequest) *raft.AppendEntriesRequest) *mergingPipeline {
	p := &mergingPipeline{inner: inner, capReq: capReq,
		out: make(chan raft.AppendFuture, maxQueuedAppends+maxMergedEntries), done: make(chan struct{}),
		space: make(chan struct{}, 1)}
	go p.run()
	return p
}

// AppendEntries sends args at once if nothing is in flight, or queues it
// to go out, merged with whatever else waits, when the answer comes.
func (p *mergingPipeline) AppendEntries(args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) (raft.AppendFuture, error) {
	select {
	case <-p.done:
		return nil, errPipelineClosed
	default:
	}
	f := &mergeFuture{start: time.Now(), req: args, resp: resp, done: make(chan struct{})}
	p.mu.Lock()
	for len(p.queue) >= maxQueuedAppends && p.err == nil {
		// Rare: the follower is far behind. Wait until an answer takes
		// requests off the queue.
		p.mu.Unlock()
		select {
		case <-p.done:
			return nil, errPipelineClosed
		case <-p.space:
		}
		p.mu.Lock()
	}
	if p.err != nil {
		err := p.err
		p.mu.Unlock()
		return nil, err
	}
	if p.inflight != nil {
		p.queue = append(p.queue, f)
		p.mu.Unlock()
		return f, nil
	}
	batch := []*mergeFuture{f}
	p.inflight = batch
	p.mu.Unlock()
	if err := p.send(batch); err != nil {
		// As the network pipeline's: the request that could not be sent
		// gets no answer, only this error (nothing else was queued: the
		// queue fills only while something is in flight).
		p.mu.Lock()
		if p.err == nil {
			p.err = err
		}
		p.inflight = nil
		p.mu.Unlock()
		p.signalSpace()
		return nil, err
	}
	return f, nil
}

// send sends batch as one AppendEntries.
func (p *mergingPipeline) send(batch []*mergeFuture) error {
	p.sendMu.Lock()
	defer p.sendMu.Unlock()
	_, err := p.inner.AppendEntries(p.capReq(mergeRequests(batch)), new(raft.AppendEntriesResponse))
	return err
}

// mergeRequests is the one AppendEntries that carries batch's requests:
// the first's previous entry, all their entries, the last's commit index.
func mergeRequests(batch []*mergeFuture) *raft.AppendEntriesRequest {
	if len(batch) == 1 {
		return batch[0].req
	}
	m := *batch[0].req
	n := 0
	for _, f := range batch {
		n += len(f.req.Entries)
	}
	m.Entries = make([]*raft.Log, 0, n)
	for _, f := range batch {
		m.Entries = append(m.Entries, f.req.Entries...)
	}
	m.LeaderCommitIndex = batch[len(batch)-1].req.LeaderCommitIndex
	return &m
}

// lastOf is the last entry a request leaves the follower's log at.
func lastOf(r *raft.AppendEntriesRequest) uint64 {
	if n := len(r.Entries); n > 0 {
		return r.Entries[n-1].Index
	}
	return r.PrevLogEntry
}

// takeQueue removes and returns the queued requests that merge into one
// AppendEntries (see mergeable).
func (p *mergingPipeline) takeQueue() []*mergeFuture {
	batch, rest := mergeable(p.queue)
	p.queue = rest
	return batch
}

// mergeable splits q into the requests at its head that merge into one
// AppendEntries, each continuing the one before it in the same term, up
// to maxMergedEntries entries and maxMergedBytes of data (at least one
// request), and the rest.
func mergeable(q []*mergeFuture) (batch, rest []*mergeFuture) {
	if len(q) == 0 {
		return nil, nil
	}
	k, entries, size := 1, len(q[0].req.Entries), dataSize(q[0].req)
	for ; k < len(q); k++ {
		prev, next := q[k-1].req, q[k].req
		n := dataSize(next)
		if next.Term != prev.Term || next.PrevLogEntry != lastOf(prev) ||
			entries+len(next.Entries) > maxMergedEntries || size+n > maxMergedBytes {
			break
		}
		entries += len(next.Entries)
		size += n
	}
	return q[:k:k], append([]*mergeFuture(nil), q[k:]...)
}

// dataSize is the size of a request's entries' data.
func dataSize(r *raft.AppendEntriesRequest) int {
	n := 0
	for _, e := range r.Entries {
		n += len(e.Data) + len(e.Extensions)
	}
	return n
}

// run takes each answer, hands Raft one answer per request, and sends
// what waited. The answers go first: Raft counts them towards commits
// while the next AppendEntries is encoded and written. After an answer
// that is not a success (Raft stops the pipeline at it), nothing more is
// sent and the waiting requests fail.
func (p *mergingPipeline) run() {
	in := p.inner.Consumer()
	for {
		var ready raft.AppendFuture
		select {
		case ready = <-in:
		case <-p.done:
			return
		}
		err := ready.Error()
		resp := *ready.Response()
		p.mu.Lock()
		batch, next := p.inflight, []*mergeFuture(nil)
		p.inflight = nil
		ok := err == nil && resp.Success && p.err == nil
		if ok {
			next = p.takeQueue()
			p.inflight = next
			p.signalSpace()
		} else if p.err == nil {
			p.err = errAppendRejected
			if err != nil {
				p.err = err
			}
		}
		p.mu.Unlock()
		for _, f := range batch {
			f.complete(resp, err)
			select {
			case p.out <- f:
			case <-p.done:
				return
			}
		}
		var serr error
		if next != nil {
			serr = p.send(next)
		}
		if !ok || serr != nil {
			p.fail(serr)
		}
	}
}

// fail breaks the pipeline: what is in flight or queued is answered as
// failed (Raft then stops the pipeline and replicates without one).
func (p *mergingPipeline) fail(err error) {
	p.mu.Lock()
	if p.err == nil {
		p.err = err
	}
	err = p.err
	failed := append(p.inflight, p.queue...)
	p.inflight, p.queue = nil, nil
	p.mu.Unlock()
	p.signalSpace() // a sender waiting for room returns the error
	for _, f := range failed {
		f.complete(raft.AppendEntriesResponse{}, err)
		select {
		case p.out <- f:
		case <-p.done:
			return
		}
	}
}

// signalSpace wakes AppendEntries if it waits for room in the queue.
func (p *mergingPipeline) signalSpace() {
	select {
	case p.space <- struct{}{}:
	default:
	}
}

// Consumer returns the answered requests, in the order they were made.
func (p *mergingPipeline) Consumer() <-chan raft.AppendFuture { return p.out }

// Close stops the pipeline and closes the network pipeline. Requests
// still queued behind the one in flight are sent first, without waiting
// for answers: Raft's last, best-effort send to a follower it stops
// replicating to (the configuration entry that removes it) is often
// among them, and the network pipeline would have written it already.
func (p *mergingPipeline) Close() error {
	p.once.Do(func() {
		p.mu.Lock()
		var rest []*mergeFuture
		if p.err == nil {
			rest, p.queue = p.queue, nil
			p.err = errPipelineClosed
		}
		p.mu.Unlock()
		for len(rest) > 0 {
			var batch []*mergeFuture
			batch, rest = mergeable(rest)
			if p.send(batch) != nil {
				break
			}
		}
		close(p.done)
	})
	return p.inner.Close()
}

// mergeFuture is one request Raft made, answered with the answer of the
// AppendEntries it went out in.
type mergeFuture struct {
	start time.Time
	req   *raft.AppendEntriesRequest
	resp  *raft.AppendEntriesResponse
	err   error
	done  chan struct{}
}

func (f *mergeFuture) complete(resp raft.AppendEntriesResponse, err error) {
	*f.resp = resp
	f.err = err
	close(f.done)
}

func (f *mergeFuture) Error() error                          { <-f.done; return f.err }
func (f *mergeFuture) Start() time.Time                      { return f.start }
func (f *mergeFuture) Request() *raft.AppendEntriesRequest   { return f.req }
func (f *mergeFuture) Response() *raft.AppendEntriesResponse { return f.resp }
