package server

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/watch"
)

// notifier writes watch notifications to their connections' sockets.
//
// A change watched by many sessions queues one notification on each of
// their connections (conn.Notify, on Raft's apply goroutine). Waking each
// connection's writer goroutine to write it costs a goroutine hand-off,
// a park and a write deadline per watcher; with 1,000 watchers that is
// most of the server's work besides the writes themselves. Instead, the
// notifier's few goroutines take the connections from one queue and try
// a non-blocking write of each one's outbound buffer, in a loop. A
// connection whose socket cannot take it all at once (a full send
// buffer), whose writer is busy, or that cannot be written raw (TLS)
// goes back to its own writer goroutine, which writes with the write
// deadline as before. Whoever writes holds conn.wmu, and always writes
// the buffer from its start, so frames keep their order.
type notifier struct {
	mu     sync.Mutex
	queue  []*conn
	wake   chan struct{}
	done   <-chan struct{}
	writer func(*conn)
}

// notifyWriters is the number of notifier goroutines: one per core (at
// least two), so a large fan-out writes on every core while Raft's apply
// goroutine is still queueing. Each one past the first joins only while
// the queue holds more than one connection (see next).
func notifyWriters() int { return max(2, runtime.GOMAXPROCS(0)) }

func newNotifier(done <-chan struct{}) *notifier {
	return &notifier{wake: make(chan struct{}, 1), done: done, writer: (*conn).tryFlush}
}

// run is one notifier goroutine.
func (n *notifier) run() {
	for {
		select {
		case <-n.done:
			return
		case <-n.wake:
		}
		var mine [notifyTake]*conn
		for {
			cs := n.take(mine[:0])
			if len(cs) == 0 {
				break
			}
			for _, c := range cs {
				n.writer(c)
			}
			clear(cs)
		}
	}
}

// add queues c for a write.
func (n *notifier) add(c *conn) {
	n.mu.Lock()
	n.queue = append(n.queue, c)
	n.mu.Unlock()
	n.poke()
}

// addAll queues cs for writes, under one lock and with one wake-up.
func (n *notifier) addAll(cs []*conn) {
	if len(cs) == 0 {
		return
	}
	n.mu.Lock()
	n.queue = append(n.queue, cs...)
	n.mu.Unlock()
	n.poke()
}

// poke wakes a notifier goroutine unless one is already due to wake.
func (n *notifier) poke() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// take moves up to notifyTake queued connections into buf, at most half
// of the queue (rounded up) so a second goroutine has its share, and
// returns them (none when the queue is empty). When some remain it
// passes the wake-up on, so a second goroutine joins a large fan-out.
func (n *notifier) take(buf []*conn) []*conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 {
		if cap(n.queue) > notifyQueueKeep {
			n.queue = nil
		}
		return buf
	}
	k := min(notifyTake, (len(n.queue)+1)/2)
	buf = append(buf, n.queue[:k]...)
	clear(n.queue[:k])
	n.queue = n.queue[k:]
	if len(n.queue) > 0 {
		n.poke()
	}
	return buf
}

// notifyTake is the most connections a notifier goroutine takes from the
// queue at once: fewer trips through the lock that Raft's apply
// goroutine, queueing, contends for.
const notifyTake = 16

// notifyBatch is how many connections deliver queues before handing
// them to the notifier at once (the first one goes alone, so writing
// starts while the rest are queued).
const notifyBatch = 16

// deliver is the watch registry's Options.Deliver. It runs inside Apply
// (onApply), so every notification is queued before the change is
// readable: the event is encoded once, queued on each watcher's
// connection in order, and the connections go to the notifier in
// batches.
func (s *Server) deliver(ev wire.WatcherEvent, zxid int64, ws []watch.Watcher) {
	frame := encodeNotification(ev, zxid)
	var batch [notifyBatch]*conn
	k, limit := 0, 1
	for _, w := range ws {
		c, ok := w.(*conn)
		if !ok {
			w.Notify(ev, zxid)
			continue
		}
		if !c.queueNotification(frame, zxid) {
			continue
		}
		batch[k] = c
		if k++; k == limit {
			s.notifier.addAll(batch[:k])
			k, limit = 0, notifyBatch
		}
	}
	s.notifier.addAll(batch[:k])
}

// notifyQueueKeep is the largest queue capacity the notifier keeps once
// it has drained (a 10,000-watcher fan-out's queue is left to the GC).
const notifyQueueKeep = 1024

// rawConnOf returns nc's raw connection for non-blocking writes, or nil
// when nc is not a plain TCP connection (TLS, or a test's wrapper).
func rawConnOf(nc net.Conn) syscall.RawConn {
	tc, ok := nc.(*net.TCPConn)
	if !ok {
		return nil
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

// tryFlush writes c's outbound buffer without blocking, or hands it to
// c's writer goroutine when it cannot.
func (c *conn) tryFlush() {
	if c.raw == nil || c.s.gate.closed() || !c.wmu.TryLock() {
		c.signal()
		return
	}
	c.outMu.Lock()
	buf := c.out
	c.out = nil
	c.outMu.Unlock()
	if len(buf) == 0 {
		c.wmu.Unlock()
		return
	}
	n := c.writeNonBlocking(buf)
	if n < len(buf) {
		// The writer goroutine finishes it (or meets the error and closes).
		c.unshift(buf[n:])
		c.wmu.Unlock()
		c.signal()
		return
	}
	c.keepSpare(buf)
	c.wmu.Unlock()
}

// unshift puts an unwritten rest back in front of whatever was queued
// since it was taken.
func (c *conn) unshift(rest []byte) {
	c.outMu.Lock()
	defer c.outMu.Unlock()
	c.out = append(append(make([]byte, 0, len(rest)+len(c.out)), rest...), c.out...)
}

// writeNonBlocking makes one write(2) of buf and returns how much of it
// the socket took (0 on EAGAIN or any error). The writer goroutine's
// last write deadline may have passed on an idle connection, and Go
// refuses any write then: it is cleared (c.wmu is held, so no write is
// under way) and the write tried once more.
func (c *conn) writeNonBlocking(buf []byte) int {
	n, err := c.rawWrite(buf)
	if errors.Is(err, os.ErrDeadlineExceeded) && c.nc.SetWriteDeadline(time.Time{}) == nil {
		n, err = c.rawWrite(buf)
	}
	if err != nil {
		return 0
	}
	return n
}

func (c *conn) rawWrite(buf []byte) (int, error) {
	var n int
	err := c.raw.Write(func(fd uintptr) bool {
		var werr error
		n, werr = syscall.Write(int(fd), buf)
		if werr != nil || n < 0 {
			n = 0
		}
		return true // one attempt: never wait for the socket
	})
	return n, err
}
