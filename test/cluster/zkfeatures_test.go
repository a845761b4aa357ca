package cluster_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

func TestReadOnlyMode(t *testing.T) {
	c := zktest.StartCluster(t, 3, zktest.WithReadOnlyMode())
	setup, _ := connect(t, c.Servers())
	_, err := setup.Create("/data", []byte("before"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	cut := (c.Leader() + 1) % 3
	f := c.Node(cut).Server().FSM()
	eventually(t, "replicated", func() bool { _, ok := f.Exists("/data"); return ok })
	partitioned := time.Now()
	c.Partition(cut)
	eventually(t, "the cut-off node is read-only", func() bool { return c.Node(cut).Server().Mode() == "read-only" })
	// As ZooKeeper's read-only server, which starts max(2 s, tickTime)
	// after the election began: a short election hands out no read-only
	// sessions.
	require.GreaterOrEqual(t, time.Since(partitioned), server.DefaultReadOnlyDelay)
	require.Equal(t, "ro", c.Node(cut).Server().FourLetterWord("isro"))
	// A session this node does not know is expired, not replaced.
	require.Zero(t, readOnlyHandshake(t, c.Servers()[cut], 0x1234).TimeOut, "an unknown session was served")
	require.NotZero(t, readOnlyHandshake(t, c.Servers()[cut], 0).TimeOut, "a new read-only session was refused")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ro, err := client.Connect(ctx, []string{c.Servers()[cut]}, client.WithReadOnly(true))
	require.NoError(t, err)
	defer ro.Close()
	require.Equal(t, client.StateConnectedReadOnly, ro.State())
	data, _, err := ro.Get(ctx, "/data")
	require.NoError(t, err)
	require.Equal(t, []byte("before"), data)
	_, _, err = ro.Create(ctx, "/nope", nil, client.ModePersistent, nil)
	require.ErrorIs(t, err, client.ErrNotReadOnly)

	// A client that did not ask for read-only is refused.
	_, err = client.Connect(ctx, []string{c.Servers()[cut]}, client.WithSessionTimeout(2*time.Second))
	require.Error(t, err)
	c.Heal()
	eventually(t, "quorum back", func() bool { return c.Node(cut).Server().Mode() == "follower" })
	eventually(t, "the read-only session ended", func() bool { return ro.State() != client.StateConnectedReadOnly })
}

// readOnlyHandshake asks addr for a read-only session (id 0: a new one)
// and returns the answer.
func readOnlyHandshake(t *testing.T, addr string, id int64) wire.ConnectResponse {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.SetDeadline(time.Now().Add(10*time.Second)))
	var e wire.Encoder
	start := e.BeginFrame()
	(&wire.ConnectRequest{TimeOut: 4000, SessionID: id, Passwd: make([]byte, 16), ReadOnly: true, HasReadOnly: true}).Encode(&e)
	e.EndFrame(start)
	_, err = nc.Write(e.Bytes())
	require.NoError(t, err)
	f, err := wire.ReadFrame(nc, nil, 1<<20)
	require.NoError(t, err)
	var cr wire.ConnectResponse
	require.NoError(t, cr.Decode(wire.NewDecoder(f)))
	return cr
}

func TestReconfigOpcode(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	// Remove a follower, talking to the other follower: a client on the
	// removed node (or on a removed leader) loses its connection instead of
	// getting the reply, as with ZooKeeper.
	leader := c.Leader()
	victim, via := (leader+1)%3, (leader+2)%3
	victimID := fmt.Sprint(victim + 1)
	cl, _ := connect(t, []string{c.Servers()[via]})
	// Without WRITE on /zookeeper/config (read-only for everyone), reconfig is refused.
	_, err := cl.IncrementalReconfig(nil, []string{victimID}, -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)

	admin, _ := connect(t, []string{c.Servers()[via]})
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, err = admin.IncrementalReconfig(nil, []string{victimID}, -1)
	require.NoError(t, err)
	members, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	require.Len(t, members, 2, "the node left through reconfig")
	data, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.NotContains(t, string(data), "server."+victimID+"=")
	_, err = admin.IncrementalReconfig([]string{fmt.Sprintf("server.9=%s:3999:participant", addr)}, nil, 12345)
	require.ErrorIs(t, err, zk.ErrBadVersion, "a stale curConfigId is refused")
	_ = ctx
}

// reconfig reads member ids as numbers, as ZooKeeper does: removing
// "03" removes server 3 (it was compared as a string, matched no member,
// and the reconfig succeeded without removing anything).
func TestReconfigIDsAreNumbers(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	leader := c.Leader()
	victim, via := (leader+1)%3, (leader+2)%3
	admin, _ := connect(t, []string{c.Servers()[via]})
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	_, err := admin.IncrementalReconfig(nil, []string{fmt.Sprintf("0%d", victim+1)}, -1)
	require.NoError(t, err)
	members, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	require.Len(t, members, 2, "server.0%d is server.%d", victim+1, victim+1)
	data, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.NotContains(t, string(data), fmt.Sprintf("server.%d=", victim+1))
}

// A reconfig sent through a follower that removes the leader answers OK:
// the follower's wait for the change to reach it outlasts the old
// leader's refusal (it was answered ConnectionLoss although made).
func TestReconfigRemovingTheLeaderThroughAFollowerAnswersOK(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	leader := c.Leader()
	admin, _ := connect(t, []string{c.Servers()[(leader+1)%3]})
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	_, err := admin.IncrementalReconfig(nil, []string{fmt.Sprint(leader + 1)}, -1)
	require.NoError(t, err)
	data, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.NotContains(t, string(data), fmt.Sprintf("server.%d=", leader+1))
}

// A reconfig that drops the leader and a follower drops both: the leader
// is removed last, so its stepping down cannot make the other removal fail
// unseen (the members were removed in map order, and with the leader
// first the second removal found no leader and was skipped).
func TestReconfigRemovesLeaderAndFollower(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 5, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	leader := c.Leader()
	victim, via := (leader+1)%5, (leader+2)%5
	admin, _ := connect(t, []string{c.Servers()[via]})
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	// A node answers a client once it has applied the membership the
	// leader publishes after its election.
	data, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.Equal(t, 5, strings.Count(string(data), "server."), "%s", data)
	var keep []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "server.") &&
			!strings.HasPrefix(line, fmt.Sprintf("server.%d=", leader+1)) &&
			!strings.HasPrefix(line, fmt.Sprintf("server.%d=", victim+1)) {
			keep = append(keep, line)
		}
	}
	require.Len(t, keep, 3)
	// The reply may be lost with the leader (a connection loss, as with
	// ZooKeeper); the outcome is what counts.
	_, _ = admin.Reconfig(keep, -1)
	eventually(t, "three members under a new leader", func() bool {
		n := c.Node(via).Server()
		members, err := n.Members()
		return err == nil && len(members) == 3 && n.Leader() != "" && n.Leader() != fmt.Sprint(leader+1)
	})
}

