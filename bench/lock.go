package bench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// lockStall is how long a lock run may go without an acquisition before it
// is abandoned as stuck.
const lockStall = 30 * time.Second

// lockRun is the shared state of one lock run.
type lockRun struct {
	r       *runner
	root    string
	measure time.Time
	stop    chan struct{}
	stopped sync.Once

	holders     atomic.Int32
	lastRelease atomic.Int64 // UnixNano of the last release, 0 before the first
	handoffs    counter      // measured
	acquired    counter      // all, warm-up included
	lastAcq     atomic.Int64 // UnixNano of the last measured hand-off
	errs        errorLog
	hists       []*Histogram

	// gen counts acquisitions; herd contenders wait for it to move past
	// their own acquisition before contending again.
	genMu sync.Mutex
	gen   int64
	genCh chan struct{}
}

func (l *lockRun) halt() { l.stopped.Do(func() { close(l.stop) }) }

func (l *lockRun) done() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// acquired records contender ci taking the lock and returns the
// acquisition generation.
func (l *lockRun) onAcquire(ci int) int64 {
	now := time.Now()
	if l.holders.Add(1) != 1 {
		l.errs.add(errors.New("mutual exclusion violated: two holders"))
	}
	l.acquired.add(1)
	if rel := l.lastRelease.Load(); rel != 0 && !now.Before(l.measure) && !l.done() {
		l.hists[ci].Record(now.Sub(time.Unix(0, rel)))
		l.lastAcq.Store(now.UnixNano())
		l.handoffs.add(1)
		if ops := l.r.cfg.Ops; ops > 0 && l.handoffs.load() >= ops {
			l.halt()
		}
	}
	l.genMu.Lock()
	defer l.genMu.Unlock()
	l.gen++
	close(l.genCh)
	l.genCh = make(chan struct{})
	return l.gen
}

// onRelease records the release, just before the holder deletes its node.
func (l *lockRun) onRelease() {
	if l.r.cfg.Hold > 0 {
		time.Sleep(l.r.cfg.Hold)
	}
	l.holders.Add(-1)
	l.lastRelease.Store(time.Now().UnixNano())
}

// waitOthers blocks until someone else has acquired after generation g.
func (l *lockRun) waitOthers(g int64) {
	for {
		l.genMu.Lock()
		cur, ch := l.gen, l.genCh
		l.genMu.Unlock()
		if cur > g {
			return
		}
		select {
		case <-ch:
		case <-l.stop:
			return
		}
	}
}

// backoff after an error, so a broken connection does not spin.
func (l *lockRun) backoff() {
	select {
	case <-time.After(10 * time.Millisecond):
	case <-l.stop:
	}
}

// lock measures lock hand-offs between n contenders, each with its own
// session: herd=false is ZooKeeper's lock recipe (sequential ephemeral
// nodes, each waiter watching its predecessor), herd=true every contender
// racing to create one ephemeral node and watching it. A hand-off is timed
// from the holder's release to the next holder's acquisition.
func (r *runner) lock(ctx context.Context, herd bool, n int) []Result {
	workload := LockFair
	if herd {
		workload = LockHerd
	}
	res := r.newResult(workload, "handoff", "contenders", n)
	conns, err := dialAll(ctx, r.cfg.Servers, n, dialOpts{}, nil)
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer closeAll(conns)
	root := r.runRoot(workload, n)
	if err := ensurePath(conns[0], root); err != nil {
		return []Result{r.failed(res, err)}
	}
	defer r.cleanup(ctx, conns, root)

	start := time.Now()
	l := &lockRun{r: r, root: root, measure: start.Add(r.cfg.Warmup), stop: make(chan struct{}),
		genCh: make(chan struct{})}
	l.hists = make([]*Histogram, n)
	for i := range l.hists {
		l.hists[i] = &Histogram{}
	}
	frac := func() float64 {
		if r.cfg.Ops > 0 {
			return float64(l.handoffs.load()) / float64(r.cfg.Ops)
		}
		return float64(time.Since(start)) / float64(r.cfg.Warmup+r.cfg.Duration)
	}
	b := r.prog.Start(res.Key(), frac, rateStatus(&l.handoffs, &l.errs.n, func() time.Time { return l.measure }))
	cpu := r.meterCPU(l.measure)

	// The watchdog ends the run: at the deadline, on ctx cancellation, or
	// when nobody has acquired the lock for lockStall.
	watchdogDone := make(chan struct{})
	go func() {
		defer close(watchdogDone)
		var deadline <-chan time.Time
		if r.cfg.Ops <= 0 {
			t := time.NewTimer(time.Until(l.measure.Add(r.cfg.Duration)))
			defer t.Stop()
			deadline = t.C
		}
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		seen, since := l.acquired.load(), time.Now()
		for {
			select {
			case <-l.stop:
				return
			case <-ctx.Done():
				l.halt()
				return
			case <-deadline:
				l.halt()
				return
			case <-tick.C:
				if a := l.acquired.load(); a != seen {
					seen, since = a, time.Now()
				} else if time.Since(since) > lockStall {
					l.errs.add(fmt.Errorf("no acquisition for %v", lockStall))
					l.halt()
					return
				}
			}
		}
	}()

	var wg sync.WaitGroup
	for ci, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if herd {
				l.herdContender(ci, c)
			} else {
				l.fairContender(ci, c)
			}
		}()
	}
	wg.Wait()
	l.halt()
	<-watchdogDone
	serverCPU := cpu.stop()

	for _, h := range l.hists[1:] {
		l.hists[0].Merge(h)
	}
	res.Ops = l.handoffs.load()
	end := l.measure.Add(r.cfg.Duration)
	if r.cfg.Ops > 0 {
		end = time.Unix(0, l.lastAcq.Load())
	}
	if s := end.Sub(l.measure).Seconds(); s > 0 {
		res.Seconds = s
		res.OpsPerSec = float64(res.Ops) / s
	}
	res.Latency = l.hists[0].Summary()
	res.setServerCPU(serverCPU)
	l.errs.fill(&res)
	r.finish(b, &res)
	return []Result{res}
}

