package cluster_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// The znode model for porcupine: each key is an independent znode that is
// absent or holds (value, version). Histories are partitioned by key.

type opKind int

const (
	opCreate opKind = iota
	opSet           // unconditional setData
	opCAS           // setData with an expected version
	opDelete
	opGet // sync, then getData
)

type znodeInput struct {
	Kind    opKind
	Key     string
	Value   string
	Version int32
}

type znodeOutput struct {
	Unknown bool // the client could not tell whether the op took effect
	Err     error
	Value   string
	Version int32
}

type znodeState struct {
	Exists  bool
	Value   string
	Version int32
}

func stepZnode(state, input, output any) (bool, any) {
	s, in, out := state.(znodeState), input.(znodeInput), output.(znodeOutput)
	next, want := s, error(nil)
	switch in.Kind {
	case opCreate:
		if s.Exists {
			want = zk.ErrNodeExists
		} else {
			next = znodeState{Exists: true, Value: in.Value}
		}
	case opSet, opCAS:
		switch {
		case !s.Exists:
			want = zk.ErrNoNode
		case in.Kind == opCAS && in.Version != s.Version:
			want = zk.ErrBadVersion
		default:
			next = znodeState{Exists: true, Value: in.Value, Version: s.Version + 1}
		}
	case opDelete:
		if !s.Exists {
			want = zk.ErrNoNode
		} else {
			next = znodeState{}
		}
	case opGet:
		if out.Unknown {
			return true, s
		}
		if !s.Exists {
			return errors.Is(out.Err, zk.ErrNoNode), s
		}
		return out.Err == nil && out.Value == s.Value && out.Version == s.Version, s
	}
	if out.Unknown {
		return true, next // linearized where it took effect, or never observed
	}
	if want != nil {
		return errors.Is(out.Err, want), s
	}
	return out.Err == nil, next
}

var znodeModel = porcupine.Model{
	Init: func() any { return znodeState{} },
	Step: stepZnode,
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(znodeInput).Key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	DescribeOperation: func(in, out any) string { return fmt.Sprintf("%+v -> %+v", in, out) },
}

// history records operations at the client boundary.
type history struct {
	mu    sync.Mutex
	ops   []porcupine.Operation
	start time.Time
}

func (h *history) now() int64 { return time.Since(h.start).Nanoseconds() }

func (h *history) add(client int, in znodeInput, call int64, out znodeOutput) {
	ret := h.now()
	if out.Unknown {
		ret = math.MaxInt64 // it may take effect at any time after the call
	}
	h.mu.Lock()
	h.ops = append(h.ops, porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret})
	h.mu.Unlock()
}

// indeterminate reports whether err leaves the op's effect unknown.
func indeterminate(err error) bool {
	if err == nil {
		return false
	}
	for _, known := range []error{zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion} {
		if errors.Is(err, known) {
			return false
		}
	}
	return true
}

func runClient(t *testing.T, id int, servers []string, h *history, rng *rand.Rand, stop <-chan struct{}, count *atomic.Int64) {
	conn, _, err := zk.Connect(servers, 6*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	if err != nil {
		t.Errorf("client %d: %v", id, err)
		return
	}
	defer conn.Close()
	seq := 0
	for {
		select {
		case <-stop:
			return
		default:
		}
		seq++
		in := znodeInput{Kind: opKind(rng.Intn(5)), Key: fmt.Sprintf("/lin/k%d", rng.Intn(4)),
			Value: fmt.Sprintf("c%d-%d", id, seq), Version: int32(rng.Intn(3))}
		call := h.now()
		var out znodeOutput
		switch in.Kind {
		case opCreate:
			_, out.Err = conn.Create(in.Key, []byte(in.Value), 0, zk.WorldACL(zk.PermAll))
		case opSet:
			_, out.Err = conn.Set(in.Key, []byte(in.Value), -1)
		case opCAS:
			_, out.Err = conn.Set(in.Key, []byte(in.Value), in.Version)
		case opDelete:
			out.Err = conn.Delete(in.Key, -1)
		case opGet:
			if _, out.Err = conn.Sync(in.Key); out.Err == nil || errors.Is(out.Err, zk.ErrNoNode) {
				var data []byte
				var st *zk.Stat
				data, st, out.Err = conn.Get(in.Key)
				if out.Err == nil {
					out.Value, out.Version = string(data), st.Version
				}
			}
		}
		out.Unknown = indeterminate(out.Err)
		h.add(id, in, call, out)
		count.Add(1)
	}
}

// TestLinearizableUnderFaults runs concurrent create/set/cas/delete/get
// (after sync) clients against a 3-node cluster while a seeded nemesis
// kills and restarts the leader and partitions and heals nodes, then
// checks the history with porcupine, the replicas' digests and
// invariants, that no term had two leaders, and that no connected
// client's session expired.
func TestLinearizableUnderFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("fault test")
	}
	for _, seed := range []int64{1, 2, 3} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { linearizabilityRun(t, seed) })
	}
	// Disk faults only: a node's or the leader's disk full (it stops,
	// then restarts), the leader's slow.
	t.Run("disk-seed4", func(t *testing.T) {
		linearizabilityRun(t, 4, faultFullDisk, faultFullDiskLeader, faultSlowDisk)
	})
}