// A node without a leader says it is not serving, as ZooKeeper's
// four-letter words do, instead of reporting itself a healthy follower
// while it refuses every handshake; ruok still answers.
func TestFourLetterWordsOfALeaderlessNode(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	cut := (c.Leader() + 1) % 3
	n := c.Node(cut).Server()
	eventually(t, "the follower knows its leader", func() bool { return strings.Contains(n.FourLetterWord("srvr"), "Mode: follower") })
	// The leader publishes /zookeeper/config once elected; this follower
	// may apply it a moment later.
	eventually(t, "the follower applies the membership", func() bool {
		return strings.Contains(n.FourLetterWord("conf"), "membership: \nserver.1=")
	})
	conf := n.FourLetterWord("conf")
	require.Contains(t, conf, fmt.Sprintf("serverId=%d\n", cut+1), "conf names the node, as a quorum peer's")
	leader := c.Node(c.Leader()).Server()
	synced := func() string {
		for _, kv := range leader.MonitorValues() {
			if kv[0] == "zk_synced_followers" {
				return kv[1]
			}
		}
		return "missing"
	}
	eventually(t, "the leader's mntr counts two synced followers", func() bool { return synced() == "2" })
	require.Contains(t, leader.FourLetterWord("mntr"), "zk_learners\t2\n")
	require.Contains(t, leader.FourLetterWord("mntr"), "zk_quorum_size\t3\n")
	c.Partition(cut)
	eventually(t, "the leader's mntr counts one synced follower", func() bool { return synced() == "1" })
	eventually(t, "the cut-off node stops serving", func() bool {
		return n.FourLetterWord("srvr") == "This ZooKeeper instance is not currently serving requests\n"
	})
	require.Equal(t, "This ZooKeeper instance is not currently serving requests\n", n.FourLetterWord("mntr"))
	require.Equal(t, "null", n.FourLetterWord("isro"))
	require.Equal(t, "imok", n.FourLetterWord("ruok"))
	c.Heal()
	eventually(t, "serving again", func() bool { return strings.Contains(n.FourLetterWord("srvr"), "Mode: follower") })
}

