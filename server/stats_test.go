package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// Latencies are whole milliseconds of a millisecond clock, as ZooKeeper
// counts them: requests of 0.3 ms count 1 when they cross a millisecond
// boundary and 0 otherwise, so the average is about 0.3 while min and max
// are 0 and 1, never an average above the maximum (stat printed
// 0/0.0489/0 when min/max were truncated and the average was not).
func TestLatencyStatsAsZooKeeper(t *testing.T) {
	var l latencyStats
	base := clockEpoch.Add(time.Hour)
	for i := range 1000 {
		start := base.Add(time.Duration(i) * 37 * time.Microsecond)
		l.observe(start, start.Add(300*time.Microsecond))
	}
	lo, avg, hi := l.snapshot()
	require.Equal(t, int64(0), lo)
	require.Equal(t, int64(1), hi)
	require.InDelta(t, 0.3, avg, 0.02)
	last, clo, cavg, chi := l.connSnapshot()
	require.LessOrEqual(t, last, chi)
	require.Equal(t, []int64{0, 0, 1}, []int64{clo, cavg, chi})

	l.reset()
	l.observe(base, base.Add(2500*time.Microsecond))
	lo, avg, hi = l.snapshot()
	require.LessOrEqual(t, float64(lo), avg)
	require.LessOrEqual(t, avg, float64(hi))
	require.Contains(t, []int64{2, 3}, hi)
}

// cons shows a handshake (lop=SESS, lresp) as soon as the client has its
// reply: the statistics are counted before the reply is written, as every
// reply's are (test/diff's TestConsFieldsAfterConnectAndCrst read lop=NA
// right after connecting now and then).
func TestConsShowsTheHandshakeOnceItsReplyArrives(t *testing.T) {
	written := make(chan struct{})
	srv := attachServer(t, func(cfg *Config) {
		cfg.hooks = &testHooks{afterHandshakeReply: func() { <-written }}
	})
	nc, br := dialRaw(t, srv.Addr().String())
	send(t, nc, &wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	var cr wire.ConnectResponse
	readRecord(t, br, &cr)
	cons := srv.cons() // while the handshake's goroutine is held just after its write
	close(written)
	line := ""
	for _, l := range strings.Split(cons, "\n") {
		if strings.Contains(l, fmt.Sprintf("sid=0x%x,", cr.SessionID)) {
			line = l
		}
	}
	require.NotEmpty(t, line, "no cons line for the session in %q", cons)
	require.Contains(t, line, "lop=SESS,")
	require.NotContains(t, line, "lresp=0,")
}
