package interop_test

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/zktest"
)

// javaParseConfigs runs test/interop/curator/ParseConfig.java on each
// /zookeeper/config: what ZooKeeper's QuorumMaj (QuorumPeer.QuorumServer),
// Curator's EnsembleTracker and zkCli's "config -c" make of it. Each answer
// is "OK MEMBERS | CONNECTSTRING | CLIENTCONFIGSTR" or "ERR EXCEPTION".
func javaParseConfigs(t *testing.T, configs ...[]byte) []string {
	t.Helper()
	compileCurator(t)
	dir := t.TempDir()
	var files []string
	for i, c := range configs {
		f := filepath.Join(dir, fmt.Sprint("config", i))
		if err := os.WriteFile(f, c, 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	cmd := exec.Command("java", append([]string{"-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", curatorClasspath(curatorClasses), "ParseConfig"}, files...)...)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ParseConfig: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(configs) {
		t.Fatalf("ParseConfig answered %q for %d configs\n%s", out, len(configs), stderr.String())
	}
	return lines
}

// startPeerCluster starts one in-process node per peer, each with its own
// client listener and cluster listener and the same peer list, and
// returns them once every node has applied /zookeeper/config with all
// members.
func startPeerCluster(t *testing.T, peers []server.Peer, clientLns, clusterLns []net.Listener) []*server.Server {
	t.Helper()
	nodes := make([]*server.Server, len(peers))
	errs := make(chan error, len(peers))
	for i := range peers {
		cfg := server.DefaultConfig()
		cfg.ID, cfg.Peers, cfg.Stores = peers[i].ID, peers, server.NewMemoryStores()
		cfg.Listener, cfg.ClusterListener = clientLns[i], clusterLns[i]
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
		cfg.Raft = server.RaftTimers{Heartbeat: 200 * time.Millisecond, Election: 200 * time.Millisecond,
			LeaderLease: 150 * time.Millisecond, Commit: 2 * time.Millisecond}
		go func() {
			var err error
			nodes[i], err = server.New(cfg)
			errs <- err
		}()
	}
	for range peers {
		if err := <-errs; err != nil {
			t.Fatalf("start cluster: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, n := range nodes {
			_ = n.Close()
		}
	})
	for _, n := range nodes {
		publishedConfig(t, n, len(peers))
	}
	return nodes
}

// publishedConfig waits until node n's /zookeeper/config names members
// servers and returns it.
func publishedConfig(t *testing.T, n *server.Server, members int) []byte {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		data, _, err := n.FSM().Get("/zookeeper/config")
		if err == nil && strings.Count(string(data), "server.") == members {
			return data
		}
		if time.Now().After(deadline) {
			t.Fatalf("/zookeeper/config %q, %v: want %d members", data, err, members)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// listenN listens on n free ports of host.
func listenN(t *testing.T, host string, n int) []net.Listener {
	t.Helper()
	out := make([]net.Listener, n)
	for i := range out {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = ln
	}
	return out
}

func portOf(ln net.Listener) int { return ln.Addr().(*net.TCPAddr).Port }

// javaMembers is ParseConfig's member list for nodes id 1.. with these
// quorum ports, election ports and roles, on host as Java spells it.
func javaMembers(host string, quorum, election []int, roles ...string) string {
	var out []string
	for i := range quorum {
		out = append(out, fmt.Sprintf("%d=%s:%d:%d:%s", i+1, host, quorum[i], election[i], roles[i]))
	}
	return strings.Join(out, ",")
}

// checkJavaParse compares ParseConfig's answer with the members and the
// connect string wanted; zkCli's "config -c" must list the same client
// addresses (in Properties' hash order).
func checkJavaParse(t *testing.T, name string, config []byte, got, members, connect string) {
	t.Helper()
	fields := strings.SplitN(got, " | ", 3)
	if !strings.HasPrefix(got, "OK ") || len(fields) != 3 {
		t.Errorf("%s: Java cannot parse /zookeeper/config:\n%s\n-> %s", name, config, got)
		return
	}
	if m := strings.TrimPrefix(fields[0], "OK "); m != members {
		t.Errorf("%s: Java reads the members of\n%s\nas %s, want %s", name, config, m, members)
	}
	if fields[1] != connect {
		t.Errorf("%s: Curator's EnsembleTracker makes the connect string %q of\n%s\nwant %q", name, fields[1], config, connect)
	}
	_, clients, _ := strings.Cut(fields[2], " ")
	var gotClients, wantClients []string
	for _, c := range strings.Split(clients, ",") {
		if c != "" {
			gotClients = append(gotClients, c)
		}
	}
	for _, c := range strings.Split(connect, ",") {
		if c != "" {
			wantClients = append(wantClients, c)
		}
	}
	slices.Sort(gotClients)
	slices.Sort(wantClients)
	if !slices.Equal(gotClients, wantClients) {
		t.Errorf("%s: zkCli's config -c gives %q, want the client addresses %v", name, fields[2], wantClients)
	}
}

// /zookeeper/config parses in Java (ZooKeeper's QuorumPeer.QuorumServer,
// through QuorumMaj as Curator's EnsembleTracker and ZooKeeperAdmin users
// read it, and zkCli's config -c) however the cluster was started: from
// zoo.cfg server lines (election ports and client addresses), from
// --peer flags (no election port, no client address: Paddock printed the
// quorum port twice, which Java refuses, "Client and election port must
// be different!"), and as zktest starts it (which published no client
// address either).
func TestZookeeperConfigParsesInJava(t *testing.T) {
	compileCurator(t)
	var configs [][]byte
	var checks []func(got string)

	// zoo.cfg: server.N=host:quorumPort:electionPort[:role];clientHost:clientPort,
	// node 3 an observer. Node 2's election port is its quorum port (a line
	// ZooKeeper refuses; Paddock ignores the election port): it shows 0.
	{
		clusterLns, clientLns := listenN(t, "127.0.0.1", 3), listenN(t, "127.0.0.1", 3)
		var peers []server.Peer
		var quorum, election []int
		var connect []string
		for i := range 3 {
			role := ""
			if i == 2 {
				role = ":observer"
			}
			quorum, election = append(quorum, portOf(clusterLns[i])), append(election, 3888+i)
			line := election[i]
			if i == 1 {
				line, election[i] = quorum[i], 0
			}
			connect = append(connect, clientLns[i].Addr().String())
			p, err := server.ParseServerLine(strconv.Itoa(i+1), fmt.Sprintf("127.0.0.1:%d:%d%s;%s", quorum[i], line, role, connect[i]))
			if err != nil {
				t.Fatal(err)
			}
			peers = append(peers, p)
		}
		nodes := startPeerCluster(t, peers, clientLns, clusterLns)
		cfg := publishedConfig(t, nodes[0], 3)
		configs = append(configs, cfg)
		checks = append(checks, func(got string) {
			checkJavaParse(t, "zoo.cfg cluster", cfg, got, javaMembers("127.0.0.1", quorum, election, "participant", "participant", "observer"),
				strings.Join(connect, ","))
		})
	}

	// --peer ID=HOST:PORT: no election port, no client address. Java needs
	// an election port other than the quorum port; Paddock shows 0.
	{
		clusterLns, clientLns := listenN(t, "127.0.0.1", 3), listenN(t, "127.0.0.1", 3)
		var peers []server.Peer
		var quorum []int
		for i := range 3 {
			quorum = append(quorum, portOf(clusterLns[i]))
			p, err := server.ParsePeerFlag(fmt.Sprintf("%d=%s", i+1, clusterLns[i].Addr()))
			if err != nil {
				t.Fatal(err)
			}
			peers = append(peers, p)
		}
		nodes := startPeerCluster(t, peers, clientLns, clusterLns)
		cfg := publishedConfig(t, nodes[1], 3)
		configs = append(configs, cfg)
		checks = append(checks, func(got string) {
			checkJavaParse(t, "--peer cluster", cfg, got, javaMembers("127.0.0.1", quorum, []int{0, 0, 0}, "participant", "participant", "participant"), "")
		})
	}

	// An IPv6 host, in brackets as in zoo.cfg (Paddock printed it bare,
	// which neither Java nor Paddock itself could read back).
	if clusterLns, err := net.Listen("tcp", "[::1]:0"); err != nil {
		t.Logf("no IPv6 loopback (%v): IPv6 server lines not tested", err)
	} else {
		clientLns := listenN(t, "::1", 1)
		q, client := portOf(clusterLns), clientLns[0].Addr().String()
		p, err := server.ParseServerLine("1", fmt.Sprintf("[::1]:%d:3888;%s", q, client))
		if err != nil {
			t.Fatal(err)
		}
		nodes := startPeerCluster(t, []server.Peer{p}, clientLns, []net.Listener{clusterLns})
		cfg := publishedConfig(t, nodes[0], 1)
		configs = append(configs, cfg)
		checks = append(checks, func(got string) {
			checkJavaParse(t, "IPv6 cluster", cfg, got, javaMembers("0:0:0:0:0:0:0:1", []int{q}, []int{3888}, "participant"),
				fmt.Sprintf("0:0:0:0:0:0:0:1:%d", portOf(clientLns[0])))
		})
	}

	// zktest's cluster publishes each node's client address.
	{
		c := zktest.StartCluster(t, 3)
		cfg := publishedConfig(t, c.Node(c.Leader()).Server(), 3)
		configs = append(configs, cfg)
		var quorum []int
		for _, line := range strings.Split(string(cfg), "\n") {
			if rest, ok := strings.CutPrefix(line, "server."); ok {
				_, addr, _ := strings.Cut(rest, "=")
				parts := strings.Split(addr, ":")
				q, _ := strconv.Atoi(parts[1])
				quorum = append(quorum, q)
			}
		}
		checks = append(checks, func(got string) {
			checkJavaParse(t, "zktest cluster", cfg, got, javaMembers("127.0.0.1", quorum, []int{0, 0, 0}, "participant", "participant", "participant"),
				strings.Join(c.Servers(), ","))
		})
	}

	for i, got := range javaParseConfigs(t, configs...) {
		checks[i](got)
	}
}

// Curator's EnsembleTracker (on by default) follows a Paddock cluster: a
// CuratorFramework given one node learns every node's client address from
// /zookeeper/config, drops a node a reconfig removes, and when the node it
// was given is removed too, it reconnects to another, which it knows only
// from /zookeeper/config. (Four nodes: ZooKeeper refuses a reconfig that
// leaves fewer than two voters.)
func TestCuratorEnsembleTrackerFollowsCluster(t *testing.T) {
	compileCurator(t)
	super := "super:" + server.DigestOf("super:test")
	c := zktest.StartCluster(t, 4, zktest.WithReconfig(), zktest.WithSuperDigest(super),
		zktest.WithSessionTimeouts(200*time.Millisecond, 40*time.Second))
	leader := c.Leader()
	victim, via, other := (leader+1)%4, (leader+2)%4, (leader+3)%4
	publishedConfig(t, c.Node(via).Server(), 4)
	tg := &target{t: t, hosts: c.Servers()[via], root: "/interop"}
	a := tg.curator("a")
	connstr := func(nodes ...int) {
		t.Helper()
		var want []string
		for _, i := range nodes {
			want = append(want, c.Servers()[i])
		}
		slices.Sort(want)
		deadline := time.Now().Add(waitTimeout)
		for {
			got := strings.Split(a.do("connstr"), ",")
			slices.Sort(got)
			if slices.Equal(got, want) {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("Curator's connection string %q, want %q; stderr:\n%s", got, want, a.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	connstr(0, 1, 2, 3)

	ctx := tg.ctx()
	admin, err := client.Connect(ctx, []string{c.Servers()[leader]}, client.WithAuth("digest", []byte("super:test")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close() })
	remove := func(i int) {
		t.Helper()
		if _, _, err := admin.IncrementalReconfig(ctx, nil, []string{fmt.Sprint(i + 1)}, client.AnyConfig); err != nil {
			t.Fatalf("reconfig -remove %d: %v", i+1, err)
		}
	}
	remove(victim)
	connstr(leader, via, other)
	// The removed node closes its client connections; Curator reconnects
	// to another node and reads the configuration there.
	remove(via)
	connstr(leader, other)
	a.expect("/after-reconfig", "create", "/after-reconfig", "-")
	if _, ok := c.Node(leader).Server().FSM().Exists("/after-reconfig"); !ok {
		t.Fatal("the create did not reach the leader")
	}
}
