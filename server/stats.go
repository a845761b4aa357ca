package server

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// opDeleteContainer is the reaper's conditional delete.
const opDeleteContainer = wire.OpDeleteContainer

type serverStats struct {
	received      atomic.Int64
	sent          atomic.Int64
	rejected      atomic.Int64
	slowConsumers atomic.Int64
	latency       latencyStats
}

type connStats struct {
	received      atomic.Int64
	sent          atomic.Int64
	notifications atomic.Int64
	lastOp        atomic.Int32
	lastXid       atomic.Int32
	// lastZxid is the zxid in the header of the last reply (-1 after
	// crst), lastResp when it was sent (Unix ms; 0 after crst).
	lastZxid atomic.Int64
	lastResp atomic.Int64
	latency  latencyStats
}

// reset is ZooKeeper's ServerCnxn.resetStats (crst): counts, the last
// operation, xid, zxid and response time, and the latencies.
func (s *connStats) reset() {
	s.received.Store(0)
	s.sent.Store(0)
	s.lastOp.Store(opNone)
	s.lastXid.Store(-1)
	s.lastZxid.Store(-1)
	s.lastResp.Store(0)
	s.latency.reset()
}

// responded records a reply: its zxid, its time and its latency.
func (s *connStats) responded(start, end time.Time, zxid int64) {
	s.lastZxid.Store(zxid)
	s.lastResp.Store(end.UnixMilli())
	s.latency.observe(start, end)
}

// opNone is no operation yet (cons: lop=NA).
const opNone = int32(-1 << 31)

// latencyStats keeps request latencies as ZooKeeper keeps them: in whole
// milliseconds, each the difference of two readings of a millisecond
// clock (Time.currentElapsedTime), so a request that crosses a
// millisecond boundary counts 1 and one that does not counts 0. The
// average is then true over many requests while min and max are whole
// numbers, and the average is never above the maximum (it was when
// min/max were truncated from microseconds and the average was not).
type latencyStats struct {
	mu                     sync.Mutex
	min, max, total, count int64
	last                   int64
}

// clockEpoch is the origin of the millisecond clock latencies are read
// from (monotonic).
var clockEpoch = time.Now()

func clockMs(t time.Time) int64 { return t.Sub(clockEpoch).Milliseconds() }

func (l *latencyStats) observe(start, end time.Time) {
	d := max(clockMs(end)-clockMs(start), 0)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 || d < l.min {
		l.min = d
	}
	l.max = max(l.max, d)
	l.total += d
	l.count++
	l.last = d
}

// snapshot returns min/avg/max in milliseconds, as ZooKeeper reports them.
func (l *latencyStats) snapshot() (minMs int64, avgMs float64, maxMs int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		return 0, 0, 0
	}
	return l.min, float64(l.total) / float64(l.count), l.max
}

// connSnapshot returns the last, min, average and max latency as cons
// prints them: whole milliseconds.
func (l *latencyStats) connSnapshot() (last, minMs, avg, maxMs int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		return 0, 0, 0, 0
	}
	return l.last, l.min, l.total / l.count, l.max
}

func (l *latencyStats) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.min, l.max, l.total, l.count, l.last = 0, 0, 0, 0, 0
}

func hexID(id int64) string { return fmt.Sprintf("0x%x", id) }
