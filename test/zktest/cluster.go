package zktest

import (
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/paddockzk/paddock/server"
)

// Cluster is n Paddock nodes in this process, replicating over loopback
// TCP through a network that can be partitioned on demand. Node indexes
// run from 0 to n-1.
type Cluster struct {
	t     testing.TB
	opts  options
	net   *faultNet
	nodes []*Server
	peers []server.Peer
}

// StartCluster starts an n-node cluster (Raft timers shortened for tests),
// waits until it has a leader, and registers t.Cleanup to stop it.
func StartCluster(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("zktest: a cluster needs at least one node")
	}
	c := &Cluster{t: t, opts: buildOptions(t, opts), net: newFaultNet()}
	// Every node's peer list has every node's cluster and client address,
	// so /zookeeper/config names where clients reach each node (Curator's
	// EnsembleTracker builds its connection string from them).
	clusterLns, clientLns := make([]net.Listener, n), make([]net.Listener, n)
	for i := range clusterLns {
		clusterLns[i], clientLns[i] = listenLocal(t), listenLocal(t)
		c.peers = append(c.peers, server.Peer{ID: strconv.Itoa(i + 1), Addr: clusterLns[i].Addr().String(),
			ClientAddr: clientLns[i].Addr().String(), Observer: i >= n-c.opts.observers})
	}
	c.nodes = make([]*Server, n)
	errs := make(chan error, n)
	for i := range c.nodes {
		c.nodes[i] = c.newNode(c.peers[i].ID)
		go func() {
			errs <- c.nodes[i].startErr("", clientLns[i], clusterLns[i])
		}()
	}
	for range c.nodes {
		if err := <-errs; err != nil {
			t.Fatalf("zktest: start cluster: %v", err)
		}
	}
	t.Cleanup(c.Stop)
	return c
}

// listenLocal listens on a free loopback port.
func listenLocal(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("zktest: listen: %v", err)
	}
	return ln
}

// newNode returns node id, configured but not started.
func (c *Cluster) newNode(id string) *Server {
	o := c.opts
	n := &Server{t: c.t}
	if o.durable {
		o.cfg.DataDir = c.t.TempDir()
	} else {
		o.cfg.Stores, n.disk = memoryStoresWithDisk()
	}
	o.cfg.ID = id
	o.cfg.Peers = append([]server.Peer(nil), c.peers...)
	o.cfg.ClusterNet = c.net
	// Short for tests, yet with room for a loaded machine: with a 50 ms
	// lease a leader under the race detector stepped down mid-test often
	// enough to fail a write with ConnectionLoss.
	o.cfg.Raft = server.RaftTimers{Heartbeat: 200 * time.Millisecond, Election: 200 * time.Millisecond,
		LeaderLease: 150 * time.Millisecond, Commit: 2 * time.Millisecond}
	if o.commit > 0 {
		o.cfg.Raft.Commit = o.commit
	}
	n.opts = o
	return n
}

// Servers returns every node's client address.
func (c *Cluster) Servers() []string {
	out := make([]string, len(c.nodes))
	for i, n := range c.nodes {
		out[i] = n.Addr()
	}
	return out
}

// Node returns node i.
func (c *Cluster) Node(i int) *Server { return c.nodes[i] }

// Size returns the number of nodes.
func (c *Cluster) Size() int { return len(c.nodes) }

