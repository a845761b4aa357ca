package herd

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"slices"
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

// A run that measured nothing, beside runs that did, leaves its figures
// empty in the CSV and says measured=false in the JSON (they were zeros
// that read as a measurement).
func TestFailedRunHasNoFiguresInCSVOrJSON(t *testing.T) {
	now := time.Now()
	good := fillWindow(sample{at: now}, sample{at: now.Add(time.Second), wire: wireCount{Notifications: 10, Requests: 30}})
	require.True(t, good.Measured)
	good.Recipe, good.Contenders = MutexFair, 10
	failed := Result{Recipe: MutexFair, Contenders: 50, Errors: 1, ErrorSamples: []string{"stalled"}}
	var b strings.Builder
	require.NoError(t, WriteCSV(&b, []Result{*good, failed}))
	rows, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	col := func(name string) int { return slices.Index(csvHeader, name) }
	for _, name := range []string{"notifications", "notifications_per_handoff", "latency_p50_ms", "seconds"} {
		require.NotEmpty(t, rows[1][col(name)], name)
		require.Empty(t, rows[2][col(name)], name)
	}
	require.Equal(t, "0", rows[2][col("handoffs")])
	require.Equal(t, "1", rows[2][col("errors")])
	require.Equal(t, "50", rows[2][col("contenders")])

	var js strings.Builder
	require.NoError(t, (&Report{Results: []Result{*good, failed}}).WriteJSON(&js))
	var back Report
	require.NoError(t, json.Unmarshal([]byte(js.String()), &back))
	require.True(t, back.Results[0].Measured)
	require.False(t, back.Results[1].Measured)
}

// CPU per hand-off carries no more digits than the 10 ms ticks it was
// counted in (it printed 3 whatever the count).
func TestCPUPerHandoffDigitsFollowTicks(t *testing.T) {
	r := Result{Handoffs: 500, HasCPU: true, CPUResolutionMs: 10}
	for _, c := range []struct {
		cpuSec float64
		want   string
	}{
		{0.03, "0.06ms"},  // 3 ticks: one digit
		{0.37, "0.74ms"},  // 37 ticks: two
		{4.56, "9.12ms"},  // 456 ticks: three
		{0, "<0.02ms"},    // no tick: below one tick per run
		{12.34, "24.7ms"}, // 1,234 ticks: three
	} {
		r.CPUSeconds = c.cpuSec
		r.CPUPerHandoffMs = c.cpuSec * 1000 / float64(r.Handoffs)
		require.Equal(t, c.want, r.cpuPerHandoff(), "%v s", c.cpuSec)
	}
	r.CPUResolutionMs, r.CPUSeconds, r.CPUPerHandoffMs = 0, 0.03, 0.06 // getrusage: finer
	require.Equal(t, "0.06ms", r.cpuPerHandoff())
}

// The notifications chart draws no K-1 line for contenders sharing
// sessions (they are notified once per session), and a zero is drawn on
// the bottom edge instead of vanishing from the log scale.
func TestChartReferenceAndZeros(t *testing.T) {
	res := []Result{
		{Recipe: MutexUnfair, Contenders: 10, Handoffs: 5, NotificationsPerHandoff: 9},
		{Recipe: MutexFair, Contenders: 10, Handoffs: 5, NotificationsPerHandoff: 0},
		{Recipe: MutexFair, Contenders: 50, Handoffs: 5, NotificationsPerHandoff: 1},
		{Recipe: MutexFair, Contenders: 200, Errors: 1}, // measured nothing: not drawn
	}
	y := func(r Result) float64 { return r.NotificationsPerHandoff }
	rep := &Report{Results: res, Config: ReportConfig{Mode: Sessions}}
	ks, ref, all := rep.chartData(y, true)
	require.Equal(t, []int{10, 50, 200}, ks)
	require.Len(t, ref, 2)
	require.Len(t, all, 2)
	require.Equal(t, []float64{10}, all[1].zeros)
	require.Len(t, all[1].pts, 1)

	rep.Config.Mode = Goroutines
	_, ref, _ = rep.chartData(y, true)
	require.Nil(t, ref, "K-1 drawn for contenders sharing sessions")
	_, err := rep.Charts()
	require.NoError(t, err)
}

// A report names the version the server gave (a report against Apache
// ZooKeeper did not say which release it measured).
func TestReportNamesServerVersion(t *testing.T) {
	srv := zktest.Start(t)
	cfg := testConfig([]Recipe{MutexFair}, 3)
	cfg.Servers = []string{srv.Addr()}
	rep := run(t, cfg)
	require.Contains(t, rep.ServerVersion, "paddock")
	var b strings.Builder
	require.NoError(t, rep.WriteNotes(&b))
	require.Contains(t, b.String(), "(version "+rep.ServerVersion+")")
}

// A server that dies during a run ends that run within a session timeout
// (not the stall timeout) and the runs after it are not started (each cost
// the stall timeout and its connects' timeout before).
func TestServerGoneEndsTheRuns(t *testing.T) {
	serverGoneEndsTheRuns(t, []int{3, 5}, 4) // the admin session and the first run's three
}

// Gone while the first run's forty sessions open: the run fails to open
// them, and ends the runs after it as a loss during a run does, instead
// of each run after it failing to open its own. (Stopped with the admin
// session alone, the server may go before Run has made its base node,
// which fails Run itself.)
func TestServerGoneWhileSessionsOpen(t *testing.T) {
	serverGoneEndsTheRuns(t, []int{40, 50}, 2) // the admin session and a contender's
}

// serverGoneEndsTheRuns stops the server once it holds sessions
// sessions, with four runs to go.
func serverGoneEndsTheRuns(t *testing.T, contenders []int, sessions int) {
	srv := zktest.Start(t)
	cfg := testConfig([]Recipe{MutexFair, MutexUnfair}, contenders...)
	cfg.Servers = []string{srv.Addr()}
	cfg.Handoffs = 1_000_000 // the first run lasts until the server goes
	cfg.Stall = time.Hour
	cfg.SessionTimeout = 2 * time.Second
	var rep *Report
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		rep, err = Run(ctx, cfg)
	}()
	waitFor(t, "the sessions", func() bool { return len(srv.Sessions()) >= sessions })
	srv.Stop()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("Run did not return after the server was stopped")
	}
	require.ErrorIs(t, err, errServerLost)
	require.ErrorContains(t, err, "lost the server: 3 runs not started")
	require.Len(t, rep.Results, 1)
	require.False(t, rep.Results[0].Measured)
	require.Contains(t, strings.Join(rep.Results[0].ErrorSamples, ";"), "lost the server")
}

// Against a server named by --server, the requests counted from its
// zk_packets_received equal the contenders' own count once the pings,
// handshakes and the mntr commands reading the counts are taken off:
// Paddock counts handshakes and four-letter words as ZooKeeper does, so
// both are corrected alike (Paddock's counts were taken as they were,
// one packet per server too many per window).
func TestServerRequestCountMatchesTheContenders(t *testing.T) {
	srv := zktest.Start(t)
	cfg := testConfig([]Recipe{MutexFair, MutexUnfair}, 3)
	cfg.Servers = []string{srv.Addr()}
	for _, r := range run(t, cfg).Results {
		require.Equal(t, "server (packets received minus pings and handshakes)", r.RequestsSource, r.Recipe)
		require.Equal(t, r.ClientRequests, r.Requests, "%s: server count against the contenders'", r.Recipe)
	}
}