// linearizabilityRun runs clients under 4 faults of the nemesis (of
// kinds, all when none is given) and checks what they saw.
func linearizabilityRun(t *testing.T, seed int64, kinds ...int) {
	rng := rand.New(rand.NewSource(seed))
	c := startLinCluster(t, 3)
	owners := make([]*zk.Conn, 3)
	for i := range owners {
		owners[i], _ = connect(t, c.Servers())
		_, err := owners[i].Create(fmt.Sprintf("/lin-owner-%d", i), nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}

	leaders := c.MonitorLeaders()
	h, finish := startClients(t, c.Servers(), seed*100)
	faults := nemesis(t, c, rng, 4, kinds...)
	ops := finish()
	c.Heal()
	terms, err := leaders.Stop()
	require.NoError(t, err, "election safety")
	t.Logf("seed %d: %d ops, %d terms with a leader, faults: %v", seed, ops, terms, faults)
	require.Greater(t, ops, int64(100), "too little traffic for the check to mean anything")
	// A final read of every key once the faults are over: the history
	// must explain it, so no acknowledged write may have been lost (the
	// clients' own reads may have missed one).
	checkHistory(t, h, c, allNodes(c))
	// Sessions of clients that stayed connected (moving between nodes)
	// never expired.
	for i, o := range owners {
		ok, _, err := o.Exists(fmt.Sprintf("/lin-owner-%d", i))
		require.NoError(t, err)
		require.True(t, ok, "session of a connected client expired")
	}
	// Once every client closed its session, no ephemeral is left anywhere.
	for _, o := range owners {
		o.Close()
	}
	for i := 0; i < c.Size(); i++ {
		f := c.Node(i).Server().FSM()
		eventually(t, "ephemerals of closed sessions gone", func() bool {
			for j := range owners {
				if _, ok := f.Exists(fmt.Sprintf("/lin-owner-%d", j)); ok {
					return false
				}
			}
			for _, s := range f.Sessions() {
				if s.Ephemerals > 0 {
					return false
				}
			}
			return true
		})
	}
}

// The nemesis's faults.
const (
	faultKillLeader = iota
	faultPartition
	faultPartitionLeader
	faultKillFollower
	faultFullDisk
	faultFullDiskLeader
	faultSlowDisk
	numFaults
)

// nemesis injects n faults, one every ~600ms, each of a kind drawn from
// kinds (all when none is given), and returns their names.
func nemesis(t *testing.T, c *zktest.Cluster, rng *rand.Rand, n int, kinds ...int) []string {
	if len(kinds) == 0 {
		for k := 0; k < numFaults; k++ {
			kinds = append(kinds, k)
		}
	}
	var done []string
	for i := 0; i < n; i++ {
		time.Sleep(300*time.Millisecond + time.Duration(rng.Intn(300))*time.Millisecond)
		switch kind := kinds[rng.Intn(len(kinds))]; kind {
		case faultKillLeader:
			k := c.KillLeader()
			time.Sleep(400 * time.Millisecond)
			c.Restart(k)
			done = append(done, "kill-leader")
		case faultKillFollower:
			k := (c.Leader() + 1 + rng.Intn(c.Size()-1)) % c.Size()
			c.Kill(k)
			time.Sleep(400 * time.Millisecond)
			c.Restart(k)
			done = append(done, fmt.Sprintf("kill-follower-%d", k))
		case faultPartition:
			p := rng.Intn(c.Size())
			c.Partition(p)
			time.Sleep(500 * time.Millisecond)
			c.Heal()
			done = append(done, fmt.Sprintf("partition-%d", p))
		case faultFullDisk, faultFullDiskLeader:
			// A full disk: the node stops at its next log write; freed,
			// it restarts with what it had stored.
			k, name := rng.Intn(c.Size()), "full-disk"
			if kind == faultFullDiskLeader {
				k, name = c.Leader(), "full-disk-leader"
			}
			c.FailDisk(k, syscall.ENOSPC)
			time.Sleep(400 * time.Millisecond)
			stopped := c.Node(k).Err() != nil
			c.FailDisk(k, nil)
			c.Restart(k)
			done = append(done, fmt.Sprintf("%s-%d(stopped=%v)", name, k, stopped))
		case faultSlowDisk:
			k := c.Leader()
			c.SlowDisk(k, 100*time.Millisecond)
			time.Sleep(500 * time.Millisecond)
			c.SlowDisk(k, 0)
			done = append(done, "slow-disk-leader")
		default: // faultPartitionLeader
			p := c.Leader()
			c.Partition(p)
			time.Sleep(500 * time.Millisecond)
			c.Heal()
			done = append(done, "partition-leader")
		}
		c.Leader()
	}
	time.Sleep(500 * time.Millisecond)
	return done
}

// TestZnodeModelDetectsViolations makes sure the checker can fail: a read
// that misses an acknowledged write, and a read of a value never written.
func TestZnodeModelDetectsViolations(t *testing.T) {
	op := func(client int, in znodeInput, call, ret int64, out znodeOutput) porcupine.Operation {
		return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
	}
	create := znodeInput{Kind: opCreate, Key: "/k", Value: "a"}
	get := znodeInput{Kind: opGet, Key: "/k"}
	stale := []porcupine.Operation{
		op(0, create, 0, 10, znodeOutput{}),
		op(1, get, 20, 30, znodeOutput{Err: zk.ErrNoNode}), // after the create returned
	}
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(znodeModel, stale, time.Second))
	phantom := []porcupine.Operation{op(1, get, 0, 10, znodeOutput{Value: "never-written"})}
	require.Equal(t, porcupine.Illegal, porcupine.CheckOperationsTimeout(znodeModel, phantom, time.Second))
	unknown := []porcupine.Operation{
		op(0, create, 0, math.MaxInt64, znodeOutput{Unknown: true}),
		op(1, get, 20, 30, znodeOutput{Value: "a"}),
		op(1, get, 40, 50, znodeOutput{Value: "a"}),
	}
	require.Equal(t, porcupine.Ok, porcupine.CheckOperationsTimeout(znodeModel, unknown, time.Second))
}

