package server

import "time"

// Timestamps the server keeps in atomics (since when it has known no
// leader, until when a peer's commit push backs off, when it last logged
// a herd, when its removal committed) are compared as durations, so they
// come from the monotonic clock: a wall-clock step (NTP, an operator's
// date, a VM resumed) moves none of them. Node times (ctime, mtime) and
// TTLs stay on the wall clock, as in ZooKeeper.

// monoStart anchors monoNow; it carries a monotonic reading.
var monoStart = time.Now()

// monoNow is the monotonic time since the process started, in
// nanoseconds, never 0 (0 means "not set" where it is stored).
func monoNow() int64 {
	return int64(time.Since(monoStart)) + 1
}

// monoTime turns a monoNow reading back into a time.Time with a
// monotonic reading, for deadlines.
func monoTime(mono int64) time.Time {
	return monoStart.Add(time.Duration(mono - 1))
}
