package recipes

import (
	"context"
	"errors"

	"github.com/paddockzk/paddock/client"
)

// LeaderInfo describes the leader of an election.
type LeaderInfo struct {
	// Value is the leader's campaign value (its node's data).
	Value []byte
	// Node is the path of the leader's node.
	Node string
	// Token is the leader's fencing token (its node's czxid): it grows
	// with every change of leader.
	Token int64
}

// Elector is what both elections do.
type Elector interface {
	// Campaign waits (bounded by ctx) until this candidate leads, and
	// returns the Lease of the leadership. Campaigning again while
	// leading returns the same Lease.
	Campaign(ctx context.Context, value []byte) (*Lease, error)
	// Resign gives up the leadership (or the candidacy).
	Resign(ctx context.Context) error
	// Leader returns the current leader, or ErrNoLeader.
	Leader(ctx context.Context) (LeaderInfo, error)
	// Observe returns a channel receiving the leader each time it
	// changes, starting with the current one. It is closed when ctx ends
	// or the session ends. Leaderless periods are not reported. A slow
	// reader misses intermediate leaders, never the latest.
	Observe(ctx context.Context) <-chan LeaderInfo
}

// Election is a fair leader election, as Curator's LeaderLatch, kazoo's
// Election and ZooKeeper's recipes doc make it: every candidate creates
// an ephemeral sequential node; the first in order leads; each other
// candidate watches only its predecessor (herd-free), and leadership
// passes in order of candidacy. It is a Mutex whose contenders store
// their campaign value; with WithCompat(Kazoo) it is exactly a kazoo
// Election (which is a kazoo Lock).
type Election struct {
	d     lockDir
	own   owner
	lease *Lease
}

var _ Elector = (*Election)(nil)

// NewElection returns a fair election on path. Options: WithCompat,
// WithACL, WithContainerParents, WithCleanupTimeout.
func NewElection(conn *client.Conn, path string, opts ...Option) *Election {
	return &Election{d: newLockDir(conn, path, opts), own: newOwner()}
}

var electionRule = waitRule{roles: []role{roleElection}, mine: roleElection, blocker: exclusive}

// Campaign waits until this candidate leads (see Elector). If ctx ends
// first, the candidacy is withdrawn.
func (e *Election) Campaign(ctx context.Context, value []byte) (*Lease, error) {
	if err := e.own.enter(ctx); err != nil {
		return nil, err
	}
	defer e.own.leave()
	if e.lease != nil && e.lease.Err() == nil {
		return e.lease, nil
	}
	if e.lease != nil { // lost: campaign again
		e.d.release(ctx, e.lease)
		e.lease = nil
	}
	l, err := e.d.acquire(ctx, electionRule, value, false)
	if err != nil {
		return nil, err
	}
	e.lease = l
	return l, nil
}

// Resign gives up the leadership; ErrNotLocked if not leading.
func (e *Election) Resign(ctx context.Context) error {
	if err := e.own.enter(ctx); err != nil {
		return err
	}
	defer e.own.leave()
	if e.lease == nil {
		return ErrNotLocked
	}
	e.d.release(ctx, e.lease)
	e.lease = nil
	return nil
}

// Leader returns the current leader, or ErrNoLeader.
func (e *Election) Leader(ctx context.Context) (LeaderInfo, error) {
	for {
		info, _, err := e.look(ctx, false)
		if !errors.Is(err, errLookAgain) {
			return info, err
		}
	}
}

// Observe reports leader changes (see Elector).
func (e *Election) Observe(ctx context.Context) <-chan LeaderInfo {
	return observe(ctx, func(ctx context.Context) (LeaderInfo, <-chan client.Event, error) {
		return e.look(ctx, true)
	})
}

// errLookAgain: the state changed while looking.
var errLookAgain = errors.New("recipes: look again")

// look reads the leader; with watch it also returns a watch that fires
// when the leader may have changed: on the leader's node, or on the
// election's children (or existence) when nobody leads.
func (e *Election) look(ctx context.Context, watch bool) (LeaderInfo, <-chan client.Event, error) {
	kids, _, err := e.d.conn.Children(ctx, e.d.dir)
	if errors.Is(err, client.ErrNoNode) {
		return e.noLeader(ctx, watch, true)
	}
	if err != nil {
		return LeaderInfo{}, nil, err
	}
	cs := e.d.o.compat.sortContenders(kids, electionRule.roles)
	if len(cs) == 0 {
		return e.noLeader(ctx, watch, false)
	}
	node := e.d.child(cs[0].name)
	var data []byte
	var st *client.Stat
	var ch <-chan client.Event
	if watch {
		data, st, ch, err = e.d.conn.GetW(ctx, node)
	} else {
		data, st, err = e.d.conn.Get(ctx, node)
	}
	if errors.Is(err, client.ErrNoNode) {
		return LeaderInfo{}, nil, errLookAgain
	}
	if err != nil {
		return LeaderInfo{}, nil, err
	}
	return LeaderInfo{Value: data, Node: node, Token: st.Czxid}, ch, nil
}

