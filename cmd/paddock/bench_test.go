package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/bench"
	"github.com/paddockzk/paddock/test/zktest"
)

func TestBenchFlags(t *testing.T) {
	fl := benchFlags{servers: ":2182,zk2", workloads: "read,lock", clients: "2,4", contenders: "5",
		watchers: "1k", znodes: "10k"}
	cfg := bench.DefaultConfig()
	if err := fl.apply(&cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Join(cfg.Servers, ",") != "127.0.0.1:2182,zk2:2181" ||
		strings.Join(cfg.Workloads, ",") != "read,lock-fair,lock-herd" ||
		len(cfg.Clients) != 2 || cfg.Clients[1] != 4 || cfg.Contenders[0] != 5 ||
		cfg.Watchers[0] != 1000 || cfg.Znodes != 10000 || cfg.ScaleClients != 4 {
		t.Errorf("parsed %+v", cfg)
	}
	for _, args := range [][]string{
		{"bench", "--workload", "nope"},
		{"bench", "--server", "host:port"},
		{"bench", "--clients", "0"},
		{"bench", "--contenders", "1", "--workload", "lock-fair"},
		{"bench", "--znodes", "lots", "--workload", "scale"},
		{"bench", "compare"},
	} {
		if _, err := runRoot(t, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

func TestBenchCommandAndCompare(t *testing.T) {
	srv := zktest.Start(t)
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "standalone")
	for _, label := range []string{"zookeeper", "paddock"} {
		if err := os.MkdirAll(filepath.Join(cfgDir, label), 0o755); err != nil {
			t.Fatal(err)
		}
		out, err := runRoot(t, "bench", "--server", srv.Servers()[0], "--workload", "read,mixed",
			"--clients", "2", "--ops", "30", "--warmup", "0", "--quiet", "--label", label,
			"--json", filepath.Join(cfgDir, label, "read.json"))
		if err != nil {
			t.Fatalf("bench: %v\n%s", err, out)
		}
		if !strings.Contains(out, "read/get") || !strings.Contains(out, "mixed/get+set") || !strings.Contains(out, "P99.9") {
			t.Errorf("bench output:\n%s", out)
		}
	}
	rep, err := bench.ReadReport(filepath.Join(cfgDir, "paddock", "read.json"))
	if err != nil {
		t.Fatal(err)
	}
	if rep.Meta.Label != "paddock" || len(rep.Results) != 2 || rep.Results[0].Ops != 30 {
		t.Errorf("report: %+v", rep)
	}
	md := filepath.Join(dir, "cmp.md")
	out, err := runRoot(t, "bench", "compare", "--markdown", md, "--json", filepath.Join(dir, "cmp.json"), cfgDir)
	if err != nil {
		t.Fatalf("compare: %v\n%s", err, out)
	}
	if !strings.Contains(out, "== standalone (ratios are paddock/zookeeper)") || !strings.Contains(out, "read/get") {
		t.Errorf("compare output:\n%s", out)
	}
	if b, err := os.ReadFile(md); err != nil || !strings.Contains(string(b), "| read/get | clients=2 |") {
		t.Errorf("markdown: %v\n%s", err, b)
	}
}
