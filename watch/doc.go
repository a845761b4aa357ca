// Package watch is Paddock's server-local watch registry and fan-out. It is
// never replicated: watches live on the server a connection is attached to,
// are lost when the connection goes away and are restored by SetWatches on
// reconnect. It mirrors ZooKeeper 3.9's WatchManager (with WatchStats mode
// bits), the two tables DataTree keeps (dataWatches, childWatches) and
// DataTree.triggerWatch/setWatches/removeWatch/containsWatch.
//
// Contract:
//
//   - Two tables. The data table holds watches set by getData and exists
//     (including exists on a missing node); the child table holds watches set
//     by getChildren. addWatch PERSISTENT registers in both tables,
//     PERSISTENT_RECURSIVE in the data table only. A (watcher, path) entry in
//     a table carries a set of modes (standard, persistent, recursive), as in
//     ZooKeeper 3.9, so a one-shot watch and a persistent watch on the same
//     path coexist.
//
//   - One entry point for changes: Trigger(zxid, path, type). The fsm reports
//     per change the events (path, type); the server calls Trigger once for
//     each, in apply order. NodeCreated and NodeDataChanged use the data
//     table; NodeChildrenChanged the child table; NodeDeleted the data table
//     and then the child table of the same path, where a watcher already
//     notified from the data table is not notified again (its one-shot child
//     watch is still consumed). Other event types are ignored.
//
//   - Trigger rules per table: a watcher registered on the changed path fires
//     whatever its modes, and its standard (one-shot) mode is removed; a
//     watcher registered on a proper ancestor fires only if it has the
//     recursive mode, and recursive watches never receive
//     NodeChildrenChanged. The event carries the changed path and
//     State = SyncConnected. Each watcher gets at most one event per Trigger
//     call. The ancestor walk happens only while some recursive watch exists.
//
//   - Delivery: Trigger collects the watchers under the registry's lock,
//     releases it and then calls Watcher.Notify synchronously, once per
//     watcher, before returning (or, with Options.Deliver, Deliver once
//     with all of them, so one event is encoded once). Notify and Deliver
//     must not block (the connection enqueues the event) and may call back
//     into the Manager. Events of successive Trigger calls are delivered in
//     call order; callers that want that order must serialize their Trigger
//     calls (the fsm apply loop does).
//     A watcher removed concurrently with a Trigger may still receive that
//     Trigger's event.
//
//   - The server calls RemoveWatcher when a connection goes away. To make a
//     registration racing with that harmless, a Watcher may also implement
//     Closed() bool (checked under the lock): registrations for a closed
//     watcher are ignored, as ZooKeeper ignores those of a stale connection.
//
//   - Watchers are map keys: a Watcher's dynamic type must be comparable (a
//     pointer to the connection). SessionID is read once, when the watcher
//     first registers, and is used for counters and admin views.
//
//   - Counters (for the herd-effect lab and metrics): notifications sent in
//     total, per event type and per session, Trigger calls and Trigger calls
//     that notified at least one watcher; Options.OnFanout is called once per
//     Trigger call, after delivery, with the number of watchers notified
//     (possibly 0). Per-session counters survive disconnects (a session may
//     reconnect) until ForgetSession or ResetCounters.
//
//   - All methods are safe for concurrent use. Trigger on a path nobody
//     watches does not allocate.
//
// The package imports only the standard library and internal/wire.
package watch
