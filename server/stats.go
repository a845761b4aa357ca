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
}

// latencyStats keeps min/avg/max request latency in microseconds.
type latencyStats struct {
	mu       sync.Mutex
	min, max time.Duration
	total    time.Duration
	count    int64
}

func (l *latencyStats) observe(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 || d < l.min {
		l.min = d
	}
	if d > l.max {
		l.max = d
	}
	l.total += d
	l.count++
}

// snapshot returns min/avg/max in milliseconds, as ZooKeeper reports them.
func (l *latencyStats) snapshot() (minMs int64, avgMs float64, maxMs int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.count == 0 {
		return 0, 0, 0
	}
	return l.min.Milliseconds(), float64(l.total.Microseconds()) / float64(l.count) / 1000, l.max.Milliseconds()
}

func (l *latencyStats) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.min, l.max, l.total, l.count = 0, 0, 0, 0
}

func hexID(id int64) string { return fmt.Sprintf("0x%x", id) }
