package server

import "github.com/hashicorp/raft"

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
	f := s.node.r.GetConfiguration()
	if f.Error() != nil {
		return false
	}
	servers := f.Configuration().Servers
	for _, srv := range servers {
		if srv.ID == raft.ServerID(id) {
			return true
		}
	}
	for _, srv := range servers {
		if sameID(string(srv.ID), id) {
			return true
		}
	}
	return false
}
