package server

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// Followers learn that an entry is committed from the leader's next
// AppendEntries: the next batch of entries, or, with none, Raft's commit
// timer (Config.Raft.Commit, 1–2× that long). A follower answers a
// forwarded write, and fires the watches of any write, only once it has
// applied it, so on a lightly loaded cluster that timer is latency on every
// write through a follower and on every notification (a lock hand-off
// waits for it twice). ZooKeeper's leader sends COMMIT at once.
//
// pushCommits does the same: when the leader has applied an entry and
// nothing newer is in its log, it sends each follower an AppendEntries
// with no entries whose previous entry is the applied one and whose commit
// index is its index: exactly what Raft's own commit timer would send
// next. A follower that holds that entry (same index and term) commits and
// applies up to it at once, with no disk write. The follower whose
// acknowledgement did not count is often still writing the entry when the
// push arrives (on another connection than the entries); its
// commitAheadTransport holds the push until the entries have been passed
// to Raft, so it commits right after its own write. Under load newer
// entries are always in flight and carry the commit index; nothing is
// sent.
//
// When the applied entry is from an older term than the leader's (right
// after an election) it falls back to a barrier, a no-op entry whose
// replication carries the commit index, at the cost of one more disk
// write on every node.
func (s *Server) pushCommits(ctx context.Context) {
	if !s.cfg.clustered() {
		return
	}
	p := newCommitPusher(s.node)
	defer p.stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.commitNudge:
		}
		s.appliedMu.Lock()
		applied, term := s.appliedIdx, s.appliedTerm
		s.appliedMu.Unlock()
		r := s.node.r
		if r.State() != raft.Leader {
			continue
		}
		if r.LastIndex() > uint64(applied) {
			continue // a newer entry is on its way to the followers
		}
		if cur := r.CurrentTerm(); term != cur || !p.push(cur, uint64(applied), term) {
			r.Barrier(0) // not waited for: only its replication matters
		}
	}
}

// nudgeCommitPush tells pushCommits that an entry was applied. It never
// blocks (it runs inside Apply).
func (s *Server) nudgeCommitPush() {
	select {
	case s.commitNudge <- struct{}{}:
	default:
	}
}

const (
	// commitPushConfigTTL is how long the pusher trusts its copy of the
	// cluster configuration (who the followers are).
	commitPushConfigTTL = time.Second
	// commitPushBackoff is how long the pusher leaves a follower alone
	// after it rejected a push (it lacks the entry: Raft is catching it
	// up) or could not be reached.
	commitPushBackoff = 100 * time.Millisecond
)

// commitPusher sends commit indexes to the followers, one goroutine per
// follower, each sending only the newest request (older ones are
// superseded, never queued).
type commitPusher struct {
	node      *raftNode
	peers     map[raft.ServerID]*peerPusher
	refreshed time.Time
}

type peerPusher struct {
	id    raft.ServerID
	addr  raft.ServerAddress
	next  atomic.Pointer[raft.AppendEntriesRequest]
	wake  chan struct{}
	quit  chan struct{}
	until atomic.Int64 // monoNow before which pushes are skipped
}

func newCommitPusher(n *raftNode) *commitPusher {
	return &commitPusher{node: n, peers: map[raft.ServerID]*peerPusher{}}
}

// push queues a commit index for every follower; false if it cannot (no
// configuration yet).
func (p *commitPusher) push(term, index, prevTerm uint64) bool {
	if time.Since(p.refreshed) > commitPushConfigTTL {
		p.refresh()
	}
	if len(p.peers) == 0 {
		return false
	}
	t := p.node.trans
	req := &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(p.node.id),
			Addr: t.EncodePeer(p.node.id, t.LocalAddr())},
		Term:              term,
		PrevLogEntry:      index,
		PrevLogTerm:       prevTerm,
		LeaderCommitIndex: index,
	}
	now := monoNow()
	for _, pp := range p.peers {
		if now < pp.until.Load() {
			continue
		}
		pp.next.Store(req)
		select {
		case pp.wake <- struct{}{}:
		default:
		}
	}
	return true
}

// refresh reloads the configuration: a pusher for each other server.
func (p *commitPusher) refresh() {
	f := p.node.r.GetConfiguration()
	if f.Error() != nil {
		return
	}
	p.refreshed = time.Now()
	seen := map[raft.ServerID]bool{}
	for _, srv := range f.Configuration().Servers {
		if srv.ID == p.node.id {
			continue
		}
		seen[srv.ID] = true
		if pp, ok := p.peers[srv.ID]; ok && pp.addr == srv.Address {
			continue
		} else if ok {
			close(pp.quit)
		}
		pp := &peerPusher{id: srv.ID, addr: srv.Address, wake: make(chan struct{}, 1), quit: make(chan struct{})}
		p.peers[srv.ID] = pp
		go pp.run(p.node.trans)
	}
	for id, pp := range p.peers {
		if !seen[id] {
			close(pp.quit)
			delete(p.peers, id)
		}
	}
}

func (p *commitPusher) stop() {
	for id, pp := range p.peers {
		close(pp.quit)
		delete(p.peers, id)
	}
}

func (pp *peerPusher) run(t raft.Transport) {
	for {
		select {
		case <-pp.quit:
			return
		case <-pp.wake:
		}
		req := pp.next.Swap(nil)
		if req == nil {
			continue
		}
		var resp raft.AppendEntriesResponse
		if err := t.AppendEntries(pp.id, pp.addr, req, &resp); err != nil || !resp.Success {
			pp.until.Store(monoNow() + int64(commitPushBackoff))
		}
	}
}