// finalReads reads every key once the faults are over (sync, then get)
// and adds the reads to h: the history must explain them, so no
// acknowledged write may have been lost.
func finalReads(t *testing.T, h *history, c *zk.Conn) {
	t.Helper()
	for k := 0; k < 4; k++ {
		in := znodeInput{Kind: opGet, Key: fmt.Sprintf("/lin/k%d", k)}
		eventually(t, "final read of "+in.Key, func() bool {
			call := h.now()
			var out znodeOutput
			if _, out.Err = c.Sync(in.Key); out.Err == nil || errors.Is(out.Err, zk.ErrNoNode) {
				var data []byte
				var st *zk.Stat
				if data, st, out.Err = c.Get(in.Key); out.Err == nil {
					out.Value, out.Version = string(data), st.Version
				}
			}
			if indeterminate(out.Err) {
				return false
			}
			h.add(100, in, call, out)
			return true
		})
	}
}

// startClients starts five clients of servers (their random choices
// seeded from seed) recording into a new history; finish stops them and
// returns how many operations they made.
func startClients(t *testing.T, servers []string, seed int64) (h *history, finish func() int64) {
	h = &history{start: time.Now()}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var count atomic.Int64
	for i := 0; i < 5; i++ {
		wg.Add(1)
		clientRng := rand.New(rand.NewSource(seed + int64(i)))
		go func() {
			defer wg.Done()
			runClient(t, i, servers, h, clientRng, stop, &count)
		}()
	}
	return h, func() int64 {
		close(stop)
		wg.Wait()
		return count.Load()
	}
}

// startLinCluster starts an n-node cluster (500 ms ticks) for the
// linearizability clients, with their parent znode.
func startLinCluster(t *testing.T, n int) *zktest.Cluster {
	t.Helper()
	c := zktest.StartCluster(t, n, zktest.WithTickTime(500*time.Millisecond))
	setup, _ := connect(t, c.Servers())
	_, err := setup.Create("/lin", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	return c
}

func allNodes(c *zktest.Cluster) []int {
	out := make([]int, c.Size())
	for i := range out {
		out[i] = i
	}
	return out
}

// checkHistory ends a linearizability run once the faults are over: a
// final read of every key (the history must explain it, so no
// acknowledged write may have been lost; the clients' own reads may have
// missed one) through the live nodes, porcupine's verdict on the whole
// history, and the live replicas converging and internally consistent.
func checkHistory(t *testing.T, h *history, c *zktest.Cluster, live []int) {
	t.Helper()
	var addrs []string
	for _, i := range live {
		addrs = append(addrs, c.Node(i).Addr())
	}
	final, _ := connect(t, addrs)
	finalReads(t, h, final)
	res := porcupine.CheckOperationsTimeout(znodeModel, h.ops, 60*time.Second)
	require.NotEqual(t, porcupine.Illegal, res, "history is not linearizable")
	if res == porcupine.Unknown {
		t.Logf("porcupine timed out (Unknown)")
	}
	want := c.Node(c.Leader()).Server().FSM()
	for _, i := range live {
		f := c.Node(i).Server().FSM()
		eventually(t, fmt.Sprintf("node %d's digest converges", i), func() bool { return f.Digest() == want.Digest() })
		require.NoError(t, f.Check())
	}
}
