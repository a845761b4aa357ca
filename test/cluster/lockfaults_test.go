package cluster_test

import (
	"context"
	"errors"
	"math/rand"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestMutexFencedCounterUnderFaults: four clients take a mutex, read a
// counter and write it back incremented with a fenced, versioned setData,
// while the nemesis kills leaders and followers and partitions nodes.
// Mutual exclusion means no fenced write ever meets a version it did not
// read (BadVersion), and the counter ends between the increments that
// were acknowledged and those plus the ones whose outcome was unknown
// (reliability plan 9.5.4).
func TestMutexFencedCounterUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	c := zktest.StartCluster(t, 3, zktest.WithTickTime(500*time.Millisecond))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	admin, err := client.Connect(ctx, c.Servers())
	require.NoError(t, err)
	t.Cleanup(func() { _ = admin.Close() })
	_, _, err = admin.Create(ctx, "/counter", []byte("0"), client.ModePersistent, nil)
	require.NoError(t, err)

	var acked, unknown, locked atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range 4 {
		cl, err := client.Connect(ctx, c.Servers(), client.WithSessionTimeout(6*time.Second))
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		m := recipes.NewMutex(cl, "/lock")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				opCtx, opCancel := context.WithTimeout(ctx, 5*time.Second)
				incrementOnce(t, opCtx, cl, m, i, &acked, &unknown, &locked)
				opCancel()
			}
		}()
	}
	faults := nemesis(t, c, rand.New(rand.NewSource(7)), 4)
	close(stop)
	wg.Wait()
	c.Heal()
	t.Logf("faults %v: %d locks, %d increments acknowledged, %d unknown", faults, locked.Load(), acked.Load(), unknown.Load())
	require.Greater(t, acked.Load(), int64(20), "too few increments for the check to mean anything")

	var data []byte
	eventually(t, "read the counter", func() bool {
		if err := admin.Sync(ctx, "/counter"); err != nil {
			return false
		}
		data, _, err = admin.Get(ctx, "/counter")
		return err == nil
	})
	n, err := strconv.ParseInt(string(data), 10, 64)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, acked.Load(), "an acknowledged increment was lost")
	require.LessOrEqual(t, n, acked.Load()+unknown.Load(), "more increments than were made")
}

// incrementOnce takes the mutex, increments the counter under it with a
// fenced versioned write, and releases it, counting the outcome.
func incrementOnce(t *testing.T, ctx context.Context, cl *client.Conn, m *recipes.Mutex, id int,
	acked, unknown, locked *atomic.Int64) {
	lease, err := m.Lock(ctx)
	if err != nil {
		return // no lock this time (a fault, a timeout)
	}
	locked.Add(1)
	defer func() { _ = m.Unlock(context.Background()) }()
	data, st, err := cl.Get(ctx, "/counter")
	if err != nil {
		return
	}
	v, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		t.Errorf("client %d: counter %q", id, data)
		return
	}
	_, err = lease.FencedSet(ctx, "/counter", []byte(strconv.FormatInt(v+1, 10)), st.Version)
	switch {
	case err == nil:
		acked.Add(1)
	case errors.Is(err, recipes.ErrLockLost):
		// Fenced off: the lock went (session moved on, expired): not applied.
	case errors.Is(err, client.ErrBadVersion):
		t.Errorf("client %d: the counter changed while it held the lock (version %d): two holders", id, st.Version)
	default:
		unknown.Add(1) // ConnectionLoss, a timeout: applied or not
	}
}