// noLeader returns ErrNoLeader, or with watch a watch for a candidate.
func (e *Election) noLeader(ctx context.Context, watch, missing bool) (LeaderInfo, <-chan client.Event, error) {
	if !watch {
		return LeaderInfo{}, nil, ErrNoLeader
	}
	if missing {
		_, ok, ch, err := e.d.conn.ExistsW(ctx, e.d.dir)
		if err == nil && ok {
			err = errLookAgain // created meanwhile; its watch fires later, harmlessly
		}
		return LeaderInfo{}, ch, err
	}
	kids, _, ch, err := e.d.conn.ChildrenW(ctx, e.d.dir)
	if err == nil && len(e.d.o.compat.sortContenders(kids, electionRule.roles)) > 0 {
		err = errLookAgain
	}
	if errors.Is(err, client.ErrNoNode) {
		err = errLookAgain
	}
	return LeaderInfo{}, ch, err
}

// observe runs look in a loop, sending each new leader to the returned
// channel until ctx or the session ends.
func observe(ctx context.Context, look func(context.Context) (LeaderInfo, <-chan client.Event, error)) <-chan LeaderInfo {
	out := make(chan LeaderInfo, 1)
	go func() {
		defer close(out)
		var last int64
		for ctx.Err() == nil {
			info, ch, err := look(ctx)
			switch {
			case errors.Is(err, errLookAgain):
				continue
			case err != nil && (isTerminal(err) || ctx.Err() != nil):
				return
			case err != nil:
				pause(ctx, retryPause)
				continue
			}
			if info.Token != 0 && info.Token != last {
				last = info.Token
				publish(out, info)
			}
			select {
			case ev := <-ch:
				if ev.Err != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// publish replaces the value waiting in a one-slot channel, so that the
// reader always gets the latest without blocking the sender.
func publish[T any](ch chan T, v T) {
	for {
		select {
		case ch <- v:
			return
		default:
		}
		select {
		case <-ch:
		default:
		}
	}
}

// UnfairElection is the herd-prone election: every candidate races to
// create one ephemeral node, PATH/leader, holding its value, and every
// other candidate watches it; when it goes, all of them race again. The
// winner of each race is arbitrary. Kept for comparison, like
// UnfairMutex (whose fencing it shares: do not write PATH's data).
type UnfairElection struct {
	s     slot
	own   owner
	lease *Lease
}

var _ Elector = (*UnfairElection)(nil)

// NewUnfairElection returns an unfair election on path. Options:
// WithACL, WithCleanupTimeout.
func NewUnfairElection(conn *client.Conn, path string, opts ...Option) *UnfairElection {
	return &UnfairElection{s: newSlot(conn, path, "leader", opts), own: newOwner()}
}

// Campaign waits until this candidate wins a race (see Elector).
func (e *UnfairElection) Campaign(ctx context.Context, value []byte) (*Lease, error) {
	if err := e.own.enter(ctx); err != nil {
		return nil, err
	}
	defer e.own.leave()
	if e.lease != nil && e.lease.Err() == nil {
		return e.lease, nil
	}
	e.lease = nil
	l, err := e.s.acquire(ctx, value, false)
	if err != nil {
		return nil, err
	}
	e.lease = l
	return l, nil
}

// Resign gives up the leadership; ErrNotLocked if not leading.
func (e *UnfairElection) Resign(ctx context.Context) error {
	if err := e.own.enter(ctx); err != nil {
		return err
	}
	defer e.own.leave()
	if e.lease == nil {
		return ErrNotLocked
	}
	e.s.release(ctx, e.lease)
	e.lease = nil
	return nil
}

// Leader returns the current leader, or ErrNoLeader.
func (e *UnfairElection) Leader(ctx context.Context) (LeaderInfo, error) {
	data, st, err := e.s.conn.Get(ctx, e.s.node)
	if errors.Is(err, client.ErrNoNode) {
		return LeaderInfo{}, ErrNoLeader
	}
	if err != nil {
		return LeaderInfo{}, err
	}
	return LeaderInfo{Value: data, Node: e.s.node, Token: st.Czxid}, nil
}

// Observe reports leader changes (see Elector).
func (e *UnfairElection) Observe(ctx context.Context) <-chan LeaderInfo {
	return observe(ctx, func(ctx context.Context) (LeaderInfo, <-chan client.Event, error) {
		data, st, ch, err := e.s.conn.GetW(ctx, e.s.node)
		if err == nil {
			return LeaderInfo{Value: data, Node: e.s.node, Token: st.Czxid}, ch, nil
		}
		if !errors.Is(err, client.ErrNoNode) {
			return LeaderInfo{}, nil, err
		}
		_, ok, ch, err := e.s.conn.ExistsW(ctx, e.s.node)
		if err == nil && ok {
			err = errLookAgain
		}
		return LeaderInfo{}, ch, err
	})
}