// Leader waits (up to 10 s) until one running node leads and returns its
// index.
func (c *Cluster) Leader() int {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for i, n := range c.nodes {
			if srv := n.running(); srv != nil && srv.IsLeader() {
				return i
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.t.Fatalf("zktest: no leader within 10s")
	return -1
}

// KillLeader stops the current leader (its clients see their connection
// drop and reconnect to another node within their session timeout) and
// returns its index. Restart(i) brings it back with its data.
func (c *Cluster) KillLeader() int {
	i := c.Leader()
	c.Kill(i)
	return i
}

// Kill stops node i, keeping its data for Restart. Its cluster port
// closes, and so does every connection to or from it that its server left
// open (a Raft transport keeps its pooled connections), as when a process
// exits.
func (c *Cluster) Kill(i int) {
	c.nodes[i].Stop()
	c.net.closeNode(c.peers[i].ID)
}

// Restart restarts node i with its data; it rejoins and catches up.
func (c *Cluster) Restart(i int) {
	c.Kill(i)
	c.nodes[i].Restart()
}

// Partition cuts node i off from every other node. A partitioned leader
// steps down; a partitioned node cannot commit writes, so its clients get
// ConnectionLoss on writes and move to the majority side.
func (c *Cluster) Partition(i int) {
	ids := make([]string, len(c.peers))
	for j, p := range c.peers {
		ids[j] = p.ID
	}
	c.net.isolate(c.peers[i].ID, ids)
}

// Split cuts the cluster in two: the nodes given (by index) keep their
// links among themselves and lose every link to the others, as a network
// split between two racks would (Jepsen's majority/minority partition).
// The side that holds a majority elects a leader and goes on committing;
// the other cannot commit, and a leader there steps down. Heal undoes it.
func (c *Cluster) Split(side ...int) {
	in := map[int]bool{}
	for _, i := range side {
		in[i] = true
	}
	var links [][2]string
	for a := range c.peers {
		for b := range c.peers {
			if in[a] && !in[b] {
				links = append(links, [2]string{c.peers[a].ID, c.peers[b].ID})
			}
		}
	}
	c.net.cutLinks(links)
}

// PartitionRing cuts the cluster into Jepsen's "majorities ring": the
// nodes, in the order given (all of them, by index, when order is empty),
// form a ring, and each keeps only its links to the nodes at most
// ⌈⌊n/2⌋/2⌉ steps away around it. With five nodes each node then talks
// to its two neighbours only: every node sees a majority (itself and
// them), and no two nodes see the same one, so a leader keeps its quorum
// while the nodes beyond its neighbours never hear from it. With three
// nodes nothing is cut. Heal undoes it.
func (c *Cluster) PartitionRing(order ...int) {
	if len(order) == 0 {
		for i := range c.peers {
			order = append(order, i)
		}
	}
	n := len(order)
	keep := (n/2 + 1) / 2
	var links [][2]string
	for a := 0; a < n; a++ {
		for b := a + 1; b < n; b++ {
			if d := min(b-a, n-(b-a)); d > keep {
				links = append(links, [2]string{c.peers[order[a]].ID, c.peers[order[b]].ID})
			}
		}
	}
	c.net.cutLinks(links)
}

// Slow delays every message node i sends to or receives from the other
// nodes by d (a slow or congested link; a write waits d before it goes).
// Heal undoes it.
func (c *Cluster) Slow(i int, d time.Duration) {
	ids := make([]string, len(c.peers))
	for j, p := range c.peers {
		ids[j] = p.ID
	}
	c.net.slowDown(c.peers[i].ID, ids, d)
}

// AddNode starts a new node, adds it to the cluster as a voter through the
// leader, waits until it has caught up, and returns its index.
func (c *Cluster) AddNode() int {
	c.t.Helper()
	ln, clientLn := listenLocal(c.t), listenLocal(c.t)
	p := server.Peer{ID: strconv.Itoa(len(c.peers) + 1), Addr: ln.Addr().String(), ClientAddr: clientLn.Addr().String()}
	c.peers = append(c.peers, p)
	n := c.newNode(p.ID)
	n.opts.cfg.Join = true
	c.nodes = append(c.nodes, n)
	errs := make(chan error, 1)
	go func() { errs <- n.startErr("", clientLn, ln) }()
	if err := c.nodes[c.Leader()].running().AddPeer(p); err != nil {
		c.t.Fatalf("zktest: add member: %v", err)
	}
	if err := <-errs; err != nil {
		c.t.Fatalf("zktest: start new node: %v", err)
	}
	return len(c.nodes) - 1
}

// RemoveNode removes node i from the configuration and stops it.
func (c *Cluster) RemoveNode(i int) {
	c.t.Helper()
	if err := c.nodes[c.Leader()].running().RemoveMember(c.peers[i].ID); err != nil {
		c.t.Fatalf("zktest: remove member: %v", err)
	}
	c.nodes[i].Stop()
}

// Pause freezes node i as SIGSTOP freezes a process, and cuts it off from
// the other nodes: connections to it are accepted (by the kernel, as it
// were) but nothing is read or written on them, not even a handshake's
// answer, and they stay open; the node does not notice it lost its leader
// or quorum, so it closes nothing. Its clients notice the silence by their
// own read timeout and reconnect elsewhere within their session (a client
// whose server list keeps the frozen node must bound its handshake wait:
// go-zookeeper waits 10 × 2/3 of the session timeout for a handshake
// reply, Paddock's and Java's client the session timeout divided by the
// number of servers). A paused leader loses leadership. Resume(i) undoes
// it (links to the others are restored with Heal).
func (c *Cluster) Pause(i int) {
	if srv := c.nodes[i].running(); srv != nil {
		srv.Pause() // first, so it never sees itself cut off
	}
	c.Partition(i)
}

// Resume unfreezes node i and heals the network.
func (c *Cluster) Resume(i int) {
	if srv := c.nodes[i].running(); srv != nil {
		srv.Resume()
	}
	c.Heal()
}

// Heal restores every link, cut or slowed.
func (c *Cluster) Heal() { c.net.heal() }

// Stop stops every node.
func (c *Cluster) Stop() {
	for _, n := range c.nodes {
		n.Stop()
	}
}

func (c *Cluster) String() string { return fmt.Sprintf("zktest.Cluster(%v)", c.Servers()) }
