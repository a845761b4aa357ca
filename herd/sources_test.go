package herd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// fillWindow fills a Result from a finished window between two samples.
func fillWindow(start, end sample) *Result {
	st := &runState{done: true, start: start, end: end, latencies: make([]time.Duration, 10)}
	res := &Result{}
	res.fill(st, false, true)
	return res
}

// A server whose counters cannot be read makes the run count on the
// client side and say why (it used to switch silently).
func TestSourceSaysWhyServerCountersWereNotRead(t *testing.T) {
	now := time.Now()
	res := fillWindow(sample{at: now, srv: serverCount{Err: "mntr on 127.0.0.1:2181: connection refused"}},
		sample{at: now.Add(time.Second), srv: serverCount{Err: "mntr on 127.0.0.1:2181: connection refused"},
			wire: wireCount{Notifications: 10, Requests: 30}})
	require.EqualValues(t, 10, res.Notifications)
	require.True(t, strings.HasPrefix(res.NotificationsSource, "client (server counters unreadable: mntr on"), res.NotificationsSource)
	require.Contains(t, res.RequestsSource, "connection refused")
}

// Server counts well above what the contenders received mean other
// clients of the server were counted: the source says so (a herd-free
// lock measured beside another run read 12 notifications per hand-off).
func TestSourceFlagsOtherClientsOfTheServer(t *testing.T) {
	now := time.Now()
	srv := func(n int64) serverCount { return serverCount{Notifications: n, HasNotifications: true} }
	res := fillWindow(sample{at: now, srv: srv(100)}, sample{at: now.Add(time.Second), srv: srv(825), wire: wireCount{Notifications: 60}})
	require.EqualValues(t, 725, res.Notifications)
	require.Contains(t, res.NotificationsSource, "the contenders received 60")

	res = fillWindow(sample{at: now, srv: srv(100)}, sample{at: now.Add(time.Second), srv: srv(160), wire: wireCount{Notifications: 60}})
	require.Equal(t, "server", res.NotificationsSource, "equal counts: the server's, plainly")
}

// A --root several levels deep is removed with the ancestors the run
// created (it used to leave them), and a root that was there stays.
func TestRootAncestorsRemoved(t *testing.T) {
	srv := zktest.Start(t)
	conn := dialTest(t, srv.Addr())
	ctx := context.Background()
	_, _, err := conn.Create(ctx, "/kept", nil, client.ModePersistent, nil)
	require.NoError(t, err)
	for _, root := range []string{"/review/deep/herd", "/kept/herd"} {
		cfg := testConfig([]Recipe{MutexFair}, 3)
		cfg.Servers, cfg.Root = []string{srv.Addr()}, root
		run(t, cfg)
	}
	kids, _, err := conn.Children(ctx, "/")
	require.NoError(t, err)
	require.NotContains(t, kids, "review")
	kids, _, err = conn.Children(ctx, "/kept")
	require.NoError(t, err)
	require.Empty(t, kids)
}

func dialTest(t *testing.T, addr string) *client.Conn {
	t.Helper()
	c, err := client.Connect(context.Background(), []string{addr})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// A run that measured nothing shows dashes in the table, not zeros that
// read as a measurement.
func TestTableShowsNoFiguresForAFailedRun(t *testing.T) {
	var b strings.Builder
	require.NoError(t, WriteTable(&b, []Result{{Recipe: MutexFair, Contenders: 70, Errors: 1}}))
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	require.Len(t, lines, 2)
	require.NotContains(t, lines[1], "0.0")
	require.Contains(t, lines[1], "-")
}
