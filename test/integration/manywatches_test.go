package integration_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// manyWatches is how many data watches TestManyWatchesSurviveAReconnect
// sets; PADDOCK_MANY_WATCHES=100000 runs the test plan's size.
const manyWatches = 20000

// TestManyWatchesSurviveAReconnect: one go-zookeeper session watches
// every one of many nodes; its connection is dropped, and the client's
// setWatches on the new connection (go-zookeeper splits it into 128 KB
// requests) restores every watch, which then fires. (100,000 watches on
// 2026-12-05: set in 1.8 s, restored 1.5 s after the drop, most of it
// go-zookeeper's reconnect delay.)
func TestManyWatchesSurviveAReconnect(t *testing.T) {
	n := sizeFromEnv(t, "PADDOCK_MANY_WATCHES", manyWatches)
	srv := startServer(t)
	conn, _, err := zk.Connect([]string{srv.Addr()}, 10*time.Second, zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Create("/w", nil, 0, openACL)
	require.NoError(t, err)
	start := time.Now()
	for i := 0; i < n; i += 1000 {
		var ops []any
		for j := i; j < min(i+1000, n); j++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/w/n%07d", j), Data: []byte("v"), Acl: openACL})
		}
		_, err := conn.Multi(ops...)
		require.NoError(t, err)
	}
	t.Logf("created %d nodes in %v", n, time.Since(start))
	start = time.Now()
	chans := make([]<-chan zk.Event, n)
	var wg sync.WaitGroup
	const workers = 16
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				_, _, ch, err := conn.GetW(fmt.Sprintf("/w/n%07d", i))
				if err != nil {
					t.Error(err)
					return
				}
				chans[i] = ch
			}
		}()
	}
	wg.Wait()
	t.Logf("watched %d nodes in %v", n, time.Since(start))
	require.Len(t, srv.Watches(), n)
	start = time.Now()
	srv.DropConnections()
	eventually(t, 30*time.Second, func() bool { return len(srv.Watches()) == n }, "watches not restored")
	t.Logf("restored in %v", time.Since(start))
	for i := 0; i < n; i += n / 10 {
		_, err := conn.Set(fmt.Sprintf("/w/n%07d", i), []byte("x"), -1)
		require.NoError(t, err)
		select {
		case ev := <-chans[i]:
			require.Equal(t, zk.EventNodeDataChanged, ev.Type)
		case <-time.After(waitTimeout):
			t.Fatalf("no event for node %d", i)
		}
	}
}
