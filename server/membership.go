package server

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
)

// membershipTimeout bounds one membership change.
const membershipTimeout = 30 * time.Second

// Member is one node of the current Raft configuration.
type Member struct {
	ID       string `json:"id"`
	Addr     string `json:"addr"`
	Observer bool   `json:"observer"`
	Leader   bool   `json:"leader"`
}

// ErrStandalone is returned by membership operations on a standalone
// server, which has no cluster port.
var ErrStandalone = errors.New("paddock: this server is standalone (start it with peers to change membership)")

// Members returns the current configuration, sorted by id.
func (s *Server) Members() ([]Member, error) {
	f := s.node.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return nil, err
	}
	_, leader := s.node.r.LeaderWithID()
	var out []Member
	for _, srv := range f.Configuration().Servers {
		out = append(out, Member{ID: string(srv.ID), Addr: string(srv.Address),
			Observer: srv.Suffrage != raft.Voter, Leader: srv.ID == leader})
	}
	sort.Slice(out, func(i, j int) bool { return idLess(out[i].ID, out[j].ID) })
	return out, nil
}

func idLess(a, b string) bool {
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	if errA == nil && errB == nil {
		return x < y
	}
	return a < b
}

// membershipOp is a membership change, run on the leader.
type membershipOp struct {
	Kind     string `msgpack:"k"` // "add", "remove", "transfer"
	ID       string `msgpack:"i"`
	Addr     string `msgpack:"a,omitempty"`
	Observer bool   `msgpack:"o,omitempty"`
	// Election and Client are an added member's election port and
	// client address (from reconfig's server.N=host:q:e;client), for
	// /zookeeper/config only.
	Election string `msgpack:"e,omitempty"`
	Client   string `msgpack:"c,omitempty"`
	// Reconfig is a whole reconfig (Kind "reconfig"), run by the leader.
	Reconfig *reconfigArgs `msgpack:"r,omitempty"`
}

// AddMember adds a voter (or an observer, a Raft non-voter). The new node
// must be started with the full peer list including itself; it catches up
// from the leader (by snapshot if it is far behind).
func (s *Server) AddMember(id, addr string, observer bool) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("paddock: bad cluster address %q: %w", addr, err)
	}
	return s.changeMembership(&membershipOp{Kind: "add", ID: id, Addr: addr, Observer: observer})
}

// AddPeer adds p as AddMember does, and publishes its election port and
// client address in /zookeeper/config (as a reconfig's joining server
// line does).
func (s *Server) AddPeer(p Peer) error {
	if _, _, err := net.SplitHostPort(p.Addr); err != nil {
		return fmt.Errorf("paddock: bad cluster address %q: %w", p.Addr, err)
	}
	return s.changeMembership(&membershipOp{Kind: "add", ID: p.ID, Addr: p.Addr, Observer: p.Observer,
		Election: p.ElectionPort, Client: p.ClientAddr})
}

// RemoveMember removes a node from the configuration.
func (s *Server) RemoveMember(id string) error {
	err := s.changeMembership(&membershipOp{Kind: "remove", ID: id})
	s.handOffIfRemoved()
	return err
}

// TransferLeadership hands leadership to node to ("" picks the most
// up-to-date follower).
func (s *Server) TransferLeadership(to string) error {
	return s.changeMembership(&membershipOp{Kind: "transfer", ID: to})
}

func (s *Server) changeMembership(op *membershipOp) error {
	if !s.cfg.clustered() {
		return ErrStandalone
	}
	// Right after an election this node may not know the leader yet, or
	// still reach the old one, which refuses: as a ZooKeeper follower
	// holds a request until it has synced with the new leader, the change
	// waits for one (a refusal says it was not run, so it is safe to send
	// again), within membershipTimeout.
	deadline := time.Now().Add(membershipTimeout)
	return s.untilLeader(deadline, func() error {
		if s.isLeader() {
			return s.applyMembership(op)
		}
		resp, err := s.fwd.call(&fwdRequest{Kind: fwdMembership, Membership: op}, time.Until(deadline), false)
		if err == nil && resp.Err != "" {
			err = errors.New(resp.Err)
		}
		return err
	})
}