// fairContender runs ZooKeeper's lock recipe in a loop: create
// root/lock-<seq> (ephemeral, sequential); list the children; if ours is
// the lowest we hold the lock, otherwise watch the next lower one
// (ExistsW) and list again when it goes.
func (l *lockRun) fairContender(ci int, c *zk.Conn) {
	prefix := l.root + "/lock-"
	for !l.done() {
		me, err := c.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, acl)
		if err != nil {
			l.errs.add(fmt.Errorf("create: %w", err))
			l.backoff()
			continue
		}
		name := me[len(l.root)+1:]
		held := false
		for !l.done() {
			kids, _, err := c.Children(l.root)
			if err != nil {
				l.errs.add(fmt.Errorf("getChildren: %w", err))
				l.backoff()
				continue
			}
			pred, lowest, found := predecessor(kids, name)
			if !found {
				l.errs.add(fmt.Errorf("own lock node %s missing", name))
				break
			}
			if lowest {
				held = true
				break
			}
			ok, _, ch, err := c.ExistsW(l.root + "/" + pred)
			if err != nil {
				l.errs.add(fmt.Errorf("exists: %w", err))
				l.backoff()
				continue
			}
			if !ok {
				continue
			}
			l.await(c, l.root+"/"+pred, ch)
		}
		if held {
			l.onAcquire(ci)
			l.onRelease()
		}
		if err := c.Delete(me, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			l.errs.add(fmt.Errorf("delete: %w", err))
		}
	}
}

// predecessor finds name among the lock children: the child just before
// it in sequence order, or lowest if it is first.
func predecessor(kids []string, name string) (pred string, lowest, found bool) {
	seq := func(s string) string {
		if i := strings.LastIndex(s, "-"); i >= 0 {
			return s[i+1:]
		}
		return s
	}
	sort.Slice(kids, func(i, j int) bool { return seq(kids[i]) < seq(kids[j]) })
	for i, k := range kids {
		if k == name {
			if i == 0 {
				return "", true, true
			}
			return kids[i-1], false, true
		}
	}
	return "", false, false
}

// herdContender races for one ephemeral node: create it; if it exists,
// watch it (ExistsW) and race again when it goes. After releasing, a
// contender waits until someone else has acquired, so every acquisition is
// a hand-off rather than the releaser re-taking its own lock.
func (l *lockRun) herdContender(ci int, c *zk.Conn) {
	path := l.root + "/lock"
	for !l.done() {
		_, err := c.Create(path, nil, zk.FlagEphemeral, acl)
		if err == nil {
			g := l.onAcquire(ci)
			l.onRelease()
			if err := c.Delete(path, -1); err != nil {
				l.errs.add(fmt.Errorf("delete: %w", err))
			}
			l.waitOthers(g)
			continue
		}
		if !errors.Is(err, zk.ErrNodeExists) {
			l.errs.add(fmt.Errorf("create: %w", err))
			l.backoff()
			continue
		}
		ok, _, ch, err := c.ExistsW(path)
		if err != nil {
			l.errs.add(fmt.Errorf("exists: %w", err))
			l.backoff()
			continue
		}
		if !ok {
			continue
		}
		l.await(c, path, ch)
	}
}

// lostWatchCheck is how long a waiter waits for its watch before checking
// that the watched node still exists.
const lostWatchCheck = time.Second

// await waits for the NodeDeleted event of path (watched by ExistsW) or
// the end of the run. Every lostWatchCheck it reads path again: ZooKeeper
// delivers a watch event before the answer to any later read that shows
// the change, so if path is gone and the event has not arrived, the
// server lost the notification; that is counted as an error and the
// waiter carries on as if notified.
func (l *lockRun) await(c *zk.Conn, path string, ch <-chan zk.Event) {
	t := time.NewTicker(lostWatchCheck)
	defer t.Stop()
	for {
		select {
		case <-ch:
			return
		case <-l.stop:
			return
		case <-t.C:
			ok, _, err := c.Exists(path)
			if err != nil || ok {
				continue
			}
			select {
			case <-ch:
			default:
				l.errs.add(fmt.Errorf("lost watch: %s is gone but NodeDeleted never arrived", path[len(l.root)+1:]))
			}
			return
		}
	}
}