// A reconfig pipelined between writes on the same connection is applied
// between them, as ZooKeeper takes requests in order: /zookeeper/config
// changes after the creates sent before the reconfig and before the one
// sent after it.
func TestReconfigAfterEarlierWrites(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	leader := c.Leader()
	victim, via := (leader+1)%3, (leader+2)%3
	nc, err := net.DialTimeout("tcp", c.Servers()[via], 5*time.Second)
	require.NoError(t, err)
	defer nc.Close()
	require.NoError(t, nc.SetDeadline(time.Now().Add(20*time.Second)))
	rawSend(t, nc, nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)})
	_, err = wire.ReadFrame(nc, nil, 1<<20)
	require.NoError(t, err)
	rawSend(t, nc, &wire.RequestHeader{Xid: wire.XidAuth, Op: wire.OpAuth}, &wire.AuthPacket{Scheme: "digest", Auth: []byte("super:test")})
	var burst []byte
	for i := range 100 {
		var e wire.Encoder
		start := e.BeginFrame()
		(&wire.RequestHeader{Xid: int32(1 + i), Op: wire.OpCreate}).Encode(&e)
		(&wire.CreateRequest{Path: fmt.Sprintf("/before-%d", i), ACL: wire.OpenACLUnsafe}).Encode(&e)
		e.EndFrame(start)
		burst = append(burst, e.Bytes()...)
	}
	var e wire.Encoder
	start := e.BeginFrame()
	(&wire.RequestHeader{Xid: 5000, Op: wire.OpReconfig}).Encode(&e)
	(&wire.ReconfigRequest{LeavingServers: fmt.Sprint(victim + 1), CurConfigID: -1}).Encode(&e)
	e.EndFrame(start)
	start = e.BeginFrame()
	(&wire.RequestHeader{Xid: 5001, Op: wire.OpCreate}).Encode(&e)
	(&wire.CreateRequest{Path: "/after", ACL: wire.OpenACLUnsafe}).Encode(&e)
	e.EndFrame(start)
	_, err = nc.Write(append(burst, e.Bytes()...))
	require.NoError(t, err)
	for {
		f, err := wire.ReadFrame(nc, nil, 1<<20)
		require.NoError(t, err)
		var h wire.ReplyHeader
		require.NoError(t, h.Decode(wire.NewDecoder(f)))
		require.Equal(t, wire.OK, h.Err, "xid %d", h.Xid)
		if h.Xid == 5001 {
			break
		}
	}
	f := c.Node(via).Server().FSM()
	cfg, ok := f.Exists("/zookeeper/config")
	require.True(t, ok)
	last, ok := f.Exists("/before-99")
	require.True(t, ok)
	require.Greater(t, cfg.Mzxid, last.Czxid, "the reconfig overtook a write sent before it")
	after, ok := f.Exists("/after")
	require.True(t, ok)
	require.Greater(t, after.Czxid, cfg.Mzxid, "a write sent after the reconfig overtook it")

	// A refused reconfig is answered, and the connection stays, as in
	// ZooKeeper.
	rawSend(t, nc, &wire.RequestHeader{Xid: 5002, Op: wire.OpReconfig}, &wire.ReconfigRequest{LeavingServers: fmt.Sprint(via + 1), CurConfigID: 12345})
	rawSend(t, nc, &wire.RequestHeader{Xid: wire.XidPing, Op: wire.OpPing}, nil)
	for _, want := range []struct {
		xid  int32
		code wire.Code
	}{{5002, wire.ErrBadVersion}, {wire.XidPing, wire.OK}} {
		f, err := wire.ReadFrame(nc, nil, 1<<20)
		require.NoError(t, err, "the connection closed after a refused reconfig")
		var h wire.ReplyHeader
		require.NoError(t, h.Decode(wire.NewDecoder(f)))
		require.Equal(t, want.xid, h.Xid)
		require.Equal(t, want.code, h.Err)
	}
}

