package server

// Order of watch events and replies on a connection. ZooKeeper sends a
// connection's replies and watch events in the order of the state they
// come from: an event goes out before any reply that shows its change,
// and after every reply computed before the change (FinalRequestProcessor
// queues a change's events as it applies it, and each reply as it
// computes it). Here a reply is computed by the reader or by the writer,
// and reaches the outbound buffer only when the writer goroutine gets to
// it, while events are queued by the apply goroutine, under the state's
// write lock, before the change is readable.
//
// Two rules keep the order:
//
//   - An event never overtakes a reply counted before it: each request
//     read counts one reply (repliesQueued, before it is handled), the
//     writer counts the replies it appends to the outbound buffer
//     (repliesOut), and an event goes out at once only when every reply
//     counted before it is out; otherwise it waits in held. A client that
//     clears a cached node on the event and fills it from an older reply
//     would keep stale data for good. Events wait only on connections with
//     replies in flight (a fan-out to idle watchers is not slowed).
//   - A reply that shows a change goes out after its event: every reply
//     carries the zxid of the state it was computed from (a write's own
//     zxid, a read's view; pendingReply.at), and before the writer encodes
//     it, the held events of changes up to that zxid go out, after the
//     replies before it (releaseBefore). Those events were queued before
//     that state was readable, so none can be missed. Replies on a
//     connection are computed from states that never go back (a read
//     behind an unanswered write waits for it), so this never moves an
//     event before a reply computed from an older state. So a write's own
//     events go just before its reply, and so do those setWatches raises
//     for changes the client missed, as in ZooKeeper.

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
	c.heldN.Store(int32(len(c.held)))
	c.heldBytes += len(frame)
	c.outMu.Unlock()
	return false
}

// enqueueReplies appends n replies' frames (possibly none, for requests
// without a reply) to the outbound buffer, then every held event whose
// earlier replies are now all out, and wakes the writer.
func (c *conn) enqueueReplies(frames []byte, n int) {
	if c.appendReplies(frames, n) {
		c.signal()
	}
}

// appendReplies is enqueueReplies without waking the writer. It reports
// false when the connection was closed as a slow consumer instead.
func (c *conn) appendReplies(frames []byte, n int) bool {
	c.outMu.Lock()
	if c.overLocked(len(frames)) {
		c.outMu.Unlock()
		c.slowConsumer()
		return false
	}
	c.appendOutLocked(frames)
	c.repliesOut += uint64(n)
	c.releaseLocked(func(h *heldEvent) bool { return h.mark <= c.repliesOut })
	c.outMu.Unlock()
	return true
}

// releaseBefore is called by the writer before it encodes a reply that
// reflects the state at zxid (the last reply counted in b, not encoded
// yet): the held events of changes up to zxid go out first, after the
// replies before it in b.
func (c *conn) releaseBefore(b *replyBatch, zxid int64) {
	if c.heldN.Load() == 0 {
		return // nothing held (an event held from now on is newer than zxid)
	}
	c.outMu.Lock()
	ready := len(c.held) > 0 && c.held[0].zxid <= zxid
	c.outMu.Unlock()
	if !ready {
		return
	}
	b.n--
	b.enqueue(c) // the replies before this one
	b.n = 1
	c.releaseHeld(zxid)
}

// releaseHeld moves the held events of changes up to zxid to the
// outbound buffer. Every reply before the one about to be queued must be
// in the buffer already.
func (c *conn) releaseHeld(zxid int64) {
	if c.heldN.Load() == 0 {
		return
	}
	c.outMu.Lock()
	c.releaseLocked(func(h *heldEvent) bool { return h.zxid <= zxid })
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
		c.heldN.Store(int32(len(c.held)))
	}
}
