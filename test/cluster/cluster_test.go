package cluster_test

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

func connect(t *testing.T, servers []string) (*zk.Conn, <-chan zk.Event) {
	t.Helper()
	c, ev, err := zk.Connect(servers, 4*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	waitState(t, ev, zk.StateHasSession)
	return c, ev
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func waitState(t *testing.T, ev <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case e := <-ev:
			if e.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %v", want)
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestClusterReplicatesAndForwards(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	leader := c.Leader()
	follower := (leader + 1) % 3
	// A client on a follower writes; every node sees it.
	cl, _ := connect(t, []string{c.Servers()[follower]})
	p, err := cl.Create("/x", []byte("v"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	data, _, err := cl.Get(p)
	require.NoError(t, err, "read-your-writes on the follower")
	require.Equal(t, []byte("v"), data)
	for i := 0; i < 3; i++ {
		f := c.Node(i).Server().FSM()
		eventually(t, fmt.Sprintf("node %d has %s", i, p), func() bool { _, ok := f.Exists(p); return ok })
	}
	eph, err := cl.Create("/e", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = cl.Sync("/")
	require.NoError(t, err)
	want := c.Node(leader).Server().FSM()
	for i := 0; i < 3; i++ {
		f := c.Node(i).Server().FSM()
		eventually(t, "digests converge", func() bool { return f.Digest() == want.Digest() })
		require.NoError(t, f.Check())
	}
	_ = eph
}

// TestClusterFollowersLearnCommitsAtOnce: with a Raft commit timer far
// longer than any write takes, writes and syncs through a follower still
// finish quickly, because the leader pushes each commit to the followers
// (pushCommits) instead of leaving them to the timer.
func TestClusterFollowersLearnCommitsAtOnce(t *testing.T) {
	const commitTimer = 3 * time.Second
	c := zktest.StartCluster(t, 3, zktest.WithRaftCommitTimeout(commitTimer))
	follower := (c.Leader() + 1) % 3
	cl, _ := connect(t, []string{c.Servers()[follower]})
	watcher, _ := connect(t, []string{c.Servers()[(c.Leader()+2)%3]})
	_, err := cl.Create("/p", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = watcher.Sync("/p")
	require.NoError(t, err)
	_, _, ch, err := watcher.GetW("/p")
	require.NoError(t, err)
	start := time.Now()
	_, err = cl.Set("/p", []byte("x"), -1)
	require.NoError(t, err)
	select {
	case ev := <-ch:
		require.Equal(t, zk.EventNodeDataChanged, ev.Type)
	case <-time.After(commitTimer/2 - time.Since(start)):
		t.Fatal("a watch on the other follower fired only with the commit timer")
	}
	for i := range 3 {
		start := time.Now()
		_, err := cl.Set("/p", []byte{byte(i)}, -1)
		require.NoError(t, err)
		_, err = cl.Sync("/p")
		require.NoError(t, err)
		require.Less(t, time.Since(start), commitTimer/2, "set+sync through a follower waited for the commit timer")
	}
}

// TestClusterCommitPushWritesNothing: the leader tells idle followers of a
// commit with an AppendEntries that carries no entry, not with a no-op
// entry that every node would have to write to disk first. When the watch
// on a follower fires for a write at index Z, neither that follower nor
// the leader has any entry after Z.
func TestClusterCommitPushWritesNothing(t *testing.T) {
	const commitTimer = 3 * time.Second
	c := zktest.StartCluster(t, 3, zktest.WithRaftCommitTimeout(commitTimer))
	leader := c.Leader()
	follower := (leader + 1) % 3
	writer, _ := connect(t, []string{c.Servers()[leader]})
	watcher, _ := connect(t, []string{c.Servers()[follower]})
	_, err := writer.Create("/p", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, err = watcher.Sync("/p")
	require.NoError(t, err)
	for i := range 3 {
		_, _, ch, err := watcher.GetW("/p")
		require.NoError(t, err)
		st, err := writer.Set("/p", []byte{byte(i)}, -1)
		require.NoError(t, err)
		select {
		case ev := <-ch:
			require.Equal(t, zk.EventNodeDataChanged, ev.Type)
		case <-time.After(commitTimer / 2):
			t.Fatal("the watch on a follower fired only with the commit timer")
		}
		z := fmt.Sprint(st.Mzxid)
		require.Equal(t, z, c.Node(follower).Server().RaftStats()["last_log_index"], "follower's log after the watch fired")
		require.Equal(t, z, c.Node(leader).Server().RaftStats()["last_log_index"], "leader's log after the watch fired")
	}
}

func TestClusterSurvivesLeaderLoss(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	cl, ev := connect(t, c.Servers())
	id := cl.SessionID()
	_, err := cl.Create("/eph", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	var acked []string
	for i := 0; i < 20; i++ {
		p, err := cl.Create("/k", []byte{byte(i)}, zk.FlagSequence, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
		acked = append(acked, p)
	}
	old := c.KillLeader()
	newLeader := c.Leader()
	require.NotEqual(t, old, newLeader)
	// The client reconnects to a surviving node within its session.
	eventually(t, "write after failover", func() bool {
		_, err := cl.Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
		return err == nil || err == zk.ErrNodeExists
	})
	require.Equal(t, id, cl.SessionID())
	_ = ev
	ok, _, err := cl.Exists("/eph")
	require.NoError(t, err)
	require.True(t, ok, "the session survived, so its ephemeral did")
	for _, p := range acked {
		ok, _, err := cl.Exists(p)
		require.NoError(t, err)
		require.True(t, ok, "acknowledged write %s lost", p)
	}
	c.Restart(old)
	f := c.Node(old).Server().FSM()
	want := c.Node(newLeader).Server().FSM()
	eventually(t, "restarted node catches up", func() bool { return f.Digest() == want.Digest() })
}

func TestClusterPartitionedLeaderStepsDown(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	old := c.Leader()
	c.Partition(old)
	eventually(t, "majority elects a new leader", func() bool {
		for i := 0; i < 3; i++ {
			if i != old && c.Node(i).Server().IsLeader() {
				return true
			}
		}
		return false
	})
	eventually(t, "old leader steps down", func() bool { return !c.Node(old).Server().IsLeader() })
	c.Heal()
	cl, _ := connect(t, c.Servers())
	_, err := cl.Create("/healed", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
}

func TestClusterNoFalseExpiryOnFollower(t *testing.T) {
	c := zktest.StartCluster(t, 3) // tick 100ms: sessions time out in at most 2s
	follower := (c.Leader() + 1) % 3
	cl, ev := connect(t, []string{c.Servers()[follower]})
	_, err := cl.Create("/alive", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	leaderFSM := c.Node(c.Leader()).Server().FSM()
	deadline := time.Now().Add(3 * time.Second) // beyond the 2s timeout
	for time.Now().Before(deadline) {
		_, ok := leaderFSM.Session(cl.SessionID())
		require.True(t, ok, "a session heartbeating through a follower must not expire")
		time.Sleep(50 * time.Millisecond)
	}
	select {
	case e := <-ev:
		require.NotEqual(t, zk.StateExpired, e.State)
	default:
	}
}

// rawSend writes one frame (a request header and r, each if not nil) to nc.
func rawSend(t *testing.T, nc net.Conn, hdr *wire.RequestHeader, r wire.Record) {
	t.Helper()
	var e wire.Encoder
	start := e.BeginFrame()
	if hdr != nil {
		hdr.Encode(&e)
	}
	if r != nil {
		r.Encode(&e)
	}
	e.EndFrame(start)
	_, err := nc.Write(e.Bytes())
	require.NoError(t, err)
}

// abandon creates a session with an ephemeral node over a raw connection
// to addr, then closes the socket without closing the session.
func abandon(t *testing.T, addr, path string) int64 {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	send := func(hdr *wire.RequestHeader, r wire.Record) { rawSend(t, nc, hdr, r) }
	send(nil, &wire.ConnectRequest{TimeOut: 1000, Passwd: make([]byte, 16)})
	frame, err := wire.ReadFrame(nc, nil, wire.DefaultMaxFrame)
	require.NoError(t, err)
	var resp wire.ConnectResponse
	require.NoError(t, resp.Decode(wire.NewDecoder(frame)))
	send(&wire.RequestHeader{Xid: 1, Op: wire.OpCreate}, &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeral})
	frame, err = wire.ReadFrame(nc, nil, wire.DefaultMaxFrame)
	require.NoError(t, err)
	var h wire.ReplyHeader
	require.NoError(t, h.Decode(wire.NewDecoder(frame)))
	require.Equal(t, wire.OK, h.Err)
	return resp.SessionID
}

func TestClusterAbandonedSessionExpiresEverywhere(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	follower := (c.Leader() + 1) % 3
	id := abandon(t, c.Servers()[follower], "/gone")
	for i := 0; i < 3; i++ {
		f := c.Node(i).Server().FSM()
		eventually(t, "the abandoned session expires", func() bool { _, ok := f.Session(id); return !ok })
		_, ok := f.Exists("/gone")
		require.False(t, ok, "its ephemeral is deleted in the same command")
		require.NoError(t, f.Check())
	}
}

func TestClusterPartitionedFollowerSendsClientsAway(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	follower := (c.Leader() + 1) % 3
	cl, ev := connect(t, c.Servers())
	_ = cl
	// Pin the client's node by partitioning whichever node it is on, if a follower.
	_ = ev
	c.Partition(follower)
	eventually(t, "partitioned follower knows no leader", func() bool { return c.Node(follower).Server().Leader() == "" })
	only, _, err := zk.Connect([]string{c.Servers()[follower]}, 2*time.Second, zk.WithLogInfo(false), zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	defer only.Close()
	_, _, err = only.Get("/")
	require.Error(t, err, "a node cut off from the quorum refuses clients")
	c.Heal()
	eventually(t, "healed follower rejoins", func() bool { return c.Node(follower).Server().Leader() != "" })
}

func TestClusterMembershipChange(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	cl, _ := connect(t, c.Servers())
	_, err := cl.Create("/before", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, _, cfgWatch, err := cl.GetW("/zookeeper/config")
	require.NoError(t, err)

	added := c.AddNode()
	f := c.Node(added).Server().FSM()
	eventually(t, "new node has the data", func() bool { _, ok := f.Exists("/before"); return ok })
	members, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	require.Len(t, members, 4)
	select {
	case e := <-cfgWatch:
		require.Equal(t, zk.EventNodeDataChanged, e.Type)
	case <-time.After(10 * time.Second):
		t.Fatal("/zookeeper/config watch did not fire")
	}
	data, _, err := cl.Get("/zookeeper/config")
	require.NoError(t, err)
	require.Contains(t, string(data), "server.4=127.0.0.1:")
	require.Contains(t, string(data), "version=")

	// Leadership transfer, then removal of a follower.
	old := c.Leader()
	require.NoError(t, c.Node(old).Server().TransferLeadership(""))
	eventually(t, "leadership moved", func() bool { return c.Leader() != old })
	victim := (c.Leader() + 1) % 4
	c.RemoveNode(victim)
	members, err = c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	require.Len(t, members, 3)
	// A client on the removed node sees ConnectionLoss once and moves on.
	eventually(t, "write after the removal", func() bool {
		_, err := cl.Create("/after", nil, 0, zk.WorldACL(zk.PermAll))
		return err == nil || err == zk.ErrNodeExists
	})
}

func TestClusterLaggingFollowerCatchesUpBySnapshot(t *testing.T) {
	c := zktest.StartCluster(t, 3, zktest.WithSnapshotEvery(64))
	lagging := (c.Leader() + 1) % 3
	c.Partition(lagging)
	cl, _ := connect(t, []string{c.Servers()[c.Leader()]})
	for i := 0; i < 500; i++ {
		_, err := cl.Create(fmt.Sprintf("/s%03d", i), []byte("v"), 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	// Every node that may lead once the partition heals (leadership may
	// move under load) compacts its log past what the lagging one has.
	for i := range 3 {
		if i != lagging {
			require.NoError(t, c.Node(i).Server().Snapshot())
		}
	}
	before := raftIndexes(c)
	c.Heal()
	want := c.Node(c.Leader()).Server().FSM()
	f := c.Node(lagging).Server().FSM()
	eventually(t, "lagging follower catches up", func() bool { return f.Digest() == want.Digest() })
	require.NoError(t, f.Check())
	_, ok := f.Exists("/s499")
	require.True(t, ok)
	// Raft records the installed snapshot (and the log after it) once the
	// FSM's restore has returned, so the digest may match a moment first.
	installed := func() bool { return c.Node(lagging).Server().RaftStats()["last_snapshot_index"] != "0" }
	deadline := time.Now().Add(5 * time.Second)
	for !installed() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.True(t, installed(), "the follower (node %d) was brought up to date by a snapshot install; Raft's indexes before the heal: %s, after: %s",
		lagging, before, raftIndexes(c))
}

// raftIndexes lists each node's Raft state, term, last log, commit and
// last snapshot indexes, for a failure message.
func raftIndexes(c *zktest.Cluster) string {
	var b strings.Builder
	for i := range c.Size() {
		st := c.Node(i).Server().RaftStats()
		fmt.Fprintf(&b, "[node %d %s term %s last %s commit %s snapshot %s] ", i, st["state"], st["term"],
			st["last_log_index"], st["commit_index"], st["last_snapshot_index"])
	}
	return b.String()
}

func TestClusterObserver(t *testing.T) {
	c := zktest.StartCluster(t, 4, zktest.WithObservers(1))
	obs := 3
	require.Equal(t, "observer", c.Node(obs).Server().Mode())
	cl, _ := connect(t, []string{c.Servers()[obs]})
	_, err := cl.Create("/via-observer", []byte("x"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err, "an observer forwards writes")
	data, _, err := cl.Get("/via-observer")
	require.NoError(t, err)
	require.Equal(t, []byte("x"), data)
	members, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	require.True(t, members[obs].Observer)
	// Losing the observer and one voter leaves a voting majority (2 of 3).
	c.Kill(obs)
	victim := (c.Leader() + 1) % 3
	c.Kill(victim)
	rest := []string{}
	for i := 0; i < 3; i++ {
		if i != victim {
			rest = append(rest, c.Servers()[i])
		}
	}
	other, _ := connect(t, rest)
	_, err = other.Create("/still-writable", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
}

// Removing the leader succeeds, through the leader itself or a follower:
// the leader steps down once the change is committed and cannot publish
// /zookeeper/config itself (the next leader does), which was reported as
// the change failing ("paddock: no leader") although it was made, so
// `paddock cluster remove <leader>` exited 1 after removing it.
func TestRemovingTheLeaderReportsSuccess(t *testing.T) {
	for _, through := range []string{"leader", "follower"} {
		t.Run("through the "+through, func(t *testing.T) {
			c := zktest.StartCluster(t, 3)
			leader := c.Leader()
			via := leader
			if through == "follower" {
				via = (leader + 1) % 3
			}
			leaderID := fmt.Sprint(leader + 1)
			require.NoError(t, c.Node(via).Server().RemoveMember(leaderID))
			other := (leader + 2) % 3
			n := c.Node(other).Server()
			eventually(t, "two members under a new leader, published", func() bool {
				members, err := n.Members()
				data, _, _ := n.FSM().Get("/zookeeper/config")
				return err == nil && len(members) == 2 && n.Leader() != "" && n.Leader() != leaderID &&
					!strings.Contains(string(data), "server."+leaderID+"=")
			})
		})
	}
}
