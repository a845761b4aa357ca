package server

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// reconfig answers ZooKeeper's reconfig (opcode 16): with reconfigEnabled
// it performs Raft membership changes. As in ZooKeeper the caller needs
// WRITE on /zookeeper/config, whose default ACL is read-only for everyone,
// so only the super user (or skipACL) may reconfigure unless an operator
// grants it. The reply is /zookeeper/config's new data and Stat.
func (c *conn) reconfig(p *pendingReply, r *wire.ReconfigRequest) {
	switch {
	case !c.s.cfg.ReconfigEnabled:
		p.code = wire.ErrReconfigDisabled
		return
	case !c.s.cfg.clustered():
		p.code = wire.ErrUnimplemented // standalone: "reconfiguration currently not supported"
		return
	}
	// In order with the connection's earlier requests, as ZooKeeper's
	// PrepRequestProcessor takes it: its reads are answered and its writes
	// (a setACL on /zookeeper/config too) applied before the permission
	// check and the membership (and /zookeeper/config) change.
	if !c.awaitDeferredReads() {
		p.code = wire.ErrConnectionLoss
		return
	}
	prev := c.lastWrite
	allowed := func() bool {
		acl, _, err := c.s.fsm.GetACL(fsm.ConfigPath)
		return err != nil || c.allowed(acl, wire.PermWrite)
	}
	var code wire.Code // a refusal: answered, and the connection stays
	ff := &fwdFuture{done: make(chan struct{}), res: &fsm.Result{}}
	go func() {
		defer close(ff.done)
		if prev != nil {
			_ = prev.Error() // applied or failed: either way it is settled
		}
		if !allowed() {
			code = wire.ErrNoAuth
			return
		}
		err := c.s.runReconfig(r)
		var refused wire.Code // errReconfig's, here or from the leader
		if errors.As(err, &refused) {
			code, err = refused, nil
		}
		ff.err = err
		// The reply shows the new /zookeeper/config: its events go first.
		ff.res.Zxid = c.s.fsm.LastZxid()
	}()
	c.deferred.Add(1)
	p.future = ff
	c.reconfiguring = ff
	p.finish = func(*fsm.Result) (wire.Code, wire.Record) {
		if code != wire.OK {
			return code, nil
		}
		data, st, err := c.s.fsm.Get(fsm.ConfigPath)
		if err != nil {
			return wire.CodeOf(err), nil
		}
		return wire.OK, &wire.GetDataResponse{Data: data, Stat: st}
	}
}

// errReconfig carries a protocol code out of runReconfig.
type errReconfig struct{ code wire.Code }

func (e errReconfig) Error() string { return e.code.Error() }
func (e errReconfig) Unwrap() error { return e.code }

// runReconfig applies an incremental (joining/leaving) or non-incremental
// (newMembers) reconfiguration. The leader runs it, one at a time, so
// that fromConfig is a condition as a setData's version is: of two
// reconfigs from the same version the second finds it replaced. The
// answer shows /zookeeper/config as this node has applied it since.
func (s *Server) runReconfig(r *wire.ReconfigRequest) error {
	err := s.changeMembership(&membershipOp{Kind: "reconfig", Reconfig: &reconfigArgs{
		Joining: r.JoiningServers, Leaving: r.LeavingServers, Members: r.NewMembers, From: r.CurConfigID}})
	s.handOffIfRemoved() // this node led, and removed itself
	if err != nil {
		return err
	}
	// The change is made; the answer, which shows /zookeeper/config,
	// waits until this node has applied it. A reconfig that removed the
	// leader leaves a node that may still name the old one, which refuses
	// the sync: wait for the next. That next leader publishes the change
	// in /zookeeper/config (ensureConfig, after its first barrier), which
	// may come after the sync: sync again until /zookeeper/config lists
	// the membership this node now has.
	deadline := time.Now().Add(membershipTimeout)
	for {
		var idx int64
		err = s.untilLeader(deadline, func() (err error) {
			idx, err = s.syncIndex()
			return err
		})
		if err == nil {
			err = s.waitApplied(idx, time.Until(deadline))
		}
		if err != nil {
			return err
		}
		if ok, err := s.configPublished(); err != nil || ok {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("paddock: reconfig made, but /zookeeper/config not published within %v", membershipTimeout)
		}
		time.Sleep(reconfigPublishPoll)
	}
}

// reconfigPublishPoll is how long a reconfig's answer waits between syncs
// for the next leader to publish a change that removed the old one.
const reconfigPublishPoll = 5 * time.Millisecond

// reconfigArgs is a reconfig request forwarded to the leader.
type reconfigArgs struct {
	Joining string `msgpack:"j,omitempty"`
	Leaving string `msgpack:"l,omitempty"`
	Members string `msgpack:"m,omitempty"`
	From    int64  `msgpack:"f"`
}

