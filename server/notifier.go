package server

import (
	"errors"
	"net"
	"os"
	"runtime"
	"sync"
	"syscall"
	"time"
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
		for {
			c := n.next()
			if c == nil {
				break
			}
			n.writer(c)
		}
	}
}

// add queues c for a write.
func (n *notifier) add(c *conn) {
	n.mu.Lock()
	n.queue = append(n.queue, c)
	n.mu.Unlock()
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// next takes one queued connection, or nil. When more remain it passes
// the wake-up on, so a second goroutine joins a large fan-out.
func (n *notifier) next() *conn {
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.queue) == 0 {
		if cap(n.queue) > notifyQueueKeep {
			n.queue = nil
		}
		return nil
	}
	c := n.queue[0]
	n.queue[0] = nil
	n.queue = n.queue[1:]
	if len(n.queue) > 0 {
		select {
		case n.wake <- struct{}{}:
		default:
		}
	}
	return c
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
