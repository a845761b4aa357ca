package bench_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/bench"
	"github.com/paddockzk/paddock/internal/procstat"
	"github.com/paddockzk/paddock/test/zktest"
)

// TestEveryWorkloadAgainstPaddock runs each workload at tiny scale against
// an in-process Paddock server (tickTime 100 ms) and checks that every
// run measured something without errors and cleaned up after itself.
func TestEveryWorkloadAgainstPaddock(t *testing.T) {
	srv := zktest.Start(t)
	cfg := bench.DefaultConfig()
	cfg.Servers = srv.Servers()
	cfg.Workloads = bench.AllWorkloads
	cfg.Clients = []int{1, 3}
	cfg.Contenders = []int{3}
	cfg.Watchers = []int{5}
	cfg.Duration = 0
	cfg.Ops = 20
	cfg.Warmup = 0
	cfg.Keys = 10
	cfg.Znodes = 1500 // two parents of 1,000
	cfg.Sessions = 3
	cfg.SessionTimeout = 200 * time.Millisecond // 2 ticks, the minimum
	cfg.Tick = 100 * time.Millisecond
	cfg.PID = os.Getpid() // the server is in this process
	cfg.RSSSettle = time.Second
	var progress strings.Builder
	cfg.Progress = &progress // written under the progress printer's lock

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"write/create clients=1", "write/set clients=1", "write/create clients=3", "write/set clients=3",
		"read/get clients=1", "read/get clients=3", "mixed/get+set clients=1", "mixed/get+set clients=3",
		"lock-fair/handoff contenders=3", "lock-herd/handoff contenders=3", "fanout/notify watchers=5",
		"expiry/expire sessions=3", "scale/create znodes=1500",
	}
	if len(rep.Results) != len(want) {
		t.Fatalf("got %d results, want %d", len(rep.Results), len(want))
	}
	for i, r := range rep.Results {
		if r.Key() != want[i] {
			t.Errorf("result %d is %s, want %s", i, r.Key(), want[i])
		}
		if r.Errors != 0 {
			t.Errorf("%s: %d errors: %v", r.Key(), r.Errors, r.ErrorSamples)
		}
		if r.Ops <= 0 || r.Latency.Count <= 0 || r.Latency.P50 <= 0 || r.Latency.P50 > r.Latency.P999 {
			t.Errorf("%s: nothing measured: ops %d, latency %+v", r.Key(), r.Ops, r.Latency)
		}
		if r.ServerRSS <= 0 {
			t.Errorf("%s: no server RSS", r.Key())
		}
		switch r.Workload {
		case bench.Write, bench.Read, bench.Mixed, bench.LockFair, bench.LockHerd:
			if r.Ops != cfg.Ops || r.OpsPerSec <= 0 {
				t.Errorf("%s: %d ops at %.0f/s, want exactly --ops %d", r.Key(), r.Ops, r.OpsPerSec, cfg.Ops)
			}
		case bench.Fanout:
			if r.Ops != cfg.Ops*5 || r.Extra["rounds"] != float64(cfg.Ops) {
				t.Errorf("fanout: %d notifications in %v rounds", r.Ops, r.Extra["rounds"])
			}
		case bench.Expiry:
			if r.Ops != 3 || r.Extra["timeout_ms"] != 200 {
				t.Errorf("expiry: %d sessions expired, timeout %v ms", r.Ops, r.Extra["timeout_ms"])
			}
			// Never before T: the server cannot have heard from the client
			// after its last write.
			if r.Extra["ratio_min"] < 1 {
				t.Errorf("expiry: an ephemeral went %.2f T after its session's last contact", r.Extra["ratio_min"])
			}
			t.Logf("expiry: %.2f-%.2f T, %v of 3 within [T, T+2 ticks]", r.Extra["ratio_min"], r.Extra["ratio_max"], r.Extra["in_bounds"])
		case bench.Scale:
			if r.Ops != 1500 {
				t.Errorf("scale: created %d", r.Ops)
			}
			for _, k := range []string{"rss_per_znode_bytes", "rss_anon_per_znode_bytes", "rss_file_per_znode_bytes", "rss_peak_per_znode_bytes"} {
				if _, ok := r.Extra[k]; !ok {
					t.Errorf("scale: no %s: %v", k, r.Extra)
				}
			}
		}
	}
	if !strings.Contains(progress.String(), "write/create clients=1") {
		t.Errorf("no per-run progress lines:\n%s", progress.String())
	}

	// Every run deleted its tree; only the common root is left.
	if tree := srv.Tree(); len(tree) != 1 || tree[0].Path != cfg.Root {
		var paths []string
		for _, n := range tree {
			paths = append(paths, n.Path)
		}
		t.Errorf("left behind: %v", paths)
	}
	// And closed (or abandoned to expiry) every session.
	deadline := time.Now().Add(5 * time.Second)
	for len(srv.Sessions()) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open", len(srv.Sessions()))
		}
		time.Sleep(20 * time.Millisecond) // polling a condition with a deadline
	}

	var table strings.Builder
	if err := bench.WriteTable(&table, rep.Results); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", table.String())
}

