package cluster_test

import (
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

const (
	// sessionTimeout is what connect asks for; the process clusters'
	// tickTime of 500 ms grants it.
	sessionTimeout = 4 * time.Second
	// shortFreeze is well within the servers' election timeout (a second,
	// server.DefaultRaftTimers).
	shortFreeze = 300 * time.Millisecond
)

func (c *procCluster) signal(i int, sig syscall.Signal) {
	c.t.Helper()
	require.NoError(c.t, c.procs[i].Process.Signal(sig))
}

// others returns the indexes of the running nodes other than i.
func (c *procCluster) others(i int) []int {
	var out []int
	for j := range c.procs {
		if j != i && c.procs[j] != nil {
			out = append(out, j)
		}
	}
	return out
}

// recovery measures, from the moment a leader is lost, how long the rest
// of the cluster takes to elect another and to acknowledge a write
// (reliability plan 9.6, "recovery time after leader loss").
func recovery(t *testing.T, c *procCluster, lost int, w *writer, since time.Time) (elected, firstWrite time.Duration) {
	t.Helper()
	eventually(t, "a new leader", func() bool {
		for _, j := range c.others(lost) {
			if c.mode(j) == "leader" {
				elected = time.Since(since)
				return true
			}
		}
		return false
	})
	eventually(t, "a write acknowledged after the leader was lost", func() bool {
		at, ok := w.firstAckAfter(since)
		firstWrite = at.Sub(since)
		return ok
	})
	return elected, firstWrite
}

// hasNode reports whether path exists as seen through conn after a sync.
func hasNode(t *testing.T, conn *zk.Conn, path string) bool {
	t.Helper()
	_, err := conn.Sync(path)
	require.NoError(t, err)
	ok, _, err := conn.Exists(path)
	require.NoError(t, err)
	return ok
}

// states records the session states a go-zookeeper connection reports.
// It drains the event channel as the events come: go-zookeeper drops an
// event when the channel (six deep) is full, as it is after a few
// reconnection attempts to a frozen server.
type states struct {
	mu   sync.Mutex
	seen map[zk.State]bool
}

func recordStates(ev <-chan zk.Event) *states {
	s := &states{seen: map[zk.State]bool{}}
	go func() {
		for e := range ev {
			s.mu.Lock()
			s.seen[e.State] = true
			s.mu.Unlock()
		}
	}()
	return s
}

func (s *states) saw(want zk.State) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[want]
}

// TestProcessClusterSIGSTOPOfTheLeader freezes the leader process with
// SIGSTOP, as a GC pause, a stuck disk or a VM migration would (reliability
// plan F5, on real processes: unlike the in-process pause, the frozen
// node's clocks and timers jump forward when it wakes, all at once).
//
//  1. Frozen for less than the election timeout: its client's session
//     lives on.
//  2. Frozen for longer than the session timeout: the others elect a leader
//     and go on acknowledging writes; a session heartbeating through a
//     follower lives on; the session of a client that can reach only the
//     frozen node expires and its ephemeral goes.
//  3. Woken up: the old leader, its timers all overdue, expires no live
//     session, follows the new leader, serves every acknowledged write, and
//     tells its stranded client its session expired.
func TestProcessClusterSIGSTOPOfTheLeader(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startProcCluster(t, 3)
	createLoad(t, c.clients)

	// 1. A short freeze, well within the election timeout (a second).
	old := c.leader()
	short, shortEv := connect(t, []string{c.clients[old]})
	shortStates := recordStates(shortEv)
	shortID := short.SessionID()
	c.signal(old, syscall.SIGSTOP)
	time.Sleep(shortFreeze) // the fault's length, not a wait for a condition
	c.signal(old, syscall.SIGCONT)
	eventually(t, "the frozen node's client is answered again", func() bool {
		_, _, err := short.Exists("/load")
		return err == nil
	})
	require.Equal(t, shortID, short.SessionID(), "a short freeze cost the leader's client its session")
	require.False(t, shortStates.saw(zk.StateExpired), "a short freeze expired the leader's client")

	// A client of a follower and a client of the leader only, each with an
	// ephemeral that every node has applied.
	old = c.leader()
	f := c.others(old)
	live, _ := connect(t, []string{c.clients[f[0]]})
	_, err := live.Create("/live", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	stranded, strandedEv := connect(t, []string{c.clients[old]})
	strandedStates := recordStates(strandedEv)
	_, err = stranded.Create("/stranded", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	liveID := live.SessionID()
	eventually(t, "every node applied the ephemerals", func() bool {
		for i := range c.clients {
			conn, _ := connect(t, []string{c.clients[i]})
			ok1, _, err1 := conn.Exists("/live")
			ok2, _, err2 := conn.Exists("/stranded")
			conn.Close()
			if err1 != nil || err2 != nil || !ok1 || !ok2 {
				return false
			}
		}
		return true
	})
	// A writer through the other follower.
	w := startWriter(t, []string{c.clients[f[1]]})
	eventually(t, "some writes", func() bool { return w.count() > 50 })

	// 2. A freeze longer than the session timeout.
	c.signal(old, syscall.SIGSTOP)
	stopped := time.Now()
	elected, firstWrite := recovery(t, c, old, w, stopped)
	t.Logf("leader frozen: a new leader after %v, the first write acknowledged after %v", elected.Round(time.Millisecond), firstWrite.Round(time.Millisecond))
	watcher, _ := connect(t, []string{c.clients[f[0]], c.clients[f[1]]})
	eventually(t, "the stranded session's ephemeral goes", func() bool { return !hasNode(t, watcher, "/stranded") })
	gone := time.Since(stopped)
	require.GreaterOrEqual(t, gone, sessionTimeout, "the stranded session expired before its timeout")
	t.Logf("the stranded session expired %v after the freeze (timeout %v)", gone.Round(time.Millisecond), sessionTimeout)
	// Frozen for twice the session timeout in all.
	for time.Since(stopped) < 2*sessionTimeout {
		require.True(t, hasNode(t, watcher, "/live"), "a session heartbeating through a follower expired while the leader was frozen")
		time.Sleep(50 * time.Millisecond)
	}

	// 3. Wake it up: every overdue timer fires at once.
	c.signal(old, syscall.SIGCONT)
	eventually(t, "the stranded client learns its session expired", func() bool {
		return strandedStates.saw(zk.StateExpired)
	})
	eventually(t, "the old leader follows", func() bool { return c.mode(old) == "follower" })
	woke := time.Now()
	for time.Since(woke) < sessionTimeout {
		require.True(t, hasNode(t, watcher, "/live"), "a live session expired once the old leader woke up")
		time.Sleep(50 * time.Millisecond)
	}
	require.Equal(t, liveID, live.SessionID())
	_, err = live.Create("/live-after", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err, "the follower's client writes after the old leader woke up")

	acked := w.halt()
	requireAllPresent(t, c.clients, acked)
	requireAllPresent(t, []string{c.clients[old]}, acked)
	onOld, _ := connect(t, []string{c.clients[old]})
	require.True(t, hasNode(t, onOld, "/live"))
	require.False(t, hasNode(t, onOld, "/stranded"))
	t.Logf("%d acknowledged writes, none lost", len(acked))
}
