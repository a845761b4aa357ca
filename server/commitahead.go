package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
)

// A follower applies an entry once it learns the entry is committed, and
// hashicorp/raft tells it so only in the AppendEntries that carries the
// next entries, which the follower writes to disk before it looks at the
// commit index. Every apply on a follower (the answer to a write forwarded
// from there, the watches a write fires there) thus waits for one more
// disk write than it needs: the entries it commits were on disk already.
// ZooKeeper's followers apply on the leader's COMMIT, with no write.
//
// commitAheadTransport sits between the follower's network transport and
// Raft and reorders nothing but what Raft would do anyway:
//
//   - An AppendEntries with entries whose commit index reaches its
//     previous entry P is preceded by an AppendEntries without entries:
//     previous entry P (same term), commit index min(commit, P). Raft
//     checks that it holds P with that term, as it would for the original,
//     and then commits at once, with no disk write; the original follows
//     and stores the new entries. The commit index handed over never
//     exceeds P, an entry Raft has just verified, so nothing is committed
//     that the leader's log does not hold. It is sent only when P was
//     brought by an AppendEntries passed on before (or is in the log
//     already), so it does not fail where the original would succeed.
//   - An AppendEntries without entries whose previous entry is not stored
//     yet, because the entries that bring it are still behind an earlier
//     disk write on the leader's replication connection (pushCommits sends
//     on another connection), waits for them and follows them, instead of
//     being refused and leaving the follower to learn the commit from the
//     next entries or Raft's commit timer. It waits commitHoldTimeout at
//     most, at most maxHeldCommits of them; then it is passed on as is.
//
// Raft processes its RPCs one at a time in the order this transport hands
// them over, so "follows" means "is processed after".
type commitAheadTransport struct {
	*raft.NetworkTransport
	out       chan raft.RPC
	done      chan struct{}
	closeOnce sync.Once
	// raft is set once Raft is running; its LastIndex covers entries on
	// disk before this transport started and installed snapshots.
	raft atomic.Pointer[raft.Raft]

	// capCommit, if set (before Raft starts), caps the commit index of
	// outgoing AppendEntries: leaderLog.commitCap.
	capCommit func(commit uint64) uint64
	// flushLog, if set (by newCommitAheadTransport), waits until this
	// node's own queued log writes are durable: leaderLog.flush.
	flushLog func() error
	// started, if set (before Raft starts), is called when Raft installs
	// its heartbeat handler: in NewRaft, before it starts a goroutine.
	started func()
	// acks holds, per peer, when it last answered an AppendEntries (a
	// heartbeat, on the leader) with success, and the last log index it
	// reported: mntr's synced followers, and a removed leader's choice of
	// successor (handoff.go).
	acks sync.Map // raft.ServerID -> peerAck

	// Owned by run.
	passed    uint64 // the last entry of any AppendEntries passed on
	committed uint64 // the highest commit index passed on
	held      []heldCommit
}

// peerAck is a peer's last successful AppendEntries answer.
type peerAck struct {
	at      time.Time
	lastLog uint64
}

type heldCommit struct {
	rpc      raft.RPC
	deadline time.Time
}

const (
	// commitHoldTimeout bounds how long an AppendEntries without entries
	// waits for the entries it refers to (one or two disk writes).
	commitHoldTimeout = 50 * time.Millisecond
	// maxHeldCommits bounds the number waiting at once.
	maxHeldCommits = 4
)

// newCommitAheadTransport starts passing t's RPCs on; flushLog is nil
// or leaderLog.flush.
func newCommitAheadTransport(t *raft.NetworkTransport, flushLog func() error) *commitAheadTransport {
	c := &commitAheadTransport{NetworkTransport: t, out: make(chan raft.RPC), done: make(chan struct{}), flushLog: flushLog}
	go c.run(t.Consumer())
	return c
}

// SetHeartbeatHandler is the network transport's, after started.
func (c *commitAheadTransport) SetHeartbeatHandler(cb func(rpc raft.RPC)) {
	if c.started != nil {
		c.started()
	}
	c.NetworkTransport.SetHeartbeatHandler(cb)
}

// Consumer returns the reordered RPCs.
func (c *commitAheadTransport) Consumer() <-chan raft.RPC { return c.out }

// Close stops the reordering and closes the network transport.
func (c *commitAheadTransport) Close() error {
	c.closeOnce.Do(func() { close(c.done) })
	return c.NetworkTransport.Close()
}

// AppendEntries sends an AppendEntries, its commit index capped.
func (c *commitAheadTransport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	err := c.NetworkTransport.AppendEntries(id, target, c.capRequest(args), resp)
	if err == nil && resp.Success {
		c.acks.Store(id, peerAck{at: time.Now(), lastLog: resp.LastLog})
	}
	return err
}

// answeredSince reports whether peer id answered an AppendEntries with
// success at or after t.
func (c *commitAheadTransport) answeredSince(id raft.ServerID, t time.Time) bool {
	v, ok := c.acks.Load(id)
	return ok && !v.(peerAck).at.Before(t)
}

// lastLogOf returns the last log index peer id reported in a successful
// AppendEntries answer, and whether it answered one.
func (c *commitAheadTransport) lastLogOf(id raft.ServerID) (uint64, bool) {
	v, ok := c.acks.Load(id)
	if !ok {
		return 0, false
	}
	return v.(peerAck).lastLog, true
}