// untilLeader runs try until it does not fail for want of a leader (a
// node that knows none, or names one that no longer leads: errNoLeader,
// which says the request was not run), backing off, until deadline.
func (s *Server) untilLeader(deadline time.Time, try func() error) error {
	for backoff := time.Millisecond; ; backoff = min(2*backoff, 50*time.Millisecond) {
		err := try()
		noLeader := errors.Is(err, errNoLeader) || (err != nil && err.Error() == errNoLeader.Error())
		if !noLeader || time.Now().Add(backoff).After(deadline) {
			return err
		}
		select {
		case <-time.After(backoff):
		case <-s.ctx.Done():
			return err
		}
	}
}

// applyMembership runs on the leader.
func (s *Server) applyMembership(op *membershipOp) error {
	r := s.node.r
	var change raft.IndexFuture
	switch op.Kind {
	case "add":
		if op.Observer {
			change = r.AddNonvoter(raft.ServerID(op.ID), raft.ServerAddress(op.Addr), 0, membershipTimeout)
		} else {
			change = r.AddVoter(raft.ServerID(op.ID), raft.ServerAddress(op.Addr), 0, membershipTimeout)
		}
	case "remove":
		id := raft.ServerID(op.ID)
		if m, ok := s.memberID(op.ID); ok {
			id = m // ids are numbers: 03 is 3, as in ZooKeeper
		}
		change = r.RemoveServer(id, 0, membershipTimeout)
	case "reconfig":
		if op.Reconfig == nil {
			return errors.New("paddock: reconfig without its request")
		}
		return s.reconfigOnLeader(op.Reconfig)
	case "transfer":
		if op.ID == "" {
			return s.transferLeadership(func() raft.Future { return r.LeadershipTransfer() })
		}
		addr := ""
		members, merr := s.Members()
		if merr != nil {
			return merr
		}
		to := op.ID
		for _, m := range members {
			if sameID(m.ID, op.ID) {
				to, addr = m.ID, m.Addr
			}
		}
		if addr == "" {
			return fmt.Errorf("paddock: no member %q", op.ID)
		}
		return s.transferLeadership(func() raft.Future {
			return r.LeadershipTransferToServer(raft.ServerID(to), raft.ServerAddress(addr))
		})
	default:
		return fmt.Errorf("paddock: unknown membership change %q", op.Kind)
	}
	if err := settled(s.node, change).Error(); err != nil {
		return err
	}
	if op.Kind == "remove" && sameID(op.ID, string(s.node.id)) {
		// This leader removed itself: it steps down once the change is
		// committed, which it now is, and proposes nothing more (Raft
		// answers ErrNotLeader even while it is still stepping down).
		// The next leader publishes the configuration (ensureConfig).
		// Whoever answers the removal hands the leadership over once the
		// answer is on its way (handOffIfRemoved).
		s.log.Info("removed this node from the cluster; the next leader publishes /zookeeper/config", "id", op.ID)
		s.handoffAt.Store(monoNow())
		return nil
	}
	var added *Peer
	if op.Kind == "add" {
		added = &Peer{ID: op.ID, ElectionPort: op.Election, ClientAddr: op.Client}
	}
	// The configuration's version is the zxid of its change (ZooKeeper's:
	// the reconfig's), here the Raft index of the configuration entry.
	if err := s.publishConfig(int64(change.Index()), added); err != nil {
		if op.Kind == "remove" && s.node.r.State() != raft.Leader {
			// Leadership moved since the change was committed: it is
			// made, and the next leader publishes it (ensureConfig).
			return nil
		}
		return err
	}
	return nil
}

