package server

// Order of watch events and replies on a connection. ZooKeeper sends a
// connection's replies and watch events in the order of the state they
// come from: a reply computed before a change went out before that
// change's event. Here a reply is computed by the reader (or resolved by
// the writer) and reaches the outbound buffer only when the writer
// goroutine gets to it, while Notify runs on the apply goroutine. So an
// event must not overtake a reply to a request read before it was
// applied: a client that clears a cached node on the event and fills it
// from that older reply would keep stale data for good.
//
// Each request read counts one reply (repliesQueued, before it is
// handled); the writer counts the replies it appends to the outbound
// buffer (repliesOut). An event goes out at once when every reply counted
// before it is out, and otherwise waits in held until they are: events
// never overtake an older reply, and wait only on connections with
// replies in flight (a fan-out to idle watchers is not slowed). An event
// may so follow a reply computed after its change (a read that found the
// change already applied), which is the harmless direction: the client
// learns of a change it has seen. A write's own events go out just before
// its reply, as in ZooKeeper, and so do the events setWatches raises for
// changes the client missed (releaseBefore).

// heldEvent is an encoded event waiting for the replies counted before it.
type heldEvent struct {
	mark  uint64 // repliesQueued when the event was queued
	zxid  int64  // of the change
	frame []byte
}

// queueEvent appends an event frame to the outbound buffer, or holds it
// behind earlier replies. It reports whether the frame is in the buffer
// (ready to write); false also when the connection was closed as a slow
// consumer.
func (c *conn) queueEvent(frame []byte, zxid int64) bool {
	mark := c.repliesQueued.Load()
	c.outMu.Lock()
	if len(c.held) == 0 && c.repliesOut >= mark {
		c.outMu.Unlock()
		return c.queue(frame)
	}
	if c.overLocked(len(frame)) {
		c.outMu.Unlock()
		c.slowConsumer()
		return false
	}
	c.held = append(c.held, heldEvent{mark: mark, zxid: zxid, frame: frame})
	c.heldBytes += len(frame)
	c.outMu.Unlock()
	return false
}

// enqueueReplies appends n replies' frames (possibly none, for requests
// without a reply) to the outbound buffer, then every held event whose
// earlier replies are now all out, and wakes the writer.
func (c *conn) enqueueReplies(frames []byte, n int) {
	c.outMu.Lock()
	if c.overLocked(len(frames)) {
		c.outMu.Unlock()
		c.slowConsumer()
		return
	}
	c.appendOutLocked(frames)
	c.repliesOut += uint64(n)
	c.releaseLocked(func(h *heldEvent) bool { return h.mark <= c.repliesOut })
	c.outMu.Unlock()
	c.signal()
}

// releaseBefore is called by the writer before it encodes the reply to a
// write applied at zxid, or to a setWatches (zxid math.MaxInt64): the last
// reply counted in b, not encoded yet. Events of changes up to zxid that
// wait for that reply alone (its own events, and those of writes applied
// before it) go out first: the replies before it in b, then those events,
// as ZooKeeper sends a write's events (and those setWatches raises) before
// its reply.
func (c *conn) releaseBefore(b *replyBatch, zxid int64) {
	c.outMu.Lock()
	next := c.repliesOut + uint64(b.n) // the write's reply: its count
	ready := len(c.held) > 0 && c.held[0].zxid <= zxid && c.held[0].mark <= next
	c.outMu.Unlock()
	if !ready {
		return
	}
	b.n--
	b.enqueue(c) // the replies before the write
	b.n = 1
	c.outMu.Lock()
	c.releaseLocked(func(h *heldEvent) bool { return h.zxid <= zxid && h.mark <= c.repliesOut+1 })
	c.outMu.Unlock()
}

// releaseLocked moves held events to the outbound buffer, in order, while
// ok accepts the first.
func (c *conn) releaseLocked(ok func(*heldEvent) bool) {
	k := 0
	for ; k < len(c.held) && ok(&c.held[k]); k++ {
		c.appendOutLocked(c.held[k].frame)
		c.heldBytes -= len(c.held[k].frame)
	}
	if k > 0 {
		c.held = append(c.held[:0], c.held[k:]...)
	}
}
