package server

import (
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// frameWriter sends forwarding messages from many goroutines over one
// connection in few writes: a sender that finds no write in progress
// becomes the flusher and writes everything queued, including what others
// queue meanwhile; the others return at once. Under load one syscall
// carries many messages instead of one each.
type frameWriter struct {
	c       net.Conn
	timeout time.Duration

	mu       sync.Mutex
	buf      []byte
	spare    []byte
	flushing bool
	err      error
}

func newFrameWriter(c net.Conn, timeout time.Duration) *frameWriter {
	return &frameWriter{c: c, timeout: timeout}
}

// errFwdRetired refuses a frame for a connection to a former leader.
var errFwdRetired = errors.New("paddock: the connection goes to a former leader")

// retire makes every later send fail with errFwdRetired, and stops a
// flush in progress after its current write.
func (w *frameWriter) retire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = errFwdRetired
	}
}

// send queues v (msgpack, framed by a 4-byte big-endian length) and
// flushes unless another sender is flushing. A write error is returned to
// the flusher and to every later sender; the caller closes the connection.
// Once retired, a send fails with errFwdRetired unless v went out.
func (w *frameWriter) send(v any) error {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.buf = binary.BigEndian.AppendUint32(w.buf, uint32(len(b)))
	w.buf = append(w.buf, b...)
	if w.flushing {
		return nil
	}
	w.flushing = true
	written := false // v went out (in the first write)
	for len(w.buf) > 0 && w.err == nil {
		out := w.buf
		w.buf = w.spare[:0]
		w.mu.Unlock()
		_ = w.c.SetWriteDeadline(time.Now().Add(w.timeout))
		_, err := w.c.Write(out)
		w.mu.Lock()
		w.spare = out[:0]
		if err != nil {
			w.err = err
		} else {
			written = true // w.err may be errFwdRetired meanwhile: kept
		}
	}
	w.flushing = false
	if written && errors.Is(w.err, errFwdRetired) {
		return nil // retired after v was sent: its answer may still come
	}
	return w.err
}