// ConfigData renders the membership as ZooKeeper's dynamic config, the
// data of /zookeeper/config:
//
//	server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181
//	version=<hex zxid>
//
// Raft keeps only a member's id and cluster address; the election port
// and client address come from this node's static configuration, then
// from what /zookeeper/config says now, which overrides it (a member
// added or changed by reconfig: the state every node holds, so a new
// leader publishes them too, as ZooKeeper's dynamic configuration wins
// over the static one), then from added, a member being added or changed.
func (s *Server) configData(members []Member, version int64, added *Peer) []byte {
	published, _, _ := s.fsm.Get(fsm.ConfigPath)
	peers := slices.Clone(s.cfg.Peers)
	for _, line := range strings.Split(string(published), "\n") {
		// Line by line: one an older Paddock wrote that does not parse
		// (an IPv6 host without brackets) loses no other line's ports.
		if p, err := parseMemberList(line); err == nil {
			for i := range p {
				// 0 is shown for none known; an older Paddock showed the
				// quorum port again.
				if _, q, _ := net.SplitHostPort(p[i].Addr); p[i].ElectionPort == "0" || p[i].ElectionPort == q {
					p[i].ElectionPort = ""
				}
			}
			peers = append(peers, p...)
		}
	}
	if added != nil {
		peers = append(peers, *added)
	}
	known := map[string]Peer{}
	for _, p := range peers {
		k := known[p.ID]
		if p.ElectionPort != "" {
			k.ElectionPort = p.ElectionPort
		}
		if p.ClientAddr != "" {
			k.ClientAddr = p.ClientAddr
		}
		known[p.ID] = k
	}
	var b strings.Builder
	for _, m := range members {
		host, port, _ := net.SplitHostPort(m.Addr)
		if strings.Contains(host, ":") {
			host = "[" + host + "]" // IPv6, as ZooKeeper writes it
		}
		p := known[m.ID]
		role := "participant"
		if m.Observer {
			role = "observer"
		}
		fmt.Fprintf(&b, "server.%s=%s:%s:%s:%s", m.ID, host, port, shownElectionPort(p.ElectionPort, port), role)
		if p.ClientAddr != "" {
			fmt.Fprintf(&b, ";%s", p.ClientAddr)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "version=%x", version)
	return []byte(b.String())
}

// shownElectionPort is the election port /zookeeper/config shows for a
// member with this quorum port: the one configured, or 0 when none is
// known (a cluster started with --peer) or it is not a port other than
// the quorum port. Java's parser (QuorumPeer.QuorumServer, used by
// Curator's EnsembleTracker, ZooKeeperAdmin users and zkCli's config -c)
// needs a number other than the quorum port there ("Client and election
// port must be different!"); Paddock has no election port, and 0 is no
// port.
func shownElectionPort(election, quorum string) string {
	e, err := strconv.ParseUint(election, 10, 16)
	if q, _ := strconv.ParseUint(quorum, 10, 16); err != nil || e == q {
		return "0"
	}
	return election
}

// publishConfig writes the current membership, at version, into
// /zookeeper/config (firing its watches, which Curator's EnsembleTracker
// follows); added is a member just added, or nil.
func (s *Server) publishConfig(version int64, added *Peer) error {
	members, err := s.Members()
	if err != nil {
		return err
	}
	_, err = s.apply(&fsm.Command{Type: fsm.CmdSetConfig, Data: s.configData(members, version, added)})
	return err
}

// configPublished reports whether /zookeeper/config, as this node has
// applied it, lists the members of its Raft configuration.
func (s *Server) configPublished() (bool, error) {
	members, err := s.Members()
	if err != nil {
		return false, err
	}
	published, _ := s.publishedConfig()
	want, _, _ := strings.Cut(string(s.configData(members, 0, nil)), "version=")
	return published == want, nil
}

// publishedConfig returns /zookeeper/config's member lines (without the
// version line) and its version (-1 if it has none).
func (s *Server) publishedConfig() (members string, version int64) {
	data, _, _ := s.fsm.Get(fsm.ConfigPath)
	members, v, ok := strings.Cut(string(data), "version=")
	if !ok {
		return members, -1
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 16, 64)
	if err != nil {
		return members, -1
	}
	return members, n
}

// isMember reports whether id is in Raft's latest configuration, under
// any spelling of the same number ("04" is 4). A node being removed is
// not, from the moment its removal is appended: the leader then stops
// sending it the log (best effort up to the removal), so a write it
// forwarded would be applied without it ever seeing that, and its client
// would get ConnectionLoss for a write that was made. serveForward
// therefore serves a node's forwarded requests only while it is a member,
// as a ZooKeeper leader drops a removed learner. The configuration is an
// atomic read in Raft (GetConfiguration answers at once).
func (s *Server) isMember(id string) bool {
	_, ok := s.memberID(id)
	return ok
}

// memberID returns the spelling Raft's latest configuration has for the
// member id names, and whether there is one.
func (s *Server) memberID(id string) (raft.ServerID, bool) {
	f := s.node.r.GetConfiguration()
	if f.Error() != nil {
		return "", false
	}
	servers := f.Configuration().Servers
	for _, srv := range servers {
		if srv.ID == raft.ServerID(id) {
			return srv.ID, true
		}
	}
	for _, srv := range servers {
		if sameID(string(srv.ID), id) {
			return srv.ID, true
		}
	}
	return "", false
}
