package server

// fail records err and stops the server: called when a write of the
// Raft log fails (failStopLog in every role; leaderLog for the leader's
// queued writes, which Raft was told were stored) or of Raft's term or
// vote (failStopStable). Serving on could lose
// or reorder acknowledged writes, or, with a store that does not recover,
// take no write ever again; ZooKeeper and etcd exit on a failed log
// write for the same reasons.
func (s *Server) fail(err error) {
	s.failOnce.Do(func() {
		s.log.Error("stopping the server", "err", err)
		s.failure = err
		close(s.failed)
	})
}

// stopOnFailure closes the server once it failed.
func (s *Server) stopOnFailure() {
	select {
	case <-s.failed:
		_ = s.Close()
	case <-s.ctx.Done():
	}
}

// Failed is closed when the server stopped itself after an error it
// cannot recover from (a failed write of the Raft log, such as a full
// disk); Err returns the error. A process serving one Server should exit
// then.
func (s *Server) Failed() <-chan struct{} { return s.failed }

// Err returns the error the server stopped itself for, once Failed is
// closed, and nil before.
func (s *Server) Err() error {
	select {
	case <-s.failed:
		return s.failure
	default:
		return nil
	}
}
