package server

import "time"

// Per-session order across connections. ZooKeeper applies a session's
// requests in the order they were sent even when the client moves to a new
// connection of the same server: the old connection's requests are already
// in the pipeline ahead of anything the new one sends, and its
// CommitProcessor holds a session's reads behind its pending writes. Here a
// request read from the old socket is proposed by that connection's reader
// goroutine, which can still be running when the client, having seen the
// connection drop, re-attaches and sends its next request — typically
// getData to learn whether a create whose reply was lost was applied. A
// late proposal would make the answer wrong (the lock recipes would then
// wait for their own node). So re-attaching a session first closes the
// session's older connections, waits until their readers have stopped
// (whatever they read is then proposed), and, if any of them had requests
// still unanswered, until everything proposed so far is applied, as sync
// does. Only then does the new connection read its first request.

// testHooks let this package's tests stop a connection at chosen points.
type testHooks struct {
	beforeHandle   func(frame []byte)  // a reader read a request frame
	awaitedReaders func()              // a re-attach found older readers to wait for
	beforeBind     func(session int64) // a handshake is about to bind its session
	// beforeGoneClose: sessionGone is about to queue the connection's close
	beforeGoneClose func()
	// createSegment: a raft-wal segment file is about to be created; an
	// error fails the creation (a full disk).
	createSegment func(name string) error
	// beforeEnsureConfig: a new leader is about to check (and publish)
	// /zookeeper/config.
	beforeEnsureConfig func()
	// afterHandshakeReply: a handshake's reply was written.
	afterHandshakeReply func()
}

// addReader records that c reads requests of session id.
func (s *Server) addReader(id int64, c *conn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	set := s.readers[id]
	if set == nil {
		set = make(map[*conn]struct{})
		s.readers[id] = set
	}
	set[c] = struct{}{}
}

// readerStopped is deferred by serve: c reads no more requests.
func (c *conn) readerStopped() {
	if id := c.SessionID(); id != 0 {
		s := c.s
		s.mu.Lock()
		if set := s.readers[id]; set != nil {
			delete(set, c)
			if len(set) == 0 {
				delete(s.readers, id)
			}
		}
		s.mu.Unlock()
	}
	close(c.readerDone)
}

// awaitReaders closes every connection still reading requests of session
// id and waits, at most cfg.ReattachWait in all, until their readers stop.
func (s *Server) awaitReaders(id int64) {
	s.mu.Lock()
	old := make([]*conn, 0, len(s.readers[id]))
	for c := range s.readers[id] {
		old = append(old, c)
	}
	s.mu.Unlock()
	if len(old) == 0 {
		return
	}
	if h := s.cfg.hooks; h != nil && h.awaitedReaders != nil {
		h.awaitedReaders()
	}
	wait := s.cfg.ReattachWait
	if wait <= 0 {
		wait = DefaultReattachWait
	}
	wait = max(wait, s.proposeTimeout())
	timer := time.NewTimer(wait)
	defer timer.Stop()
	unanswered := false
	for _, c := range old {
		c.close()
		select {
		case <-c.readerDone:
		case <-timer.C:
			s.log.Warn("re-attach: an older connection of the session is still reading", "session", hexID(id))
			return
		}
		unanswered = unanswered || c.deferred.Load() > 0
	}
	if unanswered {
		if err := s.syncFuture().Error(); err != nil {
			s.log.Info("re-attach: waiting for the older connection's requests", "session", hexID(id), "err", err)
		}
	}
}
