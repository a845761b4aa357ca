package integration_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// wideChildren is how many children TestWideNodeUnderLoad gives one node;
// PADDOCK_WIDE_CHILDREN=1000000 runs the test plan's largest size.
const wideChildren = 100000

// TestWideNodeUnderLoad (reliability plan 9.4, wide nodes): four sessions
// give one node wideChildren children (multis of 1,000 creates) while
// another session keeps creating, reading, setting and deleting nodes
// elsewhere and must see no error. The node's Stat and
// getAllChildrenNumber count every child; getChildren lists them all when
// the reply fits in the server's reply limit (with 8-byte names, up to
// ~349,000 children in 4 MiB) and is answered MARSHALLINGERROR beyond it,
// as ZooKeeper answers a reply past jute.maxbuffer; the count survives a
// snapshot and a restart; then every child is deleted and so is the node.
func TestWideNodeUnderLoad(t *testing.T) {
	n := sizeFromEnv(t, "PADDOCK_WIDE_CHILDREN", wideChildren)
	srv := startServer(t, zktest.WithDurableStorage(), zktest.WithSnapshotEvery(uint64(n/20+100)))
	dial := func() *zk.Conn {
		c, _, err := zk.Connect([]string{srv.Addr()}, 20*time.Second, zk.WithLogger(nopLogger{}),
			zk.WithMaxBufferSize(server.DefaultMaxReplyFrame+(1<<20)))
		require.NoError(t, err)
		t.Cleanup(c.Close)
		return c
	}
	setup := dial()
	for _, p := range []string{"/wide", "/other"} {
		_, err := setup.Create(p, nil, 0, openACL)
		require.NoError(t, err)
	}

	// The load beside it: create, read, set and delete other nodes.
	stop := make(chan struct{})
	var loadOps atomic.Int64
	loadErr := make(chan error, 1)
	var loadDone sync.WaitGroup
	loadDone.Add(1)
	go func() {
		defer loadDone.Done()
		c := dial()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			p := fmt.Sprintf("/other/n%d", i)
			_, err := c.Create(p, []byte("x"), 0, openACL)
			if err == nil {
				_, _, err = c.Get(p)
			}
			if err == nil {
				_, err = c.Set(p, []byte("y"), 0)
			}
			if err == nil {
				err = c.Delete(p, 1)
			}
			if err != nil {
				loadErr <- fmt.Errorf("load op %d on %s: %w", i, p, err)
				return
			}
			loadOps.Add(1)
		}
	}()

	start := time.Now()
	const writers, batch = 4, 1000
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dial()
			for b := w * batch; b < n; b += writers * batch {
				var ops []any
				for i := b; i < min(b+batch, n); i++ {
					ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/wide/c%07d", i), Acl: openACL})
				}
				if _, err := c.Multi(ops...); err != nil {
					errs <- fmt.Errorf("creates from %d: %w", b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	created := time.Since(start)
	close(stop)
	loadDone.Wait()
	select {
	case err := <-loadErr:
		require.NoError(t, err, "the load beside the wide node")
	default:
	}
	require.Positive(t, loadOps.Load(), "no load ran beside the creates")

	requireWide := func(c *zk.Conn, want int) {
		t.Helper()
		_, st, err := c.Get("/wide")
		require.NoError(t, err)
		require.EqualValues(t, want, st.NumChildren)
		require.EqualValues(t, want, st.Cversion)
		kids, _, err := c.Children("/wide")
		if 4+want*(4+8) > server.DefaultMaxReplyFrame {
			// MARSHALLINGERROR (-5), which go-zookeeper has no name for.
			require.ErrorContains(t, err, "-5", "a getChildren reply past the limit")
			return
		}
		require.NoError(t, err)
		require.Len(t, kids, want)
		seen := make(map[string]bool, len(kids))
		for _, k := range kids {
			seen[k] = true
		}
		require.Len(t, seen, want, "getChildren listed a child twice")
	}
	requireWide(setup, n)

	srv.Restart()
	again := dial()
	requireWide(again, n)

	for b := 0; b < n; b += batch {
		var ops []any
		for i := b; i < min(b+batch, n); i++ {
			ops = append(ops, &zk.DeleteRequest{Path: fmt.Sprintf("/wide/c%07d", i), Version: -1})
		}
		_, err := again.Multi(ops...)
		require.NoError(t, err)
	}
	err := again.Delete("/wide", -1)
	if errors.Is(err, zk.ErrNotEmpty) {
		kids, _, _ := again.Children("/wide")
		t.Fatalf("children left after deleting every one: %d", len(kids))
	}
	require.NoError(t, err)
	t.Logf("%d children created in %v beside %d load operations; counted, listed, restarted, deleted", n, created.Round(time.Millisecond), loadOps.Load())
}
