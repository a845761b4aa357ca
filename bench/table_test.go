package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func sampleResults() []Result {
	return []Result{
		{Workload: Write, Op: "create", Param: "clients", N: 64, Ops: 92500, OpsPerSec: 18500, Seconds: 5,
			Latency: Latency{Count: 92500, P50: 3.2, P99: 12.5, P999: 40.25, Max: 120}, ServerRSS: 300 << 20},
		{Workload: Read, Op: "get", Param: "clients", N: 1, Ops: 500, OpsPerSec: 50.5, Seconds: 9.9,
			Latency: Latency{Count: 500, P50: 0.045, P99: 0.9, P999: 1.5, Max: 15000}, Errors: 2,
			ErrorSamples: []string{"zk: connection closed"}},
		{Workload: Scale, Op: "create", Param: "znodes", N: 1000000, Ops: 1000000, OpsPerSec: 20000,
			Latency: Latency{P50: 2, P99: 9, P999: 20, Max: 50},
			Extra:   map[string]float64{"rss_per_znode_bytes": 412, "rss_before_bytes": 50 << 20, "rss_after_bytes": 443 << 20}},
		{Workload: Expiry, Op: "expire", Param: "sessions", N: 20, Ops: 20,
			Latency: Latency{P50: 5000, P99: 5900, P999: 5900, Max: 5900},
			Extra:   map[string]float64{"timeout_ms": 4000, "tick_ms": 2000, "ratio_min": 1.01, "ratio_max": 1.48, "in_bounds": 19, "late": 1}},
	}
}

func TestWriteTable(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, sampleResults()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("want a header and 4 rows, got:\n%s", b.String())
	}
	for i, want := range [][]string{
		{"WORKLOAD", "PARAM", "OPS", "OPS/S", "P50", "P99", "P99.9", "MAX", "ERRORS", "NOTES"},
		{"write/create", "clients=64", "92500", "18.5k", "3.20ms", "12.5ms", "40.2ms", "120ms", "0", "server RSS 300 MiB"},
		{"read/get", "clients=1", "500", "50.5", "45µs", "900µs", "1.50ms", "15.0s", "2", "error: zk: connection closed"},
		{"scale/create", "znodes=1000000", "1000000", "20.0k", "RSS +412 B/znode (50 MiB -> 443 MiB)"},
		{"expiry/expire", "sessions=20", "T=4s: 1.01-1.48 T, 19/20 in [T, T+2 ticks]", "1 late"},
	} {
		for _, w := range want {
			if !strings.Contains(lines[i], w) {
				t.Errorf("line %d %q lacks %q", i, lines[i], w)
			}
		}
	}
	// Columns line up: every row's PARAM column starts where the header's does.
	col := strings.Index(lines[0], "PARAM")
	for _, l := range lines[1:] {
		if l[col-2:col] != "  " || l[col] == ' ' {
			t.Errorf("misaligned row %q (PARAM at %d)", l, col)
		}
	}
}

func TestFormatting(t *testing.T) {
	for v, want := range map[float64]string{0: "-", 0.0123: "12µs", 1.234: "1.23ms", 12.34: "12.3ms", 123.4: "123ms", 12345: "12.3s"} {
		if got := fmtMs(v); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{0: "-", 12.34: "12.3", 1234: "1234", 12345: "12.3k", 1234567: "1.23M"} {
		if got := fmtRate(v); got != want {
			t.Errorf("fmtRate(%v) = %q, want %q", v, got, want)
		}
	}
	if got := fmtBytes(1536); got != "2 KiB" {
		t.Errorf("fmtBytes(1536) = %q", got)
	}
}

func TestReportJSONRoundTrip(t *testing.T) {
	rep := &Report{Meta: Meta{Label: "paddock", Servers: "127.0.0.1:2181", Started: time.Unix(1, 0).UTC(),
		Host: ThisHost(), Settings: map[string]string{"duration": "5s"}}, Results: sampleResults()}
	path := filepath.Join(t.TempDir(), "r.json")
	if err := rep.WriteJSON(path); err != nil {
		t.Fatal(err)
	}
	got, err := ReadReport(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Meta.Label != "paddock" || len(got.Results) != 4 || got.Results[2].Extra["rss_per_znode_bytes"] != 412 ||
		got.Results[0].Latency.P99 != 12.5 || got.Results[0].Key() != "write/create clients=64" {
		t.Errorf("round trip lost data: %+v", got)
	}
	b, _ := os.ReadFile(path)
	for _, field := range []string{`"ops_per_sec"`, `"latency_ms"`, `"p999"`, `"server_rss_bytes"`, `"error_samples"`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("JSON lacks %s", field)
		}
	}
}

func writeSide(t *testing.T, dir string, results []Result) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Results: results}
	if err := rep.WriteJSON(filepath.Join(dir, "all.json")); err != nil {
		t.Fatal(err)
	}
}

