// Package session tracks session liveness: the leader's expiry queue
// (ZooKeeper's ExpiryQueue and SessionTrackerImpl) and the followers'
// batching of touches to the leader.
//
// Contract:
//   - The Tracker only decides when a session is due to expire. Creating,
//     closing and expiring sessions are Raft commands handled elsewhere; the
//     Tracker holds no session state beyond id and timeout.
//   - Only the current leader runs the expirer (Tracker.Run). When a node
//     becomes leader it Adds every session of the replicated state and calls
//     ResetAll, so every session gets a fresh full timeout from that moment;
//     a node that loses leadership stops Run (cancels its context).
//   - The server Adds a session when it is created, Touches it on every
//     request or ping from its clients (and for each id in a batch forwarded
//     by a follower), and Removes it once its close or expire command has
//     been applied.
//   - Run (or Expired) hands each due session out once and marks it
//     expiring: Touch then reports false and the session is not handed out
//     again. It stays tracked until Remove. If the expire proposal fails,
//     Requeue puts it back with a fresh full timeout.
//   - Buckets are a tick apart. A touch at time t of a session with timeout
//     T puts it in the bucket (floor((t+T)/tick)+1)*tick, measured from the
//     Tracker's creation, so it expires within (T, T+tick] of its last touch
//     and the expirer wakes at most once per tick. Touch is O(1) and does not
//     allocate when the session stays in its bucket.
//   - On a follower, a Batcher collects the ids its clients touch and
//     flushes them to the leader every interval (half a tick), as one
//     sorted, duplicate-free batch.
//   - Time comes from a Clock and must be monotonic (RealClock uses
//     time.Now, whose readings carry a monotonic component), so wall-clock
//     jumps never expire a session. ManualClock moves only when advanced, for
//     tests and fake servers.
//   - All methods of Tracker, Batcher and ManualClock are safe for
//     concurrent use. Run a single Run goroutine per Tracker or Batcher.
//     Callbacks (expire, flush) are called without internal locks held and
//     may call back into the Tracker or Batcher.
//
// The package imports nothing from the rest of Paddock.
package session