// Members added by reconfig keep their election port and client address
// in /zookeeper/config, as ZooKeeper publishes them, across later changes
// and a new leader (Curator's EnsembleTracker builds its connection
// string from the client addresses; Paddock printed the quorum port twice
// and no client address for a member it did not have in its static
// configuration). The added members are observers nobody runs: Raft
// non-voters, so the quorum stays the three live nodes. The version
// line is the zxid of the change, and a reconfig from an older version is
// refused (Paddock's was always 0, so every fromConfig of 0 passed).
func TestReconfigKeepsNewMembersPortsAndClientAddress(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	admin, _ := connect(t, c.Servers())
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	var want []string
	version := func() int64 {
		data, _, err := admin.Get("/zookeeper/config")
		require.NoError(t, err)
		_, v, ok := strings.Cut(string(data), "version=")
		require.True(t, ok, "%s", data)
		n, err := strconv.ParseInt(v, 16, 64)
		require.NoError(t, err, "%s", data)
		return n
	}
	add := func(id, port int) {
		line := fmt.Sprintf("server.%d=127.0.0.1:%d:%d:observer;0.0.0.0:%d", id, port, port+1, port+2)
		from := version()
		_, err := admin.IncrementalReconfig([]string{strings.Replace(line, "0.0.0.0:", "", 1)}, nil, from)
		require.NoError(t, err)
		require.Greater(t, version(), from, "the new configuration's version")
		_, err = admin.IncrementalReconfig(nil, []string{"1"}, from)
		require.ErrorIs(t, err, zk.ErrBadVersion, "a reconfig from the replaced version")
		want = append(want, line)
		eventually(t, "every node publishes the added members", func() bool {
			for i := range c.Size() {
				data, _, err := c.Node(i).Server().FSM().Get("/zookeeper/config")
				if err != nil {
					return false
				}
				for _, l := range want {
					if !strings.Contains(string(data)+"\n", l+"\n") {
						return false
					}
				}
			}
			return true
		})
	}
	add(4, 3891)
	add(5, 3894)
	old := c.Leader()
	require.NoError(t, c.Node(old).Server().TransferLeadership(""))
	eventually(t, "a new leader", func() bool { l := c.Leader(); return l >= 0 && l != old })
	add(6, 3897)
	data, _, err := c.Node(c.Leader()).Server().FSM().Get("/zookeeper/config")
	require.NoError(t, err)
	t.Logf("/zookeeper/config:\n%s", data)
}

// A reconfig that would leave one voting member is refused with
// BADARGUMENTS, as ZooKeeper refuses it while standaloneEnabled is true
// (its default; zoo.cfg's standaloneEnabled=false allows it): Paddock
// applied it. Leaving two is fine.
func TestReconfigKeepsTwoVoters(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	leader := c.Leader()
	via := (leader + 1) % 3
	admin, _ := connect(t, []string{c.Servers()[via]})
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	others := []string{fmt.Sprint((leader+1)%3 + 1), fmt.Sprint((leader+2)%3 + 1)}
	_, err := admin.IncrementalReconfig(nil, others, -1)
	require.ErrorIs(t, err, zk.ErrBadArguments, "down to one voter")
	members, err := c.Node(leader).Server().Members()
	require.NoError(t, err)
	require.Len(t, members, 3, "nothing removed")
	_, err = admin.IncrementalReconfig(nil, others[1:], -1)
	require.NoError(t, err, "down to two voters")
}

// /zookeeper/config survives a restart of the whole cluster: a member's
// client address that only reconfig gave stays, and the version does not
// go back. The new leader used to compare the membership with its state
// before it had applied its log, found /zookeeper/config empty, and
// published the membership anew at version 0 without the address.
func TestConfigSurvivesAFullRestart(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	admin, _ := connect(t, c.Servers())
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	// An observer that never starts: the quorum is unchanged.
	joining := fmt.Sprintf("server.9=%s:3999:observer;127.0.0.1:2999", addr)
	_, err = admin.IncrementalReconfig([]string{joining}, nil, -1)
	require.NoError(t, err)
	before, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.Contains(t, string(before), ";127.0.0.1:2999")
	admin.Close()

	for i := 0; i < 3; i++ {
		c.Kill(i)
	}
	done := make(chan struct{}, 3)
	for i := 0; i < 3; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			c.Restart(i)
		}()
	}
	for i := 0; i < 3; i++ {
		<-done
	}
	n := c.Node(c.Leader()).Server()
	var after []byte
	eventually(t, "the leader has applied its log", func() bool {
		after, _, _ = n.FSM().Get("/zookeeper/config")
		return len(after) > 0
	})
	// Give a wrong republish the time to happen: a sync is applied after it.
	cl, _ := connect(t, c.Servers())
	_, err = cl.Sync("/")
	require.NoError(t, err)
	after, _, err = cl.Get("/zookeeper/config")
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))
}