// AppendEntriesPipeline returns a pipeline that keeps one AppendEntries
// in flight and merges what waits (aemerge.go), with commit indexes
// capped.
func (c *commitAheadTransport) AppendEntriesPipeline(id raft.ServerID, target raft.ServerAddress) (raft.AppendPipeline, error) {
	p, err := c.NetworkTransport.AppendEntriesPipeline(id, target)
	if err != nil {
		return p, err
	}
	return newMergingPipeline(p, c.capRequest), nil
}

// capRequest returns args, or a copy with a lower commit index: the
// caller may share args (pushCommits sends one to every follower). The
// commit index never passes the request's last entry: hashicorp/raft's
// follower commits up to min(commit, its own last index), and its log
// past the request's entries may still hold entries of an older term
// that the leader's log does not (it drops them only where a request's
// entries conflict with them). Raft's leader does send more while a
// follower catches up in batches of MaxAppendEntries; the Raft paper's
// follower would take min(commit, the last new entry), as this makes it.
func (c *commitAheadTransport) capRequest(args *raft.AppendEntriesRequest) *raft.AppendEntriesRequest {
	commit := min(args.LeaderCommitIndex, lastOf(args))
	if c.capCommit != nil {
		commit = c.capCommit(commit)
	}
	if commit != args.LeaderCommitIndex {
		capped := *args
		capped.LeaderCommitIndex = commit
		return &capped
	}
	return args
}

// run passes the RPCs from in (the network transport's) on to Raft.
func (c *commitAheadTransport) run(in <-chan raft.RPC) {
	var timer *time.Timer
	var expired <-chan time.Time
	for {
		select {
		case rpc := <-in:
			if !c.route(rpc) {
				return
			}
		case <-expired:
			expired = nil
			if !c.release(time.Now()) {
				return
			}
		case <-c.done:
			return
		}
		if expired == nil && len(c.held) > 0 {
			wait := time.Until(c.held[0].deadline)
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			expired = timer.C
		}
	}
}

// route passes one RPC on, with the commit it carries first or held for
// the entries it refers to. False once the transport is closed.
func (c *commitAheadTransport) route(rpc raft.RPC) bool {
	req, ok := rpc.Command.(*raft.AppendEntriesRequest)
	if !ok {
		if snap, ok := rpc.Command.(*raft.InstallSnapshotRequest); ok {
			c.passed = max(c.passed, snap.LastLogIndex)
		}
		return c.pass(rpc)
	}
	if c.flushLog != nil {
		// Its answer says "stored" for entries this node may have queued
		// as leader. If that write failed (the server is stopping), it is
		// refused.
		if err := c.flushLog(); err != nil {
			rpc.Respond(nil, err)
			return true
		}
	}
	prev := req.PrevLogEntry
	if len(req.Entries) == 0 {
		if prev > c.stored() && len(c.held) < maxHeldCommits {
			c.held = append(c.held, heldCommit{rpc: rpc, deadline: time.Now().Add(commitHoldTimeout)})
			return true
		}
		c.committed = max(c.committed, min(req.LeaderCommitIndex, prev))
		return c.pass(rpc)
	}
	if early := min(req.LeaderCommitIndex, prev); early > c.committed && prev <= c.stored() {
		c.committed = early
		if !c.pass(commitOnly(req, early)) {
			return false
		}
	}
	last := req.Entries[len(req.Entries)-1].Index
	c.passed = max(c.passed, last)
	c.committed = max(c.committed, min(req.LeaderCommitIndex, last))
	if !c.pass(rpc) {
		return false
	}
	return c.release(time.Time{})
}

// release passes on the held RPCs whose entries have been passed on, and
// (with a non-zero now) those whose wait is over.
func (c *commitAheadTransport) release(now time.Time) bool {
	kept := c.held[:0]
	for _, h := range c.held {
		req := h.rpc.Command.(*raft.AppendEntriesRequest)
		if req.PrevLogEntry > c.stored() && (now.IsZero() || now.Before(h.deadline)) {
			kept = append(kept, h)
			continue
		}
		c.committed = max(c.committed, min(req.LeaderCommitIndex, req.PrevLogEntry))
		if !c.pass(h.rpc) {
			return false
		}
	}
	clear(c.held[len(kept):])
	c.held = kept
	return true
}

// stored is the last entry Raft has or will have when it reaches the next
// RPC passed on.
func (c *commitAheadTransport) stored() uint64 {
	if r := c.raft.Load(); r != nil {
		return max(c.passed, r.LastIndex())
	}
	return c.passed
}

func (c *commitAheadTransport) pass(rpc raft.RPC) bool {
	select {
	case c.out <- rpc:
		return true
	case <-c.done:
		return false
	}
}

// commitOnly is the AppendEntries without entries that tells what req
// tells of the commit index, up to its previous entry. Its answer is
// dropped; the original's is the one the leader gets.
func commitOnly(req *raft.AppendEntriesRequest, commit uint64) raft.RPC {
	return raft.RPC{
		Command: &raft.AppendEntriesRequest{
			RPCHeader:         req.RPCHeader,
			Term:              req.Term,
			PrevLogEntry:      req.PrevLogEntry,
			PrevLogTerm:       req.PrevLogTerm,
			LeaderCommitIndex: commit,
		},
		RespChan: make(chan raft.RPCResponse, 1),
	}
}