func TestCompare(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "standalone-fsync")
	zk := []Result{
		{Workload: Write, Op: "create", Param: "clients", N: 64, OpsPerSec: 10000, Latency: Latency{P50: 5, P99: 20}},
		{Workload: Read, Op: "get", Param: "clients", N: 64, OpsPerSec: 30000, Latency: Latency{P50: 1, P99: 10}},
		{Workload: Read, Op: "get", Param: "clients", N: 1, OpsPerSec: 5000, Latency: Latency{P50: 0.2, P99: 1}},
		{Workload: LockFair, Op: "handoff", Param: "contenders", N: 200, OpsPerSec: 1300, Latency: Latency{P50: 0.7, P99: 3}},
		{Workload: Fanout, Op: "notify", Param: "watchers", N: 1000, OpsPerSec: 30000, Latency: Latency{P50: 31, P99: 40}},
		{Workload: Scale, Op: "create", Param: "znodes", N: 1000000, OpsPerSec: 18500,
			Extra: map[string]float64{"rss_per_znode_bytes": 1700}},
		{Workload: Expiry, Op: "expire", Param: "sessions", N: 10,
			Extra: map[string]float64{"timeout_ms": 4000, "tick_ms": 2000, "in_bounds": 10, "ratio_min": 1, "ratio_max": 1.5}},
	}
	pd := []Result{
		{Workload: Write, Op: "create", Param: "clients", N: 64, OpsPerSec: 16000, Latency: Latency{P50: 3, P99: 18}},
		{Workload: Read, Op: "get", Param: "clients", N: 64, OpsPerSec: 60000, Latency: Latency{P50: 0.5, P99: 12}},
		{Workload: Read, Op: "get", Param: "clients", N: 1, OpsPerSec: 10000, Latency: Latency{P50: 0.1, P99: 0.5}},
		{Workload: LockFair, Op: "handoff", Param: "contenders", N: 200, OpsPerSec: 2600, Latency: Latency{P50: 0.3, P99: 2}, Errors: 1},
		{Workload: Fanout, Op: "notify", Param: "watchers", N: 1000, OpsPerSec: 90000, Latency: Latency{P50: 10, P99: 14}},
		{Workload: Scale, Op: "create", Param: "znodes", N: 1000000, OpsPerSec: 20000,
			Extra: map[string]float64{"rss_per_znode_bytes": 400}},
		{Workload: Expiry, Op: "expire", Param: "sessions", N: 10,
			Extra: map[string]float64{"timeout_ms": 4000, "tick_ms": 2000, "in_bounds": 10, "ratio_min": 1, "ratio_max": 1.4}},
		{Workload: Mixed, Op: "get+set", Param: "clients", N: 16, OpsPerSec: 1},
	}
	writeSide(t, filepath.Join(cfg, "zookeeper"), zk)
	writeSide(t, filepath.Join(cfg, "paddock"), pd)
	cs, err := CompareDirs([]string{cfg}, "zookeeper", "paddock")
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].Config != "standalone-fsync" || len(cs[0].Rows) != 8 {
		t.Fatalf("comparison: %+v", cs)
	}
	met := map[string]*bool{}
	for _, r := range cs[0].Rows {
		met[r.Key] = r.Met
	}
	want := map[string]*bool{
		"write/create clients=64":          ptr(true),  // 1.6x, p99 0.9x
		"read/get clients=64":              ptr(false), // 2x but p99 1.2x
		"read/get clients=1":               nil,        // no target at 1 client
		"lock-fair/handoff contenders=200": ptr(false), // 2x but errors
		"fanout/notify watchers=1000":      ptr(true),  // 10/31 = 0.32x
		"scale/create znodes=1000000":      ptr(true),  // 400/1700 = 0.24x
		"expiry/expire sessions=10":        ptr(true),
		"mixed/get+set clients=16":         ptr(false), // baseline missing
	}
	for k, w := range want {
		g := met[k]
		if (g == nil) != (w == nil) || (g != nil && *g != *w) {
			t.Errorf("%s: met = %v, want %v", k, deref(g), deref(w))
		}
	}
	var keys []string
	for _, r := range cs[0].Rows {
		keys = append(keys, r.Key)
	}
	if got := strings.Join(keys, ","); got != "write/create clients=64,read/get clients=1,read/get clients=64,"+
		"mixed/get+set clients=16,lock-fair/handoff contenders=200,fanout/notify watchers=1000,"+
		"expiry/expire sessions=10,scale/create znodes=1000000" {
		t.Errorf("row order: %s", got)
	}
	r := cs[0].Rows[0]
	if r.OpsRatio != 1.6 || r.P99Ratio != 0.9 {
		t.Errorf("write ratios %v %v", r.OpsRatio, r.P99Ratio)
	}

	var text, md strings.Builder
	if err := WriteCompareText(&text, cs); err != nil {
		t.Fatal(err)
	}
	if err := WriteCompareMarkdown(&md, cs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"== standalone-fsync", "1.60×", "NO", "yes", "Targets met: 4 of 7",
		"memory at 1000000 znodes", "0.24×", "errors: 0 vs 1", "baseline missing", "10 of 10 in [T, T+2 ticks]"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text output lacks %q:\n%s", want, text.String())
		}
	}
	if !strings.Contains(md.String(), "| workload | param | zookeeper ops/s | paddock ops/s |") ||
		!strings.Contains(md.String(), "| write/create | clients=64 | 10.0k | 16.0k | 1.60× |") {
		t.Errorf("markdown output:\n%s", md.String())
	}
	if err := WriteCompareJSON(filepath.Join(t.TempDir(), "c.json"), cs); err != nil {
		t.Fatal(err)
	}
	if _, err := CompareDirs([]string{t.TempDir()}, "zookeeper", "paddock"); err == nil {
		t.Error("CompareDirs of an empty directory should fail")
	}
}

