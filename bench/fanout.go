package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

const (
	// fanoutRoundTimeout bounds one round (arming every watch, or
	// delivering every notification).
	fanoutRoundTimeout = 60 * time.Second
	fanoutMinRounds    = 3
	fanoutMaxRounds    = 1000
)

// fanout measures watch fan-out: n sessions each hold a data watch (GetW)
// on one znode; a separate session sets it; the round's time is from just
// before setData to the moment the last watcher has its notification.
// Watchers re-arm once every notification of a round arrived; rounds repeat for Duration
// (at least 3) or Ops rounds, after one warm-up round.
func (r *runner) fanout(ctx context.Context, n int) []Result {
	res := r.newResult(Fanout, "notify", "watchers", n)
	if n <= 0 {
		return []Result{r.failed(res, fmt.Errorf("fanout needs at least one watcher"))}
	}
	setter, err := dial(ctx, r.cfg.Servers, 0, dialOpts{})
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer setter.Close()
	root := r.runRoot(Fanout, n)
	node := root + "/node"
	val := r.value()
	if err := ensurePath(setter, root); err != nil {
		return []Result{r.failed(res, err)}
	}
	defer r.cleanup(ctx, []*zk.Conn{setter}, root)
	if _, err := setter.Create(node, val, 0, acl); err != nil {
		return []Result{r.failed(res, err)}
	}

	// Arrivals are stamped and counted in go-zookeeper's event callback,
	// on the connection's receive goroutine: the moment the client library
	// has the decoded notification. No goroutine is woken per notification
	// during a round (a watcher goroutine reads its watch channel only once
	// the round is over), so the load generator spends as little CPU as
	// this client allows while the servers deliver.
	recv := make([]atomic.Int64, n) // UnixNano of each watcher's latest notification
	var arrivals fanoutRound
	var connected counter
	b := r.prog.Start(fmt.Sprintf("%s (connecting)", res.Key()),
		func() float64 { return float64(connected.load()) / float64(n) },
		func() string { return fmt.Sprintf("%d/%d sessions", connected.load(), n) })
	t0 := time.Now()
	// A long session timeout keeps 10,000 sessions' pings (one per third
	// of the timeout) from becoming a workload of their own.
	watchers, err := dialAll(ctx, r.cfg.Servers, n,
		dialOpts{timeout: observerTimeout, bufSize: max(16<<10, 2*r.cfg.ValueSize+4096), dialer: bufferedDial,
			onEvent: func(i int, ev zk.Event) {
				if ev.Type == zk.EventSession {
					// A watcher that lost its connection lost its watch:
					// fail the round now rather than at its timeout.
					if ev.State == zk.StateDisconnected || ev.State == zk.StateExpired {
						arrivals.fail(fmt.Errorf("watcher %d: %v", i, ev.State))
					}
					return
				}
				if ev.Path != node {
					return
				}
				recv[i].Store(time.Now().UnixNano())
				if ev.Type != zk.EventNodeDataChanged {
					arrivals.fail(fmt.Errorf("watcher got %v, not NodeDataChanged", ev.Type))
					return
				}
				arrivals.arrived()
			}},
		func() { connected.add(1) })
	connectSecs := time.Since(t0).Seconds()
	if b != nil {
		b.Finish(fmt.Sprintf("%-34s %d sessions in %.1fs", res.Key(), n, connectSecs))
	}
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer closeAll(watchers)

	stop := make(chan struct{})
	// Watchers re-arm only once a round is over (gate closes), so the
	// round measures delivery alone, not delivery while the server also
	// answers n re-arming reads.
	var gate atomic.Pointer[chan struct{}]
	gate0 := make(chan struct{})
	gate.Store(&gate0)
	armed := make(chan error, n)
	var wg sync.WaitGroup
	defer func() {
		close(stop)
		wg.Wait()
	}()
	for _, c := range watchers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The setter created node through another server, perhaps.
			if _, err := c.Sync(node); err != nil {
				armed <- fmt.Errorf("sync: %w", err)
				return
			}
			for {
				roundOver := *gate.Load() // this round's: it closes only after our notification
				_, _, ch, err := c.GetW(node)
				armed <- err
				if err != nil {
					return
				}
				select {
				case <-roundOver:
				case <-stop:
					return
				}
				select {
				case <-ch: // delivered during the round (the callback checked it)
				case <-stop:
					return
				}
			}
		}()
	}
	// collect waits for n values on ch.
	collect := func(ch chan error, what string) error {
		timer := time.NewTimer(fanoutRoundTimeout)
		defer timer.Stop()
		for got := 0; got < n; got++ {
			select {
			case err := <-ch:
				if err != nil {
					return err
				}
			case <-timer.C:
				return fmt.Errorf("%s: %d of %d within %v", what, got, n, fanoutRoundTimeout)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	}
	// deliver waits for the round's n arrivals.
	deliver := func(done <-chan error) error {
		timer := time.NewTimer(fanoutRoundTimeout)
		defer timer.Stop()
		select {
		case err := <-done:
			return err
		case <-timer.C:
			return fmt.Errorf("notifications: %d of %d within %v", n-arrivals.left(), n, fanoutRoundTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}

	last, first := &Histogram{}, &Histogram{}
	var rounds counter
	var fanTime time.Duration
	var errs errorLog
	var startNs, lastRound counter // shared with the progress bar
	startNs.store(time.Now().UnixNano())
	wantRounds := r.cfg.Ops
	frac := func() float64 {
		if wantRounds > 0 {
			return float64(rounds.load()) / float64(wantRounds)
		}
		return float64(time.Since(time.Unix(0, startNs.load()))) / float64(r.cfg.Duration)
	}
	b = r.prog.Start(res.Key(), frac, func() string {
		return fmt.Sprintf("%d rounds  last %s", rounds.load(), fmtMs(ms(time.Duration(lastRound.load()))))
	})
	warm := r.cfg.Warmup > 0
	for round := 0; ; round++ {
		if err := collect(armed, "watches armed"); err != nil {
			errs.add(err)
			break
		}
		done := arrivals.start(n)
		t0 := time.Now()
		if _, err := setter.Set(node, val, -1); err != nil {
			errs.add(err)
			break
		}
		if err := deliver(done); err != nil {
			errs.add(err)
			break
		}
		next := make(chan struct{})
		close(*gate.Swap(&next))
		if warm {
			warm = false
			startNs.store(time.Now().UnixNano())
			continue
		}
		lo, hi := time.Unix(0, recv[0].Load()), time.Unix(0, recv[0].Load())
		for i := range recv {
			t := time.Unix(0, recv[i].Load())
			if t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
		last.Record(hi.Sub(t0))
		first.Record(lo.Sub(t0))
		fanTime += hi.Sub(t0)
		lastRound.store(int64(hi.Sub(t0)))
		rounds.add(1)
		nr := rounds.load()
		if ctx.Err() != nil || nr >= fanoutMaxRounds ||
			(wantRounds > 0 && nr >= wantRounds) ||
			(wantRounds == 0 && nr >= fanoutMinRounds && time.Since(time.Unix(0, startNs.load())) >= r.cfg.Duration) {
			break
		}
	}
	res.Ops = rounds.load() * int64(n)
	res.Seconds = fanTime.Seconds()
	if res.Seconds > 0 {
		res.OpsPerSec = float64(res.Ops) / res.Seconds
	}
	res.Latency = last.Summary()
	fs := first.Summary()
	res.Extra = map[string]float64{
		"rounds":          float64(rounds.load()),
		"first_p50_ms":    fs.P50,
		"connect_seconds": connectSecs,
	}
	errs.fill(&res)
	r.finish(b, &res)
	return []Result{res}
}

// fanoutRound counts one round's arrivals; the last (or a failure)
// reports on the channel start returned.
type fanoutRound struct {
	mu      sync.Mutex
	pending int
	done    chan error // buffered 1; nil between rounds
}

func (f *fanoutRound) start(n int) <-chan error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending = n
	f.done = make(chan error, 1)
	return f.done
}

func (f *fanoutRound) arrived() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending--
	if f.pending == 0 && f.done != nil {
		f.done <- nil
		f.done = nil
	}
}

func (f *fanoutRound) fail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.done != nil {
		f.done <- err
		f.done = nil
	}
}

func (f *fanoutRound) left() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.pending
}
