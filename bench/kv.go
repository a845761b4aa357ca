package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/go-zookeeper/zk"
)

// bucketSize is how many children any parent created by the benchmark gets,
// so getChildren answers stay small.
const bucketSize = 1000

// kvSetup connects n clients and creates the run's root.
func (r *runner) kvSetup(ctx context.Context, workload string, n int) ([]*zk.Conn, string, error) {
	conns, err := dialAll(ctx, r.cfg.Servers, n, dialOpts{}, nil)
	if err != nil {
		return nil, "", err
	}
	root := r.runRoot(workload, n)
	if err := ensurePath(conns[0], root); err != nil {
		closeAll(conns)
		return nil, "", err
	}
	return conns, root, nil
}

// populate creates root/keys/k0..k(Keys-1) with values, in parallel.
func (r *runner) populate(ctx context.Context, conns []*zk.Conn, root string) ([]string, error) {
	dir := root + "/keys"
	if err := ensurePath(conns[0], dir); err != nil {
		return nil, err
	}
	keys := make([]string, r.cfg.Keys)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s/k%d", dir, i)
	}
	val := r.value()
	err := parallel(ctx, conns, len(keys), func(c *zk.Conn, i int) error {
		_, err := c.Create(keys[i], val, 0, acl)
		if errors.Is(err, zk.ErrNodeExists) {
			err = nil
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return keys, syncAll(ctx, conns, dir)
}

func (r *runner) write(ctx context.Context, n int) []Result {
	create := r.newResult(Write, "create", "clients", n)
	set := r.newResult(Write, "set", "clients", n)
	conns, root, err := r.kvSetup(ctx, Write, n)
	if err != nil {
		return []Result{r.failed(create, err), r.failed(set, err)}
	}
	defer closeAll(conns)
	defer r.cleanup(ctx, conns, root)

	// create: client i fills root/create/c<i>/b<k>/n<j>, 1000 per bucket;
	// the bucket's own create is not timed.
	err = parallel(ctx, conns, n, func(c *zk.Conn, i int) error {
		return ensurePath(c, fmt.Sprintf("%s/create/c%d", root, i))
	})
	if err != nil {
		return []Result{r.failed(create, err), r.failed(set, err)}
	}
	val := r.value()
	next := make([]int, n)
	var errs errorLog
	loop := r.closedLoop(ctx, create.Key(), conns, 1, &errs, func(w *worker) error {
		j := next[w.i]
		dir := fmt.Sprintf("%s/create/c%d/b%d", root, w.i, j/bucketSize)
		if j%bucketSize == 0 {
			if _, err := w.conn.Create(dir, nil, 0, acl); err != nil && !errors.Is(err, zk.ErrNodeExists) {
				return err
			}
			w.start = time.Now()
		}
		_, err := w.conn.Create(fmt.Sprintf("%s/n%d", dir, j%bucketSize), val, 0, acl)
		if err == nil {
			next[w.i]++
		}
		return err
	})
	loop.fill(&create)
	errs.fill(&create)
	r.finish(loop.bar, &create)

	keys, err := r.populate(ctx, conns, root)
	if err != nil {
		return []Result{create, r.failed(set, err)}
	}
	errs = errorLog{}
	loop = r.closedLoop(ctx, set.Key(), conns, 1, &errs, func(w *worker) error {
		_, err := w.conn.Set(keys[w.rng.IntN(len(keys))], val, -1)
		return err
	})
	loop.fill(&set)
	errs.fill(&set)
	r.finish(loop.bar, &set)
	return []Result{create, set}
}

func (r *runner) read(ctx context.Context, n int) []Result {
	res := r.newResult(Read, "get", "clients", n)
	conns, root, err := r.kvSetup(ctx, Read, n)
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer closeAll(conns)
	defer r.cleanup(ctx, conns, root)
	keys, err := r.populate(ctx, conns, root)
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	var errs errorLog
	loop := r.closedLoop(ctx, res.Key(), conns, 1, &errs, func(w *worker) error {
		_, _, err := w.conn.Get(keys[w.rng.IntN(len(keys))])
		return err
	})
	loop.fill(&res)
	errs.fill(&res)
	r.finish(loop.bar, &res)
	return []Result{res}
}

// mixed is 90% getData, 10% setData, on random keys.
func (r *runner) mixed(ctx context.Context, n int) []Result {
	res := r.newResult(Mixed, "get+set", "clients", n)
	conns, root, err := r.kvSetup(ctx, Mixed, n)
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	defer closeAll(conns)
	defer r.cleanup(ctx, conns, root)
	keys, err := r.populate(ctx, conns, root)
	if err != nil {
		return []Result{r.failed(res, err)}
	}
	val := r.value()
	var errs errorLog
	loop := r.closedLoop(ctx, res.Key(), conns, 2, &errs, func(w *worker) error {
		key := keys[w.rng.IntN(len(keys))]
		if w.rng.IntN(10) == 0 {
			w.kind = 1
			_, err := w.conn.Set(key, val, -1)
			return err
		}
		_, _, err := w.conn.Get(key)
		return err
	})
	loop.fill(&res)
	errs.fill(&res)
	get, set := loop.hists[0].Summary(), loop.hists[1].Summary()
	res.Extra = map[string]float64{
		"get_ops": float64(get.Count), "get_p50_ms": get.P50, "get_p99_ms": get.P99,
		"set_ops": float64(set.Count), "set_p50_ms": set.P50, "set_p99_ms": set.P99,
	}
	r.finish(loop.bar, &res)
	return []Result{res}
}