// reconfigOnLeader checks and applies a reconfig on the leader, under
// reconfigMu: the version check, the membership changes and their
// /zookeeper/config are one step to any other reconfig.
func (s *Server) reconfigOnLeader(args *reconfigArgs) error {
	s.reconfigMu.Lock()
	defer s.reconfigMu.Unlock()
	r := &wire.ReconfigRequest{JoiningServers: args.Joining, LeavingServers: args.Leaving,
		NewMembers: args.Members, CurConfigID: args.From}
	cfg := s.node.r.GetConfiguration()
	if err := cfg.Error(); err != nil {
		return err
	}
	// fromConfig is the version /zookeeper/config gives (ZooKeeper
	// compares it with its last seen configuration's).
	if _, version := s.publishedConfig(); r.CurConfigID != -1 && r.CurConfigID != version {
		return errReconfig{wire.ErrBadVersion}
	}
	current := map[string]bool{}
	for _, srv := range cfg.Configuration().Servers {
		current[string(srv.ID)] = true
	}
	// Ids are numbers, as ZooKeeper reads them: server.01 and 1 name the
	// member the configuration spells 1.
	canon := func(id string) string {
		for m := range current {
			if sameID(m, id) {
				return m
			}
		}
		return id
	}
	var join []Peer
	var leave []string
	if r.NewMembers != "" {
		peers, err := parseMemberList(r.NewMembers)
		if err != nil {
			return errReconfig{wire.ErrBadArguments}
		}
		want := map[string]bool{}
		for _, p := range peers {
			p.ID = canon(p.ID)
			want[p.ID] = true
			if !current[p.ID] {
				join = append(join, p)
			}
		}
		for id := range current {
			if !want[id] {
				leave = append(leave, id)
			}
		}
	} else {
		peers, err := parseMemberList(r.JoiningServers)
		if err != nil {
			return errReconfig{wire.ErrBadArguments}
		}
		join = peers
		for i := range join {
			join[i].ID = canon(join[i].ID)
		}
		if err := s.checkJoining(cfg.Configuration(), join); err != nil {
			return err
		}
		for _, id := range strings.Split(r.LeavingServers, ",") {
			if id = strings.TrimSpace(id); id != "" {
				leave = append(leave, canon(id))
			}
		}
	}
	if !s.cfg.OneVoterCluster && votersAfter(cfg.Configuration(), join, leave) < 2 {
		// ZooKeeper, standaloneEnabled: "at least 1 follower" must stay.
		return errReconfig{wire.ErrBadArguments}
	}
	for _, p := range join {
		if err := s.AddPeer(p); err != nil {
			return err
		}
	}
	leader := s.Leader()
	leave = leaderLast(leave, leader) // sorted: also drops an id named twice (3 and 03)
	for i, id := range leave {
		// Not RemoveMember: the hand-off of a removed leader waits
		// until the reconfig is answered.
		err := s.changeMembership(&membershipOp{Kind: "remove", ID: id})
		// Removing the leader makes it step down once the change is
		// committed; its answer may then be ErrNotLeader. It goes last,
		// so no other removal is lost to the election that follows.
		if err != nil && !(i == len(leave)-1 && id == leader && errors.Is(err, raft.ErrNotLeader)) {
			return err
		}
	}
	return nil
}

// checkJoining refuses, as ZooKeeper's incremental reconfig does
// (BADARGUMENTS), a joining server without its quorum, election and client
// ports, with an election port equal to its quorum port, or with an
// address another member (or another joiner) uses.
func (s *Server) checkJoining(conf raft.Configuration, join []Peer) error {
	used := map[string]string{} // host:port -> member id
	lines, _ := s.publishedConfig()
	published, _ := parseMemberList(lines)
	election := map[string]string{}
	for _, p := range published {
		if p.ElectionPort != "0" { // 0: not known
			election[p.ID] = p.ElectionPort
		}
	}
	for _, srv := range conf.Servers {
		used[string(srv.Address)] = string(srv.ID)
		if host, _, err := net.SplitHostPort(string(srv.Address)); err == nil && election[string(srv.ID)] != "" {
			used[net.JoinHostPort(host, election[string(srv.ID)])] = string(srv.ID)
		}
	}
	for _, p := range join {
		host, port, err := net.SplitHostPort(p.Addr)
		if err != nil || p.ElectionPort == "" || p.ClientAddr == "" || p.ElectionPort == port {
			return errReconfig{wire.ErrBadArguments}
		}
		for _, addr := range []string{p.Addr, net.JoinHostPort(host, p.ElectionPort)} {
			if id, ok := used[addr]; ok && !sameID(id, p.ID) {
				return errReconfig{wire.ErrBadArguments}
			}
			used[addr] = p.ID
		}
	}
	return nil
}

// votersAfter counts the voting members of conf once join has joined and
// leave has left.
func votersAfter(conf raft.Configuration, join []Peer, leave []string) int {
	voter := map[string]bool{}
	for _, srv := range conf.Servers {
		voter[string(srv.ID)] = srv.Suffrage == raft.Voter
	}
	for _, p := range join {
		voter[p.ID] = !p.Observer
	}
	for _, id := range leave {
		delete(voter, id)
	}
	n := 0
	for _, v := range voter {
		if v {
			n++
		}
	}
	return n
}

// leaderLast sorts ids (a map's order must not decide the outcome),
// drops repeats, and moves leader, if it is among them, to the end.
func leaderLast(ids []string, leader string) []string {
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if i := slices.Index(ids, leader); i >= 0 {
		ids = append(append(ids[:i:i], ids[i+1:]...), leader)
	}
	return ids
}

// parseMemberList parses "server.N=host:q:e[:role][;client],..." (commas
// or newlines), as ZooKeeper's reconfig accepts.
func parseMemberList(s string) ([]Peer, error) {
	var out []Peer
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '\n' }) {
		item = strings.TrimSpace(item)
		if item == "" || strings.HasPrefix(item, "version=") {
			continue
		}
		key, val, ok := strings.Cut(item, "=")
		id, isServer := strings.CutPrefix(key, "server.")
		if !ok || !isServer {
			return nil, errors.New("want server.N=host:port:port")
		}
		if _, err := strconv.Atoi(id); err != nil {
			return nil, err
		}
		p, err := ParseServerLine(id, val)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}