func ptr(b bool) *bool { return &b }

func deref(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// TestCompareMedianOfRepeats loads a side measured three times (compare.sh
// --repeat 3) and checks that each key is its median run, with the errors
// of every run and a note saying so.
func TestCompareMedianOfRepeats(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "standalone-fsync")
	write := reportWriter(t, cfg)
	set := func(ops, p99 float64, errs int64) Result {
		return Result{Workload: Write, Op: "set", Param: "clients", N: 16, OpsPerSec: ops,
			Latency: Latency{P50: 1, P99: p99}, Errors: errs}
	}
	// Notifications per second do not order fan-out runs: time does.
	fan := func(p50, ops float64) Result {
		return Result{Workload: Fanout, Op: "notify", Param: "watchers", N: 1000, OpsPerSec: ops,
			Latency: Latency{P50: p50, P99: p50}}
	}
	write("zookeeper", "write.json", set(10000, 4, 0))
	write("zookeeper", "fanout.json", fan(20, 100))
	write("paddock", "write.json", set(18000, 3, 0))
	write("paddock", "write.r2.json", set(12000, 9, 2))
	write("paddock", "write.r3.json", set(16000, 5, 0))
	write("paddock", "fanout.json", fan(12, 100))
	write("paddock", "fanout.r2.json", fan(8, 300))
	write("paddock", "fanout.r3.json", fan(9, 50))
	rows := compareRows(t, cfg)
	w := rows["write/set clients=16"]
	if w.CandOpsPerSec != 16000 || w.CandP99 != 5 || w.OpsRatio != 1.6 {
		t.Errorf("write row is not the median run: %+v", w)
	}
	if w.CandErrors != 2 || w.Met == nil || *w.Met {
		t.Errorf("the errors of a non-median run were lost: %+v", w)
	}
	if w.Runs != 3 || !strings.Contains(w.Note, "median of 1 and 3 runs") {
		t.Errorf("runs not noted: runs %d, note %q", w.Runs, w.Note)
	}
	f := rows["fanout/notify watchers=1000"]
	if f.CandP50 != 9 || f.Met == nil || !*f.Met {
		t.Errorf("fan-out row is not the median by time: %+v", f)
	}
}

