package server

import (
	"bufio"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestFrameWriterConcurrentSenders checks that messages from many
// goroutines all arrive whole, each sender's in its order, and that a
// write error reaches later senders.
func TestFrameWriterConcurrentSenders(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	w := newFrameWriter(a, 5*time.Second)
	const senders, each = 8, 200
	got := make(chan fwdRequest, senders*each)
	go func() {
		br := bufio.NewReader(b)
		for {
			var req fwdRequest
			if err := readMsg(br, &req); err != nil {
				close(got)
				return
			}
			got <- req
		}
	}()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				require.NoError(t, w.send(&fwdRequest{ID: uint64(i), Session: int64(s), Cmd: make([]byte, i)}))
			}
		}()
	}
	wg.Wait()
	next := make(map[int64]uint64)
	for range senders * each {
		req := <-got
		require.Equal(t, next[req.Session], req.ID, "sender %d out of order", req.Session)
		require.Len(t, req.Cmd, int(req.ID))
		next[req.Session]++
	}
	require.NoError(t, a.Close())
	require.Error(t, w.send(&fwdRequest{ID: 1}), "a closed connection fails the send")
	require.Error(t, w.send(&fwdRequest{ID: 2}), "and every later one")
}
