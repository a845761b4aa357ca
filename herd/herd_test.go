package herd

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
	"github.com/paddockzk/paddock/test/zktest"
)

func testConfig(recipes []Recipe, ks ...int) Config {
	cfg := DefaultConfig()
	cfg.Recipes = recipes
	cfg.Contenders = ks
	cfg.Handoffs = 10
	cfg.Hold = 20 * time.Millisecond // lets every woken waiter settle, even under -race
	return cfg
}

func run(t *testing.T, cfg Config) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		t.Logf("%-16s K=%-3d %2d hand-offs: %5.2f notifications (client %5.2f), %5.1f requests per hand-off, p50 %.2fms",
			r.Recipe, r.Contenders, r.Handoffs, r.NotificationsPerHandoff, r.ClientNotificationsPerHandoff,
			r.RequestsPerHandoff, r.LatencyP50Ms)
		if r.Errors > 0 {
			t.Errorf("%s K=%d: %d errors: %v", r.Recipe, r.Contenders, r.Errors, r.ErrorSamples)
		}
		if r.Handoffs < cfg.Handoffs {
			t.Errorf("%s K=%d: %d hand-offs measured, want at least %d", r.Recipe, r.Contenders, r.Handoffs, cfg.Handoffs)
		}
	}
	return rep
}

// The expected shape: a herd-prone recipe sends about K-1 notifications
// per hand-off (every other contender is woken), a herd-free one about 1.
// The naive read/write lock pays up to two herds per hand-off: every
// waiter watches the children, so the release wakes them all, and so does
// the creation of the node of the contender that lines up again.
func TestShape(t *testing.T) {
	rep := run(t, testConfig(AllRecipes, 5, 10))
	for _, r := range rep.Results {
		k := float64(r.Contenders)
		lo, hi := 0.5, 1.5
		switch {
		case r.Recipe == RWNaive:
			lo, hi = k-2, 2*k
		case r.HerdProne:
			lo, hi = k-2, k
		}
		for _, v := range []float64{r.NotificationsPerHandoff, r.ClientNotificationsPerHandoff} {
			if v < lo || v > hi {
				t.Errorf("%s K=%d: %.2f notifications per hand-off, want [%g, %g]", r.Recipe, r.Contenders, v, lo, hi)
			}
		}
		// Both counts agree. A read/write lock's readers go on acquiring
		// and releasing while the counters are read, so each edge of the
		// window may cut through a herd (the naive lock wakes up to 2K
		// waiters per hand-off) that the server counts on one side of the
		// edge and the clients on the other: at most one herd per edge.
		slack := int64(0)
		if r.Recipe.isRW() {
			slack = r.Notifications/10 + 2*2*int64(r.Contenders)
		}
		if d := r.Notifications - r.ClientNotifications; r.NotificationsSource != "server" || d > slack || -d > slack {
			t.Errorf("%s K=%d: server counted %d notifications (%s), the contenders' connections %d",
				r.Recipe, r.Contenders, r.Notifications, r.NotificationsSource, r.ClientNotifications)
		}
		// Every woken waiter asks again: herd-prone recipes also send
		// requests in proportion to K.
		if r.HerdProne && r.RequestsPerHandoff < k-1 || !r.HerdProne && r.RequestsPerHandoff > 10 {
			t.Errorf("%s K=%d: %.1f requests per hand-off", r.Recipe, r.Contenders, r.RequestsPerHandoff)
		}
		if r.LatencyP50Ms <= 0 || r.LatencyP99Ms < r.LatencyP50Ms || !r.HasCPU {
			t.Errorf("%s K=%d: latency p50 %v p99 %v, cpu %v", r.Recipe, r.Contenders, r.LatencyP50Ms, r.LatencyP99Ms, r.HasCPU)
		}
	}
}

// With writers only, the naive lock's two herds per hand-off, and the
// herd-free lock's single notification, are plain.
func TestShapeWritersOnly(t *testing.T) {
	cfg := testConfig([]Recipe{RWNaive, RWHerdFree}, 8)
	cfg.Readers = 0
	rep := run(t, cfg)
	for _, r := range rep.Results {
		k := float64(r.Contenders)
		lo, hi := 0.9, 1.1
		if r.HerdProne {
			lo, hi = k-1, 2*(k-1)
		}
		if v := r.NotificationsPerHandoff; v < lo || v > hi {
			t.Errorf("%s K=%d, writers only: %.2f notifications per hand-off, want [%g, %g]", r.Recipe, r.Contenders, v, lo, hi)
		}
	}
}

// Contenders sharing sessions: ZooKeeper keeps one watch per connection
// and path, so a herd costs one notification per other connection, but
// every woken contender still sends its requests.
func TestGoroutinesMode(t *testing.T) {
	cfg := testConfig([]Recipe{MutexUnfair, MutexFair}, 12)
	cfg.Mode, cfg.Connections = Goroutines, 3
	rep := run(t, cfg)
	for _, r := range rep.Results {
		if r.Connections != 3 {
			t.Errorf("%s: %d connections, want 3", r.Recipe, r.Connections)
		}
		if r.NotificationsPerHandoff > 3 {
			t.Errorf("%s: %.2f notifications per hand-off over 3 connections", r.Recipe, r.NotificationsPerHandoff)
		}
		if r.HerdProne && r.RequestsPerHandoff < 11 {
			t.Errorf("%s: %.1f requests per hand-off, want the herd's (>= K-1)", r.Recipe, r.RequestsPerHandoff)
		}
	}
}

