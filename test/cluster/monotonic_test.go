package cluster_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestClusterReadsNeverGoBackAcrossFaults checks single system image and
// read-your-writes without sync: one client increments a counter node
// (compare-and-set) and reads it back; others only read it. Faults (kills
// and restarts, which leave a node behind until it catches up, and
// partitions) move the clients between nodes. No client may read a value
// older than one it has read or written before, whichever node serves it
// (a node behind the client's last zxid must refuse the connection).
func TestClusterReadsNeverGoBackAcrossFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	for _, seed := range []int64{7, 8} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { monotonicRun(t, seed, 0) })
	}
	// With an observer, which serves reads and forwards writes the same way.
	t.Run("observer", func(t *testing.T) { monotonicRun(t, 9, 1) })
}

func monotonicRun(t *testing.T, seed int64, observers int) {
	rng := rand.New(rand.NewSource(seed))
	c := zktest.StartCluster(t, 3+observers, zktest.WithTickTime(500*time.Millisecond), zktest.WithSnapshotEvery(64),
		zktest.WithObservers(observers))
	setup, _ := connect(t, c.Servers())
	enc := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	_, err := setup.Create("/ctr", enc(0), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	reads := 0
	client := func(i int, writer bool) {
		defer wg.Done()
		cl, _, err := zk.Connect(c.Servers(), 6*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
		if err != nil {
			t.Error(err)
			return
		}
		defer cl.Close()
		var floor uint64 // the newest value this client has read or written
		var floorZxid int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			if writer {
				data, st, err := cl.Get("/ctr")
				if err != nil {
					continue
				}
				v := binary.BigEndian.Uint64(data)
				if v < floor {
					t.Errorf("writer read %d after %d (mzxid %d after %d) on %s", v, floor, st.Mzxid, floorZxid, cl.Server())
					return
				}
				if _, err := cl.Set("/ctr", enc(v+1), st.Version); err == nil {
					floor, floorZxid = v+1, st.Mzxid
				} else if !errors.Is(err, zk.ErrBadVersion) {
					continue
				}
			}
			data, st, err := cl.Get("/ctr")
			if err != nil {
				continue
			}
			v := binary.BigEndian.Uint64(data)
			if v < floor {
				t.Errorf("client %d read %d after %d (mzxid %d after %d) on %s", i, v, floor, st.Mzxid, floorZxid, cl.Server())
				return
			}
			floor, floorZxid = v, st.Mzxid
			mu.Lock()
			reads++
			mu.Unlock()
		}
	}
	wg.Add(4)
	go client(0, true)
	for i := 1; i < 4; i++ {
		go client(i, false)
	}
	var faults []string
	for range 6 {
		mu.Lock()
		before := reads
		mu.Unlock()
		eventually(t, "traffic", func() bool { mu.Lock(); defer mu.Unlock(); return reads > before+300 })
		switch k := rng.Intn(c.Size()); rng.Intn(3) {
		case 0:
			c.Kill(k)
			c.Restart(k)
			faults = append(faults, "restart")
		case 1:
			c.Partition(k)
			eventually(t, "a leader on the majority side", func() bool {
				for i := range 3 {
					if i != k && c.Node(i).Server().IsLeader() {
						return true
					}
				}
				return false
			})
			c.Heal()
			faults = append(faults, "partition")
		default:
			l := c.Leader()
			c.Kill(l)
			c.Restart(l)
			faults = append(faults, "restart-leader")
		}
		c.Leader()
	}
	close(stop)
	wg.Wait()
	t.Logf("%d reads, faults %v", reads, faults)
}
