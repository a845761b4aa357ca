package bench

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
)

// observerTimeout is the session timeout of the session that watches the
// abandoned ones (servers clamp it to their maximum).
const observerTimeout = 30 * time.Second

// expiry measures session-expiry accuracy: n sessions (timeout
// SessionTimeout) each create an ephemeral node and are then abandoned as
// a crashed client would be (the TCP connection is cut, nothing more is
// sent, reconnection is impossible), spread evenly over two ticks. A
// separate session watches the ephemerals. For each session the delay from
// its last write to the server to its ephemeral's deletion is reported,
// and how many fell within [T, T + 2 ticks] (T: the negotiated timeout).
func (r *runner) expiry(ctx context.Context, n int) []Result {
	res := r.newResult(Expiry, "expire", "sessions", n)
	obs, err := dial(ctx, r.cfg.Servers, 0, dialOpts{timeout: observerTimeout})
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer obs.Close()
	root := r.runRoot(Expiry, n)
	if err := ensurePath(obs, root); err != nil {
		return []Result{r.failed(res, err)}
	}
	defer r.cleanup(ctx, []*zk.Conn{obs}, root)

	cuts := make([]*cuttable, n)
	conns := make([]*zk.Conn, n)
	watches := make([]<-chan zk.Event, n)
	defer func() { closeAll(conns) }()
	err = parallel(ctx, []*zk.Conn{obs, obs, obs, obs, obs, obs, obs, obs}, n, func(_ *zk.Conn, i int) error {
		cuts[i] = &cuttable{}
		c, err := dial(ctx, r.cfg.Servers, i, dialOpts{timeout: r.cfg.SessionTimeout, dialer: cuts[i].dialer})
		if err != nil {
			return err
		}
		conns[i] = c
		p := fmt.Sprintf("%s/e%d", root, i)
		if _, err := c.Create(p, nil, zk.FlagEphemeral, acl); err != nil {
			return fmt.Errorf("create %s: %w", p, err)
		}
		// The observer's server may not have applied the create yet.
		if _, err := obs.Sync(p); err != nil {
			return fmt.Errorf("sync %s: %w", p, err)
		}
		ok, _, ch, err := obs.ExistsW(p)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%s vanished before its session was abandoned", p)
		}
		watches[i] = ch
		return nil
	})
	if err != nil {
		return []Result{r.failed(res, err)}
	}

	T := cuts[0].grantedTimeout()
	if T <= 0 {
		T = r.cfg.SessionTimeout
	}
	tick := r.cfg.Tick
	spread := 2 * tick
	deadline := time.Now().Add(spread + T + 4*tick + 10*time.Second)
	var expired counter
	b := r.prog.Start(res.Key(), func() float64 { return float64(expired.load()) / float64(n) },
		func() string { return fmt.Sprintf("%d/%d expired  T=%v", expired.load(), n, T) })

	delays := make([]time.Duration, n)
	errs := make([]error, n)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			at := start.Add(time.Duration(i) * spread / time.Duration(n))
			select {
			case <-time.After(time.Until(at)):
			case <-ctx.Done():
				errs[i] = ctx.Err()
				return
			}
			lastContact := cuts[i].abandon()
			if t := cuts[i].grantedTimeout(); t != T {
				errs[i] = fmt.Errorf("session %d was granted %v, session 0 %v", i, t, T)
			}
			select {
			case ev := <-watches[i]:
				if ev.Type != zk.EventNodeDeleted {
					errs[i] = fmt.Errorf("observer got %v (%v), not NodeDeleted", ev.Type, ev.Err)
					return
				}
				delays[i] = time.Since(lastContact)
				expired.add(1)
			case <-time.After(time.Until(deadline)):
				errs[i] = fmt.Errorf("ephemeral of session %d still there %v after its last contact",
					i, time.Since(lastContact).Round(time.Millisecond))
			case <-ctx.Done():
				errs[i] = ctx.Err()
			}
		}()
	}
	wg.Wait()

	var el errorLog
	h := &Histogram{}
	var ratios []float64
	inBounds, early, late := 0, 0, 0
	for i := range n {
		if errs[i] != nil {
			el.add(errs[i])
			continue
		}
		d := delays[i]
		h.Record(d)
		ratios = append(ratios, float64(d)/float64(T))
		switch {
		case d < T:
			early++
		case d > T+2*tick:
			late++
		default:
			inBounds++
		}
	}
	sort.Float64s(ratios)
	res.Ops = expired.load()
	res.Seconds = time.Since(start).Seconds()
	res.Latency = h.Summary()
	res.Extra = map[string]float64{
		"timeout_ms": float64(T.Milliseconds()),
		"tick_ms":    float64(tick.Milliseconds()),
		"in_bounds":  float64(inBounds),
		"early":      float64(early),
		"late":       float64(late),
	}
	if len(ratios) > 0 {
		res.Extra["ratio_min"] = ratios[0]
		res.Extra["ratio_p50"] = ratios[(len(ratios)-1)/2]
		res.Extra["ratio_max"] = ratios[len(ratios)-1]
	}
	el.fill(&res)
	r.finish(b, &res)
	return []Result{res}
}