// The herd-free read/write lock: with a writer holding, R readers queued,
// then two writers, the first writer's release wakes the R readers at
// once (one notification each, none to the writers); the readers'
// releases, in order, wake only the writer right behind them, once, when
// the last one goes; the second writer hears nothing.
func TestRWMutexWakesReadersTogetherAndOneWriter(t *testing.T) {
	const R = 4
	srv := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	connect := func() (*client.Conn, int64) {
		c, err := client.Connect(ctx, srv.Servers())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, c.SessionID()
	}
	watches := func() int { return srv.Server().Watches().Stats().DataWatches }
	sent := func(sid int64) uint64 { return srv.Server().Watches().SessionNotifications(sid) }
	const path = "/rw"

	c1, _ := connect()
	w1 := recipes.NewRWMutex(c1, path)
	if _, err := w1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the holder's watch", func() bool { return watches() == 1 })

	type waiter struct {
		rw   *recipes.RWMutex
		sid  int64
		held chan struct{}
	}
	start := func(write bool) waiter {
		c, sid := connect()
		w := waiter{rw: recipes.NewRWMutex(c, path), sid: sid, held: make(chan struct{})}
		go func() {
			var err error
			if write {
				_, err = w.rw.Lock(ctx)
			} else {
				_, err = w.rw.RLock(ctx)
			}
			if err != nil {
				t.Error(err)
			}
			close(w.held)
		}()
		return w
	}
	var readers []waiter
	for i := range R {
		readers = append(readers, start(false))
		waitFor(t, "a reader to queue", func() bool { return watches() == 1+i+1 })
	}
	w2 := start(true)
	waitFor(t, "the first trailing writer to queue", func() bool { return watches() == R+2 })
	w3 := start(true)
	waitFor(t, "the second trailing writer to queue", func() bool { return watches() == R+3 })

	base := map[int64]uint64{}
	all := append([]waiter{w2, w3}, readers...)
	for _, w := range all {
		base[w.sid] = sent(w.sid)
	}
	delta := func(w waiter) uint64 { return sent(w.sid) - base[w.sid] }

	if err := w1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	for i, r := range readers {
		waitClosed(t, fmt.Sprintf("reader %d", i), r.held)
	}
	// Each reader holds with its own monitor watch; the writers still
	// watch their predecessors.
	waitFor(t, "the readers to hold", func() bool { return watches() == R+2 })
	var toReaders uint64
	for _, r := range readers {
		toReaders += delta(r)
	}
	if toReaders != R || delta(w2) != 0 || delta(w3) != 0 {
		t.Fatalf("writer's release: %d notifications to %d readers, %d and %d to the writers; want %d, 0, 0",
			toReaders, R, delta(w2), delta(w3), R)
	}

	for i, r := range readers {
		if err := r.rw.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		if i < R-1 {
			if d := delta(w2); d != 0 {
				t.Fatalf("after %d of %d readers released, the writer got %d notifications", i+1, R, d)
			}
			select {
			case <-w2.held:
				t.Fatalf("the writer acquired with %d readers holding", R-i-1)
			default:
			}
		}
	}
	waitClosed(t, "the first trailing writer", w2.held)
	if delta(w2) != 1 || delta(w3) != 0 {
		t.Fatalf("readers' releases: %d notifications to the next writer, %d to the one behind it; want 1, 0", delta(w2), delta(w3))
	}
	for _, r := range readers {
		if d := delta(r); d != 1 {
			t.Errorf("reader session %#x: %d notifications in all, want 1", r.sid, d)
		}
	}
	if err := w2.rw.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitClosed(t, "the second trailing writer", w3.held)
	if err := w3.rw.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// The command's files: CSV, JSON, and both charts as PNG and SVG.
func TestWriteFiles(t *testing.T) {
	cfg := testConfig([]Recipe{MutexUnfair, MutexFair}, 3, 6)
	cfg.Handoffs = 4
	rep := run(t, cfg)
	dir := filepath.Join(t.TempDir(), "out")
	files, err := rep.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{CSVFile, JSONFile, NotificationsChartPNG, NotificationsChartSVG, LatencyChartPNG, LatencyChartSVG}
	if len(files) != len(want) {
		t.Errorf("wrote %v, want %v", files, want)
	}
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty", name)
		}
		return b
	}
	rows, err := csv.NewReader(bytes.NewReader(read(CSVFile))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(rep.Results) || len(rows[0]) != len(csvHeader) {
		t.Errorf("CSV: %d rows of %d columns, want %d of %d", len(rows), len(rows[0]), 1+len(rep.Results), len(csvHeader))
	}
	var back Report
	if err := json.Unmarshal(read(JSONFile), &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Results) != 4 || len(back.Results[0].HandoffLatenciesMs) != back.Results[0].Handoffs {
		t.Errorf("JSON: %d results, first with %d latencies for %d hand-offs", len(back.Results),
			len(back.Results[0].HandoffLatenciesMs), back.Results[0].Handoffs)
	}
	for _, png := range []string{NotificationsChartPNG, LatencyChartPNG} {
		if b := read(png); !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
			t.Errorf("%s is not a PNG", png)
		}
	}
	for _, svg := range []string{NotificationsChartSVG, LatencyChartSVG} {
		b := read(svg)
		if !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("contenders")) {
			t.Errorf("%s is not an SVG with labelled axes", svg)
		}
	}
	var table strings.Builder
	if err := WriteTable(&table, rep.Results); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(table.String(), "\n"); n != 1+len(rep.Results) || !strings.Contains(table.String(), "mutex-unfair") {
		t.Errorf("table:\n%s", table.String())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
