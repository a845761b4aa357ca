package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
)

// DefaultRSSSettle is how long scale samples the server's RSS after its
// last create, every rssEvery, keeping the last value (and the largest, as
// the peak): the RSS at rest (Config.RSSSettle). Paddock returns its free
// heap once it has been idle for --gc-idle-after (a minute), and a
// snapshot (checked for every 2-4 minutes, so up to 4 minutes after the
// last create) counts as work: 5.5 minutes cover both, so a server that
// returns memory at rest has done so; a server that never returns memory
// (ZooKeeper's JVM) is sampled as late.
const (
	DefaultRSSSettle = 5*time.Minute + 30*time.Second
	rssEvery         = 500 * time.Millisecond
)

// scale creates n znodes of ValueSize bytes (1,000 per parent) with
// ScaleClients clients and reports the create rate and, with a PID, the
// server's RSS growth per znode.
func (r *runner) scale(ctx context.Context, n int) []Result {
	res := r.newResult(Scale, "create", "znodes", n)
	clients := r.cfg.ScaleClients
	conns, err := dialAll(ctx, r.cfg.Servers, clients, dialOpts{}, nil)
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer closeAll(conns)
	root := r.runRoot(Scale, n)
	if err := ensurePath(conns[0], root); err != nil {
		return []Result{r.failed(res, err)}
	}
	defer r.cleanup(ctx, conns, root)
	buckets := (n + bucketSize - 1) / bucketSize
	err = parallel(ctx, conns, buckets, func(c *zk.Conn, i int) error {
		_, err := c.Create(fmt.Sprintf("%s/b%d", root, i), nil, 0, acl)
		return err
	})
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	var before Mem
	if r.cfg.PID > 0 {
		if before, err = ReadMem(r.cfg.PID); err != nil {
			return []Result{r.failed(res, err)}
		}
	}

	val := r.value()
	var next atomic.Int64
	var done counter
	var errs errorLog
	start := time.Now()
	b := r.prog.Start(res.Key(), func() float64 { return float64(done.load()) / float64(n) },
		rateStatus(&done, &errs.n, func() time.Time { return start }))
	hists := make([]*Histogram, clients)
	var wg sync.WaitGroup
	for ci, c := range conns {
		hists[ci] = &Histogram{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				p := fmt.Sprintf("%s/b%d/n%d", root, i/bucketSize, i%bucketSize)
				t0 := time.Now()
				_, err := c.Create(p, val, 0, acl)
				if err != nil {
					errs.add(err)
					continue
				}
				hists[ci].Record(time.Since(t0))
				done.add(1)
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, h := range hists[1:] {
		hists[0].Merge(h)
	}
	res.Ops = done.load()
	res.Seconds = elapsed.Seconds()
	res.OpsPerSec = float64(res.Ops) / res.Seconds
	res.Latency = hists[0].Summary()
	res.Extra = map[string]float64{"clients": float64(clients)}
	if r.cfg.PID > 0 && res.Ops > 0 {
		after, peak := before, before.RSS
		for t := time.Now(); ; {
			if v, err := ReadMem(r.cfg.PID); err == nil {
				after, peak = v, max(peak, v.RSS)
			}
			if time.Since(t) >= r.cfg.RSSSettle || ctx.Err() != nil {
				break
			}
			time.Sleep(rssEvery)
		}
		per := func(a, b int64) float64 { return float64(a-b) / float64(res.Ops) }
		res.Extra["rss_before_bytes"] = float64(before.RSS)
		res.Extra["rss_after_bytes"] = float64(after.RSS)
		res.Extra["rss_per_znode_bytes"] = per(after.RSS, before.RSS)
		// The largest sample, from just after the last create: what the
		// server held under load, before any idle-time return of memory.
		res.Extra["rss_peak_per_znode_bytes"] = per(peak, before.RSS)
		// Anonymous memory (heap) and file-backed pages (a mmapped log)
		// make up VmRSS; reported apart because they mean different things.
		res.Extra["rss_anon_per_znode_bytes"] = per(after.Anon, before.Anon)
		res.Extra["rss_file_per_znode_bytes"] = per(after.File, before.File)
	}
	errs.fill(&res)
	r.finish(b, &res)
	return []Result{res}
}
