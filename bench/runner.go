package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// Run runs every configured workload at every parameter value, one after
// another, and returns the report. A run that fails is reported with its
// error (Errors > 0, ErrorSamples); Run itself fails only on a bad
// configuration or a cancelled ctx (returning what was measured so far).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &runner{cfg: cfg, prog: newProgress(cfg.Progress)}
	rep := &Report{Meta: Meta{
		Label:    cfg.Label,
		Servers:  strings.Join(cfg.Servers, ","),
		Started:  time.Now().UTC(),
		Host:     ThisHost(),
		Settings: cfg.settings(),
	}}
	defer func() { rep.Meta.Finished = time.Now().UTC() }()
	type step struct {
		workload string
		n        int
	}
	var steps []step
	for _, w := range cfg.Workloads {
		switch w {
		case Write, Read, Mixed:
			for _, n := range cfg.Clients {
				steps = append(steps, step{w, n})
			}
		case LockFair, LockHerd:
			for _, n := range cfg.Contenders {
				steps = append(steps, step{w, n})
			}
		case Fanout:
			for _, n := range cfg.Watchers {
				steps = append(steps, step{w, n})
			}
		case Expiry:
			steps = append(steps, step{w, cfg.Sessions})
		case Scale:
			steps = append(steps, step{w, cfg.Znodes})
		}
	}
	for _, s := range steps {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var res []Result
		switch s.workload {
		case Write:
			res = r.write(ctx, s.n)
		case Read:
			res = r.read(ctx, s.n)
		case Mixed:
			res = r.mixed(ctx, s.n)
		case LockFair:
			res = r.lock(ctx, false, s.n)
		case LockHerd:
			res = r.lock(ctx, true, s.n)
		case Fanout:
			res = r.fanout(ctx, s.n)
		case Expiry:
			res = r.expiry(ctx, s.n)
		case Scale:
			res = r.scale(ctx, s.n)
		}
		rep.Results = append(rep.Results, res...)
	}
	return rep, ctx.Err()
}

func (c Config) settings() map[string]string {
	ints := func(l []int) string {
		var s []string
		for _, n := range l {
			s = append(s, fmt.Sprint(n))
		}
		return strings.Join(s, ",")
	}
	return map[string]string{
		"workloads":       strings.Join(c.Workloads, ","),
		"clients":         ints(c.Clients),
		"contenders":      ints(c.Contenders),
		"watchers":        ints(c.Watchers),
		"duration":        c.Duration.String(),
		"warmup":          c.Warmup.String(),
		"ops":             fmt.Sprint(c.Ops),
		"value_size":      fmt.Sprint(c.ValueSize),
		"keys":            fmt.Sprint(c.Keys),
		"znodes":          fmt.Sprint(c.Znodes),
		"scale_clients":   fmt.Sprint(c.ScaleClients),
		"sessions":        fmt.Sprint(c.Sessions),
		"session_timeout": c.SessionTimeout.String(),
		"tick":            c.Tick.String(),
		"hold":            c.Hold.String(),
		"pid":             fmt.Sprint(c.PID),
		"cpu_pids":        ints(c.CPUPIDs),
	}
}

type runner struct {
	cfg  Config
	prog *progress
}

// counter is an atomic int64 the progress bar can read.
type counter struct{ v atomic.Int64 }

func (c *counter) add(n int64)   { c.v.Add(n) }
func (c *counter) load() int64   { return c.v.Load() }
func (c *counter) store(n int64) { c.v.Store(n) }

// maxErrorSamples is how many distinct error messages a result keeps.
const maxErrorSamples = 5

// errorLog counts errors and keeps the first few distinct messages.
type errorLog struct {
	n       counter
	mu      sync.Mutex
	samples []string
}

func (e *errorLog) add(err error) {
	e.n.add(1)
	e.mu.Lock()
	defer e.mu.Unlock()
	msg := err.Error()
	for _, s := range e.samples {
		if s == msg {
			return
		}
	}
	if len(e.samples) < maxErrorSamples {
		e.samples = append(e.samples, msg)
	}
}

func (e *errorLog) fill(res *Result) {
	res.Errors += e.n.load()
	e.mu.Lock()
	res.ErrorSamples = append(res.ErrorSamples, e.samples...)
	e.mu.Unlock()
}

// newResult starts a result for a run.
func (r *runner) newResult(workload, op, param string, n int) Result {
	return Result{Workload: workload, Op: op, Param: param, N: n,
		Servers: strings.Join(r.cfg.Servers, ","), Started: time.Now().UTC()}
}

// failed marks res as a run that could not be carried out.
func (r *runner) failed(res Result, err error) Result {
	res.Errors++
	res.ErrorSamples = append(res.ErrorSamples, err.Error())
	r.prog.Logf("%s: FAILED: %v", res.Key(), err)
	return res
}

