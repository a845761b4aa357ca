package herd

import (
	"context"
	"fmt"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// role is what a contender asks for.
type role int

const (
	exclusive role = iota // a mutex, the write side of a rw lock, a leadership
	reader                // the read side of a rw lock
)

// contender is one participant of a run: it acquires and releases its
// recipe over and over.
type contender struct {
	id     int
	recipe Recipe
	path   string
	role   role
	kill   bool // an election leader leaves by closing its session

	// dial opens a new session (after a kill).
	dial func(ctx context.Context, sess *session) (*client.Conn, error)
	conn *client.Conn
	sess *session // tags conn's TCP connections

	lock  recipes.Locker
	elect recipes.Elector
}

// bind builds the contender's recipe value on conn.
func (c *contender) bind(conn *client.Conn) {
	c.conn = conn
	c.lock, c.elect = nil, nil
	switch c.recipe {
	case MutexUnfair:
		c.lock = recipes.NewUnfairMutex(conn, c.path)
	case MutexFair:
		c.lock = recipes.NewMutex(conn, c.path)
	case RWNaive, RWHerdFree:
		rw := recipes.NewRWMutex(conn, c.path)
		if c.recipe == RWNaive {
			rw = recipes.NewNaiveRWMutex(conn, c.path)
		}
		c.lock = rw
		if c.role == reader {
			c.lock = rw.RLocker()
		}
	case ElectionUnfair:
		c.elect = recipes.NewUnfairElection(conn, c.path)
	case ElectionFair:
		c.elect = recipes.NewElection(conn, c.path)
	default:
		panic(fmt.Sprintf("herd: unknown recipe %q", c.recipe))
	}
}

// prepare makes the contender ready to contend again: a killed leader
// gets a new session.
func (c *contender) prepare(ctx context.Context) error {
	if c.conn != nil {
		return nil
	}
	sess := new(session)
	conn, err := c.dial(ctx, sess)
	if err != nil {
		return err
	}
	c.sess = sess
	c.bind(conn)
	return nil
}

// acquire waits for the lock (or the leadership).
func (c *contender) acquire(ctx context.Context) error {
	var err error
	if c.elect != nil {
		_, err = c.elect.Campaign(ctx, fmt.Appendf(nil, "candidate-%d", c.id))
	} else {
		_, err = c.lock.Lock(ctx)
	}
	return err
}

// release gives the lock (or the leadership) up. A killed leader's
// session is closed: the server deletes its node, as when a process dies.
func (c *contender) release(ctx context.Context) error {
	switch {
	case c.elect != nil && c.kill:
		c.sess.leaving.Store(true)
		err := c.conn.Close()
		c.conn, c.elect = nil, nil
		return err
	case c.elect != nil:
		return c.elect.Resign(ctx)
	default:
		return c.lock.Unlock(ctx)
	}
}
