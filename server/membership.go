package server

import (
	"errors"
	"fmt"
	"net"
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

// RemoveMember removes a node from the configuration.
func (s *Server) RemoveMember(id string) error {
	return s.changeMembership(&membershipOp{Kind: "remove", ID: id})
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
	if !s.isLeader() {
		resp, err := s.fwd.call(&fwdRequest{Kind: fwdMembership, Membership: op}, membershipTimeout, false)
		if err != nil {
			return err
		}
		if resp.Err != "" {
			return errors.New(resp.Err)
		}
		return nil
	}
	return s.applyMembership(op)
}

// applyMembership runs on the leader.
func (s *Server) applyMembership(op *membershipOp) error {
	r := s.node.r
	var err error
	switch op.Kind {
	case "add":
		if op.Observer {
			err = r.AddNonvoter(raft.ServerID(op.ID), raft.ServerAddress(op.Addr), 0, membershipTimeout).Error()
		} else {
			err = r.AddVoter(raft.ServerID(op.ID), raft.ServerAddress(op.Addr), 0, membershipTimeout).Error()
		}
	case "remove":
		err = r.RemoveServer(raft.ServerID(op.ID), 0, membershipTimeout).Error()
	case "transfer":
		if op.ID == "" {
			return s.transferLeadership(func() raft.Future { return r.LeadershipTransfer() })
		}
		addr := ""
		members, merr := s.Members()
		if merr != nil {
			return merr
		}
		for _, m := range members {
			if m.ID == op.ID {
				addr = m.Addr
			}
		}
		if addr == "" {
			return fmt.Errorf("paddock: no member %q", op.ID)
		}
		return s.transferLeadership(func() raft.Future {
			return r.LeadershipTransferToServer(raft.ServerID(op.ID), raft.ServerAddress(addr))
		})
	default:
		return fmt.Errorf("paddock: unknown membership change %q", op.Kind)
	}
	if err != nil {
		return err
	}
	return s.publishConfig()
}

// ConfigData renders the membership as ZooKeeper's dynamic config, the
// data of /zookeeper/config:
//
//	server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181
//	version=<hex zxid>
func (s *Server) configData(members []Member, version int64) []byte {
	known := map[string]Peer{}
	for _, p := range s.cfg.Peers {
		known[p.ID] = p
	}
	var b strings.Builder
	for _, m := range members {
		host, port, _ := net.SplitHostPort(m.Addr)
		p := known[m.ID]
		election := p.ElectionPort
		if election == "" {
			election = port
		}
		role := "participant"
		if m.Observer {
			role = "observer"
		}
		fmt.Fprintf(&b, "server.%s=%s:%s:%s:%s", m.ID, host, port, election, role)
		if p.ClientAddr != "" {
			fmt.Fprintf(&b, ";%s", p.ClientAddr)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "version=%x", version)
	return []byte(b.String())
}

// publishConfig writes the current membership into /zookeeper/config
// (firing its watches, which Curator's EnsembleTracker follows).
func (s *Server) publishConfig() error {
	members, err := s.Members()
	if err != nil {
		return err
	}
	cfg := s.node.r.GetConfiguration()
	if err := cfg.Error(); err != nil {
		return err
	}
	_, err = s.apply(&fsm.Command{Type: fsm.CmdSetConfig, Data: s.configData(members, int64(cfg.Index()))})
	return err
}