// finish fills the server RSS and prints the run's line.
func (r *runner) finish(b *bar, res *Result) {
	if r.cfg.PID > 0 {
		if rss, err := ReadRSS(r.cfg.PID); err == nil {
			res.ServerRSS = rss
		}
	}
	line := fmt.Sprintf("%-34s %s", res.Key(), summaryLine(*res))
	if b != nil {
		b.Finish(line)
	} else {
		r.prog.Logf("%s", line)
	}
}

// runRoot is a fresh znode path for one run.
func (r *runner) runRoot(workload string, n int) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%s-%d-%s", r.cfg.Root, workload, n, hex.EncodeToString(b[:]))
}

// cleanup deletes a run's tree unless Keep.
func (r *runner) cleanup(ctx context.Context, conns []*zk.Conn, root string) {
	if r.cfg.Keep || len(conns) == 0 {
		return
	}
	// Do not let a cancelled run leave its tree behind for lack of time.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	if err := deleteTree(ctx, conns, root); err != nil {
		r.prog.Logf("cleanup of %s: %v", root, err)
	}
}

func (r *runner) value() []byte {
	v := make([]byte, r.cfg.ValueSize)
	for i := range v {
		v[i] = 'a' + byte(i%26)
	}
	return v
}

// worker is one client's state inside closedLoop.
type worker struct {
	i    int
	conn *zk.Conn
	rng  *mrand.Rand
	// kind is set by the operation to pick the histogram it is recorded
	// in; start may be set to exclude untimed preparation.
	kind  int
	start time.Time
}

type loopResult struct {
	hists   []*Histogram // per kind, merged over clients
	ops     int64
	seconds float64
	cpu     time.Duration // the servers' CPU time over the measured window (-1: not counted)
	bar     *bar          // still showing; r.finish removes it
}

// closedLoop runs op on every connection back to back (a closed loop:
// each client has one request outstanding) for Warmup, then measures for
// Duration or until Ops operations.
func (r *runner) closedLoop(ctx context.Context, label string, conns []*zk.Conn, kinds int, errs *errorLog,
	op func(w *worker) error) loopResult {
	cfg := r.cfg
	var ops counter
	start := time.Now()
	measure := start.Add(cfg.Warmup)
	end := measure.Add(cfg.Duration)
	var tickets atomic.Int64
	frac := func() float64 {
		if cfg.Ops > 0 {
			return float64(ops.load()+errs.n.load()) / float64(cfg.Ops)
		}
		return float64(time.Since(start)) / float64(cfg.Warmup+cfg.Duration)
	}
	b := r.prog.Start(label, frac, rateStatus(&ops, &errs.n, func() time.Time { return measure }))
	cpu := r.meterCPU(measure)
	hists := make([][]*Histogram, len(conns))
	last := make([]time.Time, len(conns))
	var wg sync.WaitGroup
	for ci, c := range conns {
		hists[ci] = make([]*Histogram, kinds)
		for k := range hists[ci] {
			hists[ci][k] = &Histogram{}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{i: ci, conn: c, rng: mrand.New(mrand.NewPCG(uint64(start.UnixNano()), uint64(ci)))}
			for ctx.Err() == nil {
				t0 := time.Now()
				measuring := !t0.Before(measure)
				if measuring {
					if cfg.Ops > 0 {
						if tickets.Add(1) > cfg.Ops {
							return
						}
					} else if !t0.Before(end) {
						return
					}
				}
				w.kind, w.start = 0, time.Time{}
				err := op(w)
				t1 := time.Now()
				if !measuring {
					continue
				}
				last[ci] = t1
				if err != nil {
					errs.add(err)
					continue
				}
				if !w.start.IsZero() {
					t0 = w.start
				}
				hists[ci][w.kind].Record(t1.Sub(t0))
				ops.add(1)
			}
		}()
	}
	wg.Wait()
	res := loopResult{ops: ops.load()}
	res.hists = make([]*Histogram, kinds)
	for k := range res.hists {
		res.hists[k] = &Histogram{}
		for ci := range hists {
			res.hists[k].Merge(hists[ci][k])
		}
	}
	var lastT time.Time
	for _, t := range last {
		if t.After(lastT) {
			lastT = t
		}
	}
	if lastT.After(measure) {
		res.seconds = lastT.Sub(measure).Seconds()
	}
	res.cpu = cpu.stop()
	res.bar = b
	return res
}

// fill copies a loop's numbers into res.
func (l loopResult) fill(res *Result) {
	all := &Histogram{}
	for _, h := range l.hists {
		all.Merge(h)
	}
	res.Ops = l.ops
	res.Seconds = l.seconds
	if l.seconds > 0 {
		res.OpsPerSec = float64(l.ops) / l.seconds
	}
	res.Latency = all.Summary()
	res.setServerCPU(l.cpu)
}
