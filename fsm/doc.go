// Package fsm is Paddock's replicated state machine: the znode tree and the
// session table, as a hashicorp/raft FSM.
//
// Contract:
//   - Apply is a pure function of (state, log entry). It never reads the
//     clock, never uses randomness, and never depends on map iteration
//     order. Time arrives in the command (Command.Time, stamped by the
//     proposer); zxid is the Raft log index. (The path index's hash seed
//     is random, like a Go map's: it decides where entries sit, never what
//     Apply or a read returns.)
//   - Commands are msgpack-encoded with a leading format-version byte
//     (EncodeCommand / DecodeCommand). Apply re-validates everything that
//     depends on state: existence, versions, parent type, and that the
//     owning session is still alive. Stateless checks (paths, modes, TTLs,
//     ACL syntax) are exported as ValidateOp so the server can also apply
//     them at the door.
//   - Apply returns a *Result: per-op results and the change events (path,
//     type) in the order ZooKeeper's DataTree triggers them. The OnApply hook,
//     if set, is called inside Apply with the state lock held, before any
//     reader can observe the new state, so that watch notifications are
//     queued before the data they announce is readable. OnApply must not
//     block.
//   - multi is atomic: on the first failing op every change is rolled back
//     and every op reports ZooKeeper's per-op error (0 before, the code at,
//     ErrRuntimeInconsistency after).
//   - Reads (Get, Exists, Children, ...) are safe to call concurrently with
//     Apply; they see the state after some prefix of applied entries.
//     Returned byte slices are shared with the tree and must not be
//     modified.
//   - The tree is an arena (tree.go): 104-byte node records in chunks of
//     1,024, linked by id, found through a path-hash index; a node's only
//     allocation is its name+data buffer, so the collector has one pointer
//     per node to follow. Snapshot copies the chunk list (one pointer per
//     1,024 nodes); a chunk is copied before its first change while a
//     snapshot may still read it. Persist streams msgpack, parents before
//     children, without recursion, so a 10,000-deep tree is fine. Restore
//     accepts nodes in any order and discards all prior state.
//   - Check verifies the tree's invariants and Digest returns a
//     deterministic hash of the whole state for comparing replicas.
package fsm
