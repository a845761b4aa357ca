package recipes_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// Connections keep breaking (sessions survive) while sessions lock and
// unlock: requests whose replies are lost are recovered (creates by the
// nodes' ids), mutual exclusion holds, no call fails and no node is left
// behind.
func TestLockersConnectionLoss(t *testing.T) {
	kinds := map[string]func(c *client.Conn, dir string) recipes.Locker{
		"mutex":           func(c *client.Conn, dir string) recipes.Locker { return recipes.NewMutex(c, dir) },
		"unfair":          func(c *client.Conn, dir string) recipes.Locker { return recipes.NewUnfairMutex(c, dir) },
		"rw-write":        func(c *client.Conn, dir string) recipes.Locker { return recipes.NewRWMutex(c, dir) },
		"semaphore-mutex": func(c *client.Conn, dir string) recipes.Locker { return recipes.NewSemaphoreMutex(c, dir) },
	}
	for name, mk := range kinds {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			e.onPaddock("drops connections")
			dir := e.path("flaky")
			stop := nemesis(e)
			flakyRun(t, e, func(c *client.Conn) recipes.Locker { return mk(c, dir) })
			stop()
			noContenders(t, e, dir)
		})
	}
}

// nemesis drops every connection every few milliseconds until stopped.
func nemesis(e *env) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(7 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				e.srv.DropConnections()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// flakyRun has 4 sessions × 2 lock values lock and unlock 10 times each.
func flakyRun(t *testing.T, e *env, mk func(*client.Conn) recipes.Locker) {
	ctx := tctx(t)
	var inside atomic.Int32
	var wg sync.WaitGroup
	for s := 0; s < 4; s++ {
		conn := e.connect()
		for g := 0; g < 2; g++ {
			l := mk(conn)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					if _, err := l.Lock(ctx); err != nil {
						t.Errorf("Lock: %v", err)
						return
					}
					if n := inside.Add(1); n != 1 {
						t.Errorf("%d holders", n)
					}
					inside.Add(-1)
					if err := l.Unlock(ctx); err != nil {
						t.Errorf("Unlock: %v", err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
}

// A second node carrying our id (left by a create retried after a lost
// reply) is deleted rather than left to stall the lock.
func TestMutexDropsOrphans(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("orphans")
	conn := e.connect()
	holder := recipes.NewMutex(conn, dir)
	hl, err := holder.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var h hooks
	m := recipes.NewMutex(conn, dir, h.option())
	got := make(chan error)
	go func() {
		_, err := m.Lock(ctx)
		got <- err
	}()
	waitFor(t, "the waiter to wait", func() error {
		if h.waiting.Load() != 1 {
			return errors.New("not yet")
		}
		return nil
	})
	var mine string
	for _, k := range e.waitChildren(dir, 2) {
		if dir+"/"+k != hl.Node() {
			mine = k
		}
	}
	id := mine[:strings.Index(mine, "-lock-")+1]
	orphan, _, err := conn.Create(ctx, dir+"/"+id+"lock-", nil, client.ModeEphemeralSequential, nil)
	if err != nil {
		t.Fatal(err)
	}
	czxid := e.czxid(orphan)
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := recv(t, got); err != nil {
		t.Fatal(err)
	}
	e.waitGone(orphan, czxid)
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	noContenders(t, e, dir)
}

// An UnfairMutex attempt whose reply was lost, and that was found not
// applied, may be applied afterwards (a write still in flight through
// another server): the next attempt then meets its own node, which it
// must take as held instead of waiting on it until its session ends.
func TestUnfairMutexTakesItsLateNode(t *testing.T) {
	e := newEnv(t)
	dir := e.path("late")
	conn := e.connect()
	ctx := tctx(t)
	for i := 1; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		_, _, err := conn.Create(ctx, dir[:i], nil, client.ModePersistent, nil)
		if err != nil && !errors.Is(err, client.ErrNodeExists) {
			t.Fatal(err)
		}
	}
	// The lost attempt, applied late: the node and the holder id.
	if _, err := conn.Multi(ctx, client.CreateOp(dir+"/lock", nil, client.ModeEphemeral, nil),
		client.SetDataOp(dir, []byte("me"), -1)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := recipes.UnfairAcquireAfterLoss(short, conn, dir, "me")
	if err != nil {
		t.Fatalf("waited on its own node: %v", err)
	}
	if l.Node() != dir+"/lock" {
		t.Fatalf("holds %q", l.Node())
	}
}
