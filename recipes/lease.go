package recipes

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/paddockzk/paddock/client"
)

// Lease is one acquisition of a lock, a semaphore lease or a leadership.
// It carries the proof of the hold for fencing (Token, Guard) and reports
// its loss (Lost, Err).
//
// A Lease is held from the moment the call that returned it succeeded
// until it is released or lost. It is lost when its node is deleted by
// anyone but its holder, or when its session ends (expiry, Close). The
// holder learns of an expiry only once it reconnects to a server, so for
// a while a lost Lease still looks held: see the package documentation on
// fencing.
type Lease struct {
	conn  *client.Conn
	node  string
	czxid int64
	token int64
	guard []client.Op
	// sweep, if set, is the id prefix of late copies of the node (a
	// create whose reply was lost) to delete on release.
	sweep string

	lost    chan struct{}
	ctx     context.Context // ends when the lease is released
	cancel  context.CancelFunc
	monitor chan struct{} // closed when the monitor goroutine exits

	mu  sync.Mutex
	err error
}

// newLease starts monitoring node through watch (a data watch just set on
// it by a read that returned czxid).
func newLease(conn *client.Conn, node string, czxid, token int64, guard []client.Op, watch <-chan client.Event) *Lease {
	l := &Lease{
		conn: conn, node: node, czxid: czxid, token: token, guard: guard,
		lost:    make(chan struct{}),
		monitor: make(chan struct{}),
	}
	l.ctx, l.cancel = context.WithCancel(context.Background())
	go l.watch(watch)
	return l
}

// Node returns the path of the node whose existence proves the hold.
func (l *Lease) Node() string { return l.node }

// Token returns the fencing token: the zxid that created the hold (the
// lock node's czxid). Tokens of successive holders of a lock (of the
// write side of a read/write lock, of a leadership) strictly increase, so
// a resource that remembers the largest token it has seen can refuse a
// stale holder.
func (l *Lease) Token() int64 { return l.token }

// Lost returns a channel closed when the lease is lost while held: its
// node was deleted by someone else or its session ended. It is not closed
// by a normal release.
func (l *Lease) Lost() <-chan struct{} { return l.lost }

// Err returns nil while the lease is held (as far as this client knows),
// an error wrapping ErrLockLost and the cause once lost, or ErrReleased
// after a normal release.
func (l *Lease) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// Guard returns the operations that fail a Multi unless the lease is
// still held: a check that the lease's node exists (and, for the unfair
// recipes, that no later holder has come since). Put them first in a
// Multi, or use FencedMulti.
func (l *Lease) Guard() []client.Op { return slices.Clone(l.guard) }

// FencedMulti applies ops atomically with the lease's Guard in front: the
// ops are applied only if the lease is still held at that point of the
// server's history. When the guard fails, the error wraps both
// ErrLockLost and the *client.MultiError. The results are those of ops
// (without the guard's).
func (l *Lease) FencedMulti(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	n := len(l.guard)
	res, err := l.conn.Multi(ctx, append(l.Guard(), ops...)...)
	if len(res) >= n {
		res = res[n:]
	}
	var me *client.MultiError
	if errors.As(err, &me) && me.Index < n {
		return res, fmt.Errorf("%w: %w", ErrLockLost, err)
	}
	return res, err
}

// FencedSet sets path's data (if its version matches; -1 for any) only if
// the lease is still held: multi(check lock node, setData). It fails with
// an error wrapping ErrLockLost when the lease is gone.
func (l *Lease) FencedSet(ctx context.Context, path string, data []byte, version int32) (*client.Stat, error) {
	res, err := l.FencedMulti(ctx, client.SetDataOp(path, data, version))
	if err != nil {
		return nil, err
	}
	return res[0].Stat, nil
}

// lose records the loss, once.
func (l *Lease) lose(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = fmt.Errorf("%w: %w", ErrLockLost, cause)
		close(l.lost)
	}
}

// watch follows the lease's node until it is deleted, the session ends
// or the lease is released.
func (l *Lease) watch(ch <-chan client.Event) {
	defer close(l.monitor)
	for ch != nil {
		select {
		case <-l.ctx.Done():
			return
		case ev := <-ch:
			switch {
			case ev.Err != nil:
				l.lose(ev.Err)
				return
			case ev.Type == client.EventNodeDeleted:
				l.lose(ErrNodeDeleted)
				return
			}
			// Data changed, or the watch was removed: watch again.
			ch = l.rewatch()
		}
	}
}

// rewatch sets a new data watch on the node; it returns nil when the
// lease ended (released or lost).
func (l *Lease) rewatch() <-chan client.Event {
	for {
		_, st, ch, err := l.conn.GetW(l.ctx, l.node)
		switch {
		case err == nil && st.Czxid == l.czxid:
			return ch
		case err == nil || errors.Is(err, client.ErrNoNode):
			l.lose(ErrNodeDeleted)
			return nil
		case l.ctx.Err() != nil:
			return nil
		case isTerminal(err):
			l.lose(err)
			return nil
		}
		if !pause(l.ctx, retryPause) {
			return nil
		}
	}
}

// stop ends monitoring and marks the lease released (unless it was lost
// first).
func (l *Lease) stop() {
	l.cancel()
	<-l.monitor
	l.mu.Lock()
	if l.err == nil {
		l.err = ErrReleased
	}
	l.mu.Unlock()
}

// unwatch removes the monitor's data watch from the server, so that
// deleting the node notifies only the waiters. Best effort, also after
// ctx ended.
func (l *Lease) unwatch(ctx context.Context, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	err := l.conn.RemoveWatches(ctx, l.node, client.WatcherData)
	_ = err // ErrNoWatcher, or the session is gone: nothing to remove.
}

// retryPause is the pause between retries of a read that failed with a
// connection loss (the client itself waits for a reconnection).
const retryPause = 20 * time.Millisecond

// pause waits d or until ctx ends; it reports whether ctx is still live.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// isTerminal reports errors after which the session, and every ephemeral
// node of it, is gone for this Conn.
func isTerminal(err error) bool {
	return errors.Is(err, client.ErrSessionExpired) || errors.Is(err, client.ErrClosed) ||
		errors.Is(err, client.ErrAuthFailed)
}

// isRetryable reports errors after which the same request may be retried.
func isRetryable(err error) bool {
	return errors.Is(err, client.ErrConnectionLoss) || errors.Is(err, client.ErrOperationTimeout)
}

// retryAfter reports whether to try again after err: it is retryable and
// the pause before the retry ran to its end. When the context ends during
// that pause, *err becomes the context's error: a call whose context ended
// returns that, not the connection loss it was about to retry.
func retryAfter(ctx context.Context, err *error) bool {
	if !isRetryable(*err) {
		return false
	}
	if !pause(ctx, retryPause) {
		*err = ctx.Err()
		return false
	}
	return true
}