// A baseline run with errors voids a goal (a disturbed ZooKeeper run would
// flatter the ratio), and a failed repetition (nothing measured) is left
// out of the median whatever the order of the files.
func TestCompareBaselineErrorsAndFailedRepeats(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "standalone-fsync")
	write := reportWriter(t, cfg)
	get := func(ops float64, errs int64) Result {
		return Result{Workload: Read, Op: "get", Param: "clients", N: 16, OpsPerSec: ops,
			Latency: Latency{Count: int64(ops), P50: 1, P99: 2}, Errors: errs}
	}
	set := func(ops float64) Result {
		return Result{Workload: Write, Op: "set", Param: "clients", N: 64, OpsPerSec: ops,
			Latency: Latency{Count: int64(ops), P50: 1, P99: 2}}
	}
	write("zookeeper", "read.json", get(10000, 500))
	write("paddock", "read.json", get(15000, 0))
	write("zookeeper", "write.json", set(10000))
	write("paddock", "write.json", set(0)) // failed, and first
	write("paddock", "write.r2.json", set(20000))
	write("paddock", "write.r3.json", set(9000))
	rows := compareRows(t, cfg)
	if r := rows["read/get clients=16"]; r.Met == nil || *r.Met {
		t.Errorf("met with 500 baseline errors: %+v", r)
	}
	if r := rows["write/set clients=64"]; r.CandOpsPerSec != 9000 {
		t.Errorf("median of [failed, 20k, 9k] = %v, want the lower of the two measured runs (9k)", r.CandOpsPerSec)
	}
}

// reportWriter returns a function that writes results as one report file
// of one side (label) under cfg.
func reportWriter(t *testing.T, cfg string) func(label, file string, results ...Result) {
	return func(label, file string, results ...Result) {
		dir := filepath.Join(cfg, label)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := (&Report{Results: results}).WriteJSON(filepath.Join(dir, file)); err != nil {
			t.Fatal(err)
		}
	}
}

// compareRows compares cfg's zookeeper and paddock reports and returns
// the rows by key.
func compareRows(t *testing.T, cfg string) map[string]Row {
	cs, err := CompareDirs([]string{cfg}, "zookeeper", "paddock")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]Row{}
	for _, r := range cs[0].Rows {
		rows[r.Key] = r
	}
	return rows
}

// With the servers' CPU counted (--cpu-pid), the comparison shows each
// side's CPU per operation and their ratio; without it, no such columns.
func TestCompareServerCPU(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "ensemble3-fsync")
	writeSide(t, filepath.Join(cfg, "zookeeper"), []Result{
		{Workload: Write, Op: "create", Param: "clients", N: 16, OpsPerSec: 2800, Latency: Latency{P50: 4, P99: 25},
			Ops: 11200, ServerCPUSeconds: 9.52, ServerCPUPerOp: 850},
		{Workload: Fanout, Op: "notify", Param: "watchers", N: 1000, OpsPerSec: 30000, Latency: Latency{P50: 31}},
	})
	writeSide(t, filepath.Join(cfg, "paddock"), []Result{
		{Workload: Write, Op: "create", Param: "clients", N: 16, OpsPerSec: 3500, Latency: Latency{P50: 4, P99: 14},
			Ops: 14000, ServerCPUSeconds: 5.95, ServerCPUPerOp: 425},
		{Workload: Fanout, Op: "notify", Param: "watchers", N: 1000, OpsPerSec: 60000, Latency: Latency{P50: 15}},
	})
	cs, err := CompareDirs([]string{cfg}, "zookeeper", "paddock")
	if err != nil {
		t.Fatal(err)
	}
	if r := cs[0].Rows[0]; r.BaseCPUPerOp != 850 || r.CandCPUPerOp != 425 || r.CPURatio != 0.5 {
		t.Errorf("CPU per op %v, %v, ratio %v", r.BaseCPUPerOp, r.CandCPUPerOp, r.CPURatio)
	}
	var md strings.Builder
	if err := WriteCompareMarkdown(&md, cs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| p99 × | zookeeper CPU/op | paddock CPU/op | CPU/op × | target | met |",
		"| 0.56× | 850µs | 425µs | 0.50× | ops >= 1.5x, p99 <= 1x | NO |",
		"| - | - | - | last notification <= 0.5x (p50 0.48×) | yes |", // fan-out: no CPU counted
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown lacks %q:\n%s", want, md.String())
		}
	}

	plain := filepath.Join(t.TempDir(), "standalone-fsync")
	for _, side := range []string{"zookeeper", "paddock"} {
		writeSide(t, filepath.Join(plain, side), []Result{
			{Workload: Write, Op: "create", Param: "clients", N: 16, OpsPerSec: 2800, Latency: Latency{P50: 4, P99: 25}}})
	}
	if cs, err = CompareDirs([]string{plain}, "zookeeper", "paddock"); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	if err := WriteCompareText(&text, cs); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "CPU/op") {
		t.Errorf("CPU columns without CPU counts:\n%s", text.String())
	}
}
