package integration_test

import (
	"bytes"
	"net"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// go-zookeeper (v1.0.4 and later) reports StateHasSession before its
// connection goroutine (Conn.loop) replays the watches it holds with
// setWatches, and it does so on the first connection too. A test that
// arms a watch in that window has it replayed with the zxid of its own
// read, and a change made in between fires twice: once for the armed
// watch, once from the replay (ZooKeeper's DataTree.setWatches does the
// same). connectWith therefore returns only once the loop goroutine has
// passed the replay, parked in its wait for the connection to end.

// loopTracker records which goroutine runs a go-zookeeper Conn's loop:
// the dialer is called from it.
type loopTracker struct{ id chan int64 }

func newLoopTracker() *loopTracker { return &loopTracker{id: make(chan int64, 1)} }

// dialer wraps d (nil: net.DialTimeout) to record the calling goroutine.
func (l *loopTracker) dialer(d zk.Dialer) zk.Dialer {
	if d == nil {
		d = net.DialTimeout
	}
	return func(network, address string, timeout time.Duration) (net.Conn, error) {
		select {
		case l.id <- goroutineID():
		default:
		}
		return d(network, address, timeout)
	}
}

// waitSettled waits until the loop goroutine has replayed its watches
// (none, on a first connection) and waits for the connection to end.
func (l *loopTracker) waitSettled(t testing.TB) {
	t.Helper()
	var id int64
	select {
	case id = <-l.id:
	default:
		require.FailNow(t, "go-zookeeper connected without calling the dialer")
	}
	deadline := time.Now().Add(waitTimeout)
	for !loopParked(id) {
		require.False(t, time.Now().After(deadline),
			"go-zookeeper's connection goroutine did not reach its wait (has Conn.loop changed?)")
		time.Sleep(time.Millisecond) // polling interval, under the deadline above
	}
}

// goroutineID is the calling goroutine's id, from its stack header.
func goroutineID() int64 {
	var buf [64]byte
	b := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	id, _ := strconv.ParseInt(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// loopParked reports whether goroutine id is in go-zookeeper's Conn.loop,
// waiting on its WaitGroup (after sendSetWatches).
func loopParked(id int64) bool {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	head := []byte("goroutine " + strconv.FormatInt(id, 10) + " [")
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.HasPrefix(g, head) {
			return bytes.Contains(g, []byte("sync.(*WaitGroup).Wait")) && bytes.Contains(g, []byte("zk.(*Conn).loop"))
		}
	}
	return false
}