// TestAgainstCluster runs the workloads whose clients meet through
// different servers against an in-process 3-node cluster: each client uses
// one node, so what one creates must be visible to the others (sync).
func TestAgainstCluster(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	cfg := bench.DefaultConfig()
	cfg.Servers = c.Servers()
	cfg.Workloads = []string{bench.Read, bench.Mixed, bench.LockFair, bench.LockHerd, bench.Fanout, bench.Expiry}
	cfg.Clients = []int{3}
	cfg.Contenders = []int{3}
	cfg.Watchers = []int{6}
	cfg.Duration, cfg.Ops, cfg.Warmup = 0, 10, 0
	cfg.Keys = 10
	cfg.Sessions = 3
	cfg.SessionTimeout = 200 * time.Millisecond
	cfg.Tick = 100 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != 6 {
		t.Fatalf("got %d results", len(rep.Results))
	}
	for _, r := range rep.Results {
		if r.Errors != 0 || r.Ops <= 0 {
			t.Errorf("%s: %d ops, %d errors: %v", r.Key(), r.Ops, r.Errors, r.ErrorSamples)
		}
	}
}

// With --cpu-pid the closed-loop and lock runs report the CPU time the
// named processes spent in their measured window (here this process,
// which holds the server and the clients), per operation; a process that
// cannot be read leaves it uncounted rather than failing the run.
func TestServerCPUPerOperation(t *testing.T) {
	srv := zktest.Start(t)
	cfg := bench.DefaultConfig()
	cfg.Servers = srv.Servers()
	cfg.Workloads = []string{bench.Read, bench.LockFair}
	cfg.Clients = []int{3}
	cfg.Contenders = []int{3}
	cfg.Keys = 10
	// Long enough for several 10 ms ticks of CPU: three clients in a
	// closed loop keep this process busy.
	cfg.Duration, cfg.Warmup = 300*time.Millisecond, 50*time.Millisecond
	cfg.CPUPIDs = []int{os.Getpid()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	before, err := procstat.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	during, err := procstat.CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	during -= before
	if len(rep.Results) != 2 {
		t.Fatalf("got %d results", len(rep.Results))
	}
	var counted float64
	for _, r := range rep.Results {
		if r.Errors != 0 || r.Ops <= 0 {
			t.Fatalf("%s: %d ops, %d errors: %v", r.Key(), r.Ops, r.Errors, r.ErrorSamples)
		}
		if r.ServerCPUSeconds <= 0 {
			t.Errorf("%s: no CPU counted", r.Key())
		}
		counted += r.ServerCPUSeconds
		if per := r.ServerCPUSeconds * 1e6 / float64(r.Ops); r.ServerCPUPerOp < per*0.99 || r.ServerCPUPerOp > per*1.01 {
			t.Errorf("%s: %.1f µs/op, want %.1f", r.Key(), r.ServerCPUPerOp, per)
		}
		t.Logf("%s: %.0f ops, %.2f s CPU, %.1f µs/op", r.Key(), float64(r.Ops), r.ServerCPUSeconds, r.ServerCPUPerOp)
	}
	// Each run counts its own window only: together no more than the
	// whole Run spent (plus a 10 ms tick at each end of each window), not
	// the process's time since it started.
	if limit := during.Seconds() + 0.04; counted > limit {
		t.Errorf("the runs counted %.2f s of CPU; the whole Run spent %.2f s", counted, during.Seconds())
	}
	if rep.Meta.Settings["cpu_pids"] == "" {
		t.Error("the settings do not record the counted processes")
	}

	cfg.Workloads = []string{bench.Read}
	cfg.CPUPIDs = []int{1 << 30} // no such process
	rep, err = bench.Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Errors != 0 || r.Ops <= 0 || r.ServerCPUSeconds != 0 || r.ServerCPUPerOp != 0 {
		t.Errorf("unreadable process: %d ops, %d errors, %.3f s CPU", r.Ops, r.Errors, r.ServerCPUSeconds)
	}

	cfg.CPUPIDs = []int{0}
	if _, err := bench.Run(ctx, cfg); err == nil {
		t.Error("a process id of 0 was accepted")
	}
}
