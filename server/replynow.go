package server

import "github.com/paddockzk/paddock/internal/wire"

// replyNow answers p from the reader goroutine, without waking the
// writer, when it is a reply already computed (a read answered at once,
// a ping, an error found at the door) and every reply before it on the
// connection is out: it encodes p as the writer would (reply), appends
// it to the outbound buffer and writes it with one non-blocking write(2)
// (tryFlush, as a notifier goroutine does; what the socket does not take,
// or a TLS connection, goes to the writer). A connection of a closed-loop
// client, one request at a time, so answers each read on the goroutine
// that read it, instead of handing it to the writer goroutine, which on a
// busy machine waits its turn for a core. The reader calls it only when
// no further request is buffered: a client that pipelines gets its
// replies batched into one write(2) by the writer, as before. It reports
// whether p was answered; if not, the caller queues it for the writer,
// which keeps the order of replies as before.
func (c *conn) replyNow(p *pendingReply) bool {
	if p.future != nil || p.deferFn != nil || p.viewFn != nil || p.closeAfter || p.noReply {
		return false
	}
	if !c.replyMu.TryLock() {
		return false // the writer is encoding earlier replies
	}
	defer c.replyMu.Unlock()
	c.outMu.Lock()
	// p's own request is the last one counted: is every earlier reply out?
	first := c.repliesOut+1 == c.repliesQueued.Load()
	c.outMu.Unlock()
	if !first {
		return false
	}
	b := &c.fast
	c.reply(b, p)
	ok := c.appendReplies(b.e.Bytes(), b.n)
	b.e.Reset()
	b.n, b.queued = 0, 0
	if cap(b.e.Bytes()) > maxSpareOut {
		b.e = wire.Encoder{} // do not keep a large reply's buffer per connection
	}
	if ok {
		c.tryFlush()
	}
	return true
}