// A joining server of an incremental reconfig needs the three ports
// ZooKeeper requires (quorum, election and client), an election port
// other than its quorum port, and addresses no other member uses:
// otherwise BADARGUMENTS, as ZooKeeper's PrepRequestProcessor answers
// ("each server should have at least 3 ports specified", "Reconfiguration
// failed"). Paddock took such a server (and published a line Java cannot
// parse, or a member sharing another's address).
func TestReconfigChecksJoiningServers(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	admin, _ := connect(t, c.Servers())
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	members, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	taken := members[0].Addr // another member's quorum address
	for _, joining := range []string{
		"server.7=127.0.0.1:3911",           // no election port, no client port
		"server.7=127.0.0.1:3911:3912",      // no client port
		"server.7=127.0.0.1:3911:3911;3913", // election port = quorum port
		"server.7=" + taken + ":3912;3913",  // another member's quorum address
		"server.7=127.0.0.1:3911:3912:observer;3913,server.8=127.0.0.1:3911:3915:observer;3916", // two joiners, one address
	} {
		_, err := admin.IncrementalReconfig(strings.Split(joining, ","), nil, -1)
		require.ErrorIs(t, err, zk.ErrBadArguments, joining)
	}
	got, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	require.Len(t, got, 3, "nobody joined")
	_, err = admin.IncrementalReconfig([]string{"server.7=127.0.0.1:3911:3912:observer;3913"}, nil, -1)
	require.NoError(t, err, "three ports of its own")
}

// A reconfig that gives an existing member a new client address (ZooKeeper:
// reconfig -add with the member's id) keeps it across later changes, as
// ZooKeeper's dynamic configuration does.
func TestReconfigChangedClientAddressStays(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	admin, _ := connect(t, c.Servers())
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	members, err := c.Node(c.Leader()).Server().Members()
	require.NoError(t, err)
	m := members[1]
	host, port, err := net.SplitHostPort(m.Addr)
	require.NoError(t, err)
	q, _ := strconv.Atoi(port)
	line := fmt.Sprintf("server.%s=%s:%d:%d:participant;127.0.0.1:2998", m.ID, host, q, q+10000)
	_, err = admin.IncrementalReconfig([]string{line}, nil, -1)
	require.NoError(t, err)
	data, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.Contains(t, string(data), line+"\n", "the new client address")
	_, err = admin.IncrementalReconfig([]string{"server.9=127.0.0.1:3931:3932:observer;3933"}, nil, -1)
	require.NoError(t, err)
	got, _, err := admin.Get("/zookeeper/config")
	require.NoError(t, err)
	require.Contains(t, string(got), line+"\n", "after a later change")
}

// Two reconfigs from the same configuration version: ZooKeeper's leader
// takes them one at a time, and the second finds the version replaced
// (BADVERSION) or the first still running (RECONFIGINPROGRESS). fromConfig
// is a condition, as a setData's version.
func TestReconfigFromConfigIsAConditionForConcurrentReconfigs(t *testing.T) {
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(super))
	var admins [2]*zk.Conn
	for i := range admins {
		admins[i], _ = connect(t, []string{c.Servers()[i]})
		require.NoError(t, admins[i].AddAuth("digest", []byte("super:test")))
	}
	data, _, err := admins[0].Get("/zookeeper/config")
	require.NoError(t, err)
	_, v, _ := strings.Cut(string(data), "version=")
	from, err := strconv.ParseInt(v, 16, 64)
	require.NoError(t, err)
	errs := make(chan error, 2)
	for i, admin := range admins {
		line := fmt.Sprintf("server.%d=127.0.0.1:%d:%d:observer;%d", 7+i, 3921+3*i, 3922+3*i, 3923+3*i)
		go func() {
			_, err := admin.IncrementalReconfig([]string{line}, nil, from)
			errs <- err
		}()
	}
	ok := 0
	for range admins {
		if <-errs == nil {
			ok++
		}
	}
	require.Equal(t, 1, ok, "both reconfigs from version %x were applied", from)
}
