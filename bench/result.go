package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Latency summarises a run's latency histogram, in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// Result is one measured run: one workload at one parameter value.
//
// What Ops, OpsPerSec and Latency mean depends on the workload:
//
//	write/create, write/set, read/get, mixed/get+set, scale/create:
//	    operations, operations per second, per-operation latency
//	lock-fair/handoff, lock-herd/handoff:
//	    lock hand-offs, hand-offs per second, release-to-next-acquire time
//	fanout/notify:
//	    notifications delivered, notifications per second of fan-out time,
//	    time from setData to the last watcher's notification (one sample per round)
//	expiry/expire:
//	    sessions expired, 0, delay from the session's last contact to its
//	    ephemeral node's deletion
type Result struct {
	Workload     string    `json:"workload"`
	Op           string    `json:"op"`
	Param        string    `json:"param"` // clients, contenders, watchers, sessions, znodes
	N            int       `json:"n"`
	Servers      string    `json:"servers"`
	Started      time.Time `json:"started"`
	Seconds      float64   `json:"seconds"`
	Ops          int64     `json:"ops"`
	OpsPerSec    float64   `json:"ops_per_sec"`
	Errors       int64     `json:"errors"`
	ErrorSamples []string  `json:"error_samples,omitempty"`
	Latency      Latency   `json:"latency_ms"`
	ServerRSS    int64     `json:"server_rss_bytes,omitempty"`
	// ServerCPUSeconds is the CPU time of Config.CPUPIDs over the measured
	// window and ServerCPUPerOp that per operation, in microseconds (0:
	// not counted; counted in 10 ms ticks).
	ServerCPUSeconds float64            `json:"server_cpu_seconds,omitempty"`
	ServerCPUPerOp   float64            `json:"server_cpu_us_per_op,omitempty"`
	Extra            map[string]float64 `json:"extra,omitempty"`
}

// Name is "workload/op", e.g. "write/create".
func (r Result) Name() string { return r.Workload + "/" + r.Op }

// Key identifies a run across reports: "write/create clients=64".
func (r Result) Key() string { return fmt.Sprintf("%s %s=%d", r.Name(), r.Param, r.N) }

// Host describes the machine a report was measured on.
type Host struct {
	Hostname  string `json:"hostname"`
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpu_model,omitempty"`
	MemTotal  int64  `json:"mem_total_bytes,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	GoVersion string `json:"go_version"`
}

// Meta describes a report.
type Meta struct {
	Label    string            `json:"label,omitempty"`
	Servers  string            `json:"servers"`
	Started  time.Time         `json:"started"`
	Finished time.Time         `json:"finished"`
	Host     Host              `json:"host"`
	Settings map[string]string `json:"settings"`
}

// Report is what `paddock bench --json` writes.
type Report struct {
	Meta    Meta     `json:"meta"`
	Results []Result `json:"results"`
}

// WriteJSON writes the report to path, indented.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// ReadReport reads a report written by WriteJSON.
func ReadReport(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// ThisHost describes the machine this process runs on (Linux details from
// /proc when available).
func ThisHost() Host {
	h := Host{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				h.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if kb, err := procStatusField("/proc/meminfo", "MemTotal"); err == nil {
		h.MemTotal = kb * 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}

// ReadRSS returns the resident set size of process pid in bytes, from
// VmRSS in /proc/PID/status.
func ReadRSS(pid int) (int64, error) {
	kb, err := procStatusField(fmt.Sprintf("/proc/%d/status", pid), "VmRSS")
	if err != nil {
		return 0, err
	}
	return kb * 1024, nil
}

// Mem is a process's resident memory, from /proc/PID/status.
type Mem struct {
	RSS  int64 // VmRSS
	Anon int64 // RssAnon: heap, stacks (not file-backed)
	File int64 // RssFile: mapped files (code, a mmapped database)
}

// ReadMem reads VmRSS, RssAnon and RssFile of process pid, in bytes.
func ReadMem(pid int) (Mem, error) {
	path := fmt.Sprintf("/proc/%d/status", pid)
	var m Mem
	for _, f := range []struct {
		name string
		dst  *int64
	}{{"VmRSS", &m.RSS}, {"RssAnon", &m.Anon}, {"RssFile", &m.File}} {
		kb, err := procStatusField(path, f.name)
		if err != nil {
			return m, err
		}
		*f.dst = kb * 1024
	}
	return m, nil
}

// procStatusField reads a "Name:   123 kB" line of a /proc file.
func procStatusField(path, name string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || k != name {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			break
		}
		return strconv.ParseInt(fields[0], 10, 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%s: no %s line", path, name)
}
