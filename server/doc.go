// Package server is a ZooKeeper-compatible server: ZooKeeper's client
// protocol in front of the znode tree of package fsm, replicated with
// hashicorp/raft.
//
// The contract:
//
//   - New(cfg) returns a server that is serving: standalone (a single
//     Raft voter, in memory or on cfg.DataDir) or a member of the cluster
//     cfg.Peers describe. Close stops it and releases every file.
//   - Replies on a connection come in request order, and an event never
//     overtakes the reply to a request read before its change; a write's
//     own events come just before its reply (eventorder.go). A read sees every
//     write sent before it on its connection and none sent after. A watch
//     notification is queued before any reply that shows the change (a
//     change's event is encoded once and queued on all its watchers'
//     connections inside Apply); a few notifier goroutines write queued
//     notifications without blocking (notifier.go), each connection's
//     writer goroutine everything else. A session re-attached to the same
//     node keeps that order across its connections (sessionorder.go).
//   - A write is acknowledged once applied by the node the client is
//     connected to; with a data dir it is then on disk on a quorum (fsync
//     unless cfg.NoSync). Followers forward writes to the leader, tagged,
//     and answer them from their own apply of the tagged entry; the leader
//     answers only failures (fwdlocal.go). A connection's writes reach
//     the log in the order it sent them, through a follower too: the
//     follower sends them in order on one leader connection and the leader
//     proposes them as it reads them; after a write whose fate is unknown,
//     or when the leader or its term changes under unanswered writes, the
//     connection's later writes fail and it closes (fwdorder.go). A
//     write or sync that finds no leader waits for one (up to
//     cfg.ProposeTimeout); a connection's only write in flight that a
//     former leader refused unproposed is sent again (fwdretry.go). A write
//     Raft refuses before appending it (its queue stayed full for
//     cfg.ProposeTimeout) ends its connection at once: nothing read after
//     it is proposed (enqueue).
//     sync makes the local node catch up with the last committed write.
//   - Every Raft future the server waits on ends once Raft has stopped,
//     also one hashicorp/raft left unanswered in its queues (raftstop.go).
//     Timestamps compared as durations are monotonic (monotime.go).
//     A follower that installs a snapshot closes its client connections
//     (snapshotInstalled): the tree changed without watch events.
//   - A leader keeps one AppendEntries in flight per follower and sends
//     what Raft hands it meanwhile as one, merged, when the answer comes
//     (aemerge.go); Raft gets one answer per request, in order.
//   - A follower applies a committed entry as soon as the leader tells it,
//     with no disk write of its own first (commitpush.go, commitahead.go):
//     only entries it has stored, and only commit indexes Raft has checked
//     against its log (previous entry's index and term) as it checks the
//     leader's own messages.
//   - A cluster leader writes its log while Raft replicates it (leaderlog.go;
//     cfg.SyncLeaderLog for Raft's order), and no node applies an entry
//     before the leader's copy is durable: the leader's FSM waits for it,
//     and the commit index sent to followers stops short of it.
//   - A failed write of the Raft log, in any role (a full disk), stops the
//     server (Failed, Err; failstop.go): the store may take no write again
//     until reopened, and a restart reopens it.
//   - A follower whose Raft connection from the leader ends, and whose dial
//     to the leader's cluster port is then refused (its process is gone),
//     lowers Raft's heartbeat timeout to the leader lease until a leader
//     is known again, so it elects sooner (leadergone.go). Built with
//     -tags failpoints, the write path's internal/failpoint hooks can
//     crash the process at chosen points (tests only).
//   - Sessions are global; only the leader expires them; a new leader gives
//     every session a fresh timeout.
//   - Bad input gets an error code or a closed connection, never a panic;
//     every limit is a named Config field with a Default constant.
//
// Storage: in memory (raft's in-memory stores, or cfg.Stores to survive a
// restart within a process), or cfg.DataDir with snapshots and the Raft log
// in raft-wal (LogStoreWAL, the default for a new dir) or raft-boltdb
// (LogStoreBolt, kept for dirs that hold raft.db). A damaged store is
// refused at start, never replayed: each snapshot's CRC, and every batch
// of a raft-wal log against its checksum (verifyWAL). TuneGC (headroom in
// bytes; the free heap returned to the OS when idle) is for programs that
// run one server per process (paddock server).
package server
