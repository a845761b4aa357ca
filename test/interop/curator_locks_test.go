package interop_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/recipes"
)

// Curator's InterProcessMutex, InterProcessReadWriteLock and LeaderLatch
// against this repository's recipes with WithCompat(recipes.Curator) on
// the same paths.

var curator = recipes.WithCompat(recipes.Curator)

// InterProcessMutex and Paddock Mutexes increment an unguarded counter
// under the same lock path concurrently: no update is lost.
func TestCuratorMutexCounter(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		dir, counter := tg.path("lock"), tg.path("counter")
		if err := recipes.NewBarrier(tg.admin, counter).Set(ctx); err != nil {
			t.Fatal(err)
		}
		a := tg.curator("a")
		done := a.send("counter", "mutex", dir, counter, 2, 15)
		var wg sync.WaitGroup
		for s := 0; s < 2; s++ {
			conn := tg.connect()
			m := recipes.NewMutex(conn, dir, curator)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 15; i++ {
					if err := increment(ctx, m, conn, counter); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		done.wait()
		data, _, err := tg.admin.Get(ctx, counter)
		if n, _ := strconv.Atoi(string(data)); err != nil || n != 60 {
			t.Fatalf("counter = %q, %v; want 60 (30 by Curator, 30 by Go)", data, err)
		}
	})
}

// Go holds, Curator queues, a second Go value queues; the lock passes in
// order of arrival across the libraries, and each sees the other hold.
func TestCuratorMutexExcludes(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		dir := tg.path("lock")
		a := tg.curator("a")
		goLock := recipes.NewMutex(tg.connect(), dir, curator)
		lease, err := goLock.Lock(ctx)
		if err != nil {
			t.Fatal(err)
		}
		a.expect("busy", "try", "mutex", dir)
		held := a.send("hold", "h", "mutex", dir)
		tg.waitChildren(dir, 2)
		// Curator orders the Go node first.
		parts := strings.Split(a.do("participants", "mutex", dir), ",")
		if len(parts) != 2 || tg.path("lock/"+parts[0]) != lease.Node() {
			t.Errorf("Curator participants %v, want the Go holder %s first", parts, lease.Node())
		}
		second := recipes.NewMutex(tg.connect(), dir, curator)
		got := make(chan error, 1)
		go func() {
			_, err := second.Lock(ctx)
			got <- err
		}()
		tg.waitChildren(dir, 3)
		if held.answered() {
			t.Fatal("Curator acquired while Go holds")
		}
		if err := goLock.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		held.wait() // Curator was queued before the second Go value
		if _, err := goLock.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
			t.Fatalf("Go TryLock while Curator holds: %v", err)
		}
		select {
		case err := <-got:
			t.Fatalf("second Go value acquired while Curator holds (%v)", err)
		default:
		}
		a.expect("released", "release", "h")
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		a.expect("busy", "try", "mutex", dir)
		if err := second.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		a.expect("acquired", "try", "mutex", dir)

		// Curator holds first: Go waits, then gets it.
		held = a.send("hold", "h", "mutex", dir)
		held.wait()
		if _, err := goLock.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
			t.Fatalf("Go TryLock while Curator holds: %v", err)
		}
		go func() {
			_, err := goLock.Lock(ctx)
			got <- err
		}()
		tg.waitChildren(dir, 2)
		a.expect("released", "release", "h")
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		a.expect("busy", "try", "mutex", dir)
		if err := goLock.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// InterProcessReadWriteLock against a Paddock RWMutex in Curator mode.
func TestCuratorRWLock(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		dir := tg.path("rw")
		a := tg.curator("a")
		reader := recipes.NewRWMutex(tg.connect(), dir, curator)
		writer := recipes.NewRWMutex(tg.connect(), dir, curator)

		// A Curator reader holds: Go readers share, Go writers wait.
		a.expect("held", "hold", "r", "read", dir)
		if _, err := reader.TryRLock(ctx); err != nil {
			t.Fatalf("Go TryRLock beside a Curator reader: %v", err)
		}
		if _, err := writer.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
			t.Fatalf("Go TryLock beside readers: %v", err)
		}
		a.expect("busy", "try", "write", dir)
		a.expect("acquired", "try", "read", dir)
		if err := reader.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		a.expect("released", "release", "r")

		// A Go writer holds: Curator readers and writers wait.
		if _, err := writer.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		a.expect("busy", "try", "read", dir)
		a.expect("busy", "try", "write", dir)
		// A Curator reader queued behind the Go writer enters when it
		// leaves; a Go writer queued behind that reader waits for it.
		held := a.send("hold", "r", "read", dir)
		tg.waitChildren(dir, 2)
		second := recipes.NewRWMutex(tg.connect(), dir, curator)
		got := make(chan error, 1)
		go func() {
			_, err := second.Lock(ctx)
			got <- err
		}()
		tg.waitChildren(dir, 3)
		if held.answered() {
			t.Fatal("Curator reader acquired while a Go writer holds")
		}
		if err := writer.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		held.wait()
		select {
		case err := <-got:
			t.Fatalf("Go writer acquired while a Curator reader holds (%v)", err)
		default:
		}
		a.expect("released", "release", "r")
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if err := second.Unlock(ctx); err != nil {
			t.Fatal(err)
		}

		// Curator writers and Go writers increment a counter.
		counter := tg.path("counter")
		if err := recipes.NewBarrier(tg.admin, counter).Set(ctx); err != nil {
			t.Fatal(err)
		}
		done := a.send("counter", "write", dir, counter, 2, 10)
		var wg sync.WaitGroup
		for s := 0; s < 2; s++ {
			conn := tg.connect()
			rw := recipes.NewRWMutex(conn, dir, curator)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 10; i++ {
					if err := increment(ctx, rw, conn, counter); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		done.wait()
		if data, _, _ := tg.admin.Get(ctx, counter); string(data) != "40" {
			t.Fatalf("counter = %q, want 40", data)
		}
	})
}

// LeaderLatch and a Paddock Election in Curator mode: one leader across
// both, in order of candidacy; leadership moves when the leader leaves.
func TestCuratorLeaderLatch(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		dir := tg.path("election")
		a := tg.curator("a")
		goEl := recipes.NewElection(tg.connect(), dir, curator)
		if _, err := goEl.Campaign(ctx, []byte("go-1")); err != nil {
			t.Fatal(err)
		}
		a.expect("", "latch", "l1", dir, "cur-1")
		tg.waitChildren(dir, 2)
		a.expect("", "latch", "l2", dir, "cur-2")
		tg.waitChildren(dir, 3)
		a.expect("go-1 false", "latchinfo", "l1")
		a.expect("go-1 false", "latchinfo", "l2")
		a.noEvent("l1", 200*time.Millisecond)

		if err := goEl.Resign(ctx); err != nil {
			t.Fatal(err)
		}
		a.expectEvent("l1", "leader")
		a.expect("cur-1 true", "latchinfo", "l1")
		a.expect("cur-1 false", "latchinfo", "l2")
		if l, err := goEl.Leader(ctx); err != nil || string(l.Value) != "cur-1" {
			t.Fatalf("Go Leader = %q, %v; want cur-1", l.Value, err)
		}
		won := make(chan error, 1)
		go func() {
			_, err := goEl.Campaign(ctx, []byte("go-2"))
			won <- err
		}()
		tg.waitChildren(dir, 3)
		a.expect("", "latchclose", "l1")
		a.expectEvent("l2", "leader")
		select {
		case err := <-won:
			t.Fatalf("Go won while cur-2 leads (%v)", err)
		default:
		}
		a.expect("", "latchclose", "l2")
		if err := <-won; err != nil {
			t.Fatal(err)
		}
		if l, err := goEl.Leader(ctx); err != nil || string(l.Value) != "go-2" {
			t.Fatalf("Go Leader = %q, %v; want go-2", l.Value, err)
		}
		if err := goEl.Resign(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// InterProcessSemaphoreV2 and a Paddock Semaphore in Curator mode share
// the leases of one path.
func TestCuratorSemaphore(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		dir := tg.path("sem")
		a := tg.curator("a")
		a.expect("held", "hold", "s1", "sem:2", dir)
		sem := recipes.NewSemaphore(tg.connect(), dir, 2, curator)
		l1, err := sem.Acquire(ctx)
		if err != nil {
			t.Fatalf("Go Acquire beside one Curator lease of 2: %v", err)
		}
		a.expect("busy", "try", "sem:2", dir)
		if _, err := sem.TryAcquire(ctx); !errors.Is(err, recipes.ErrNoLeases) {
			t.Fatalf("Go TryAcquire with both leases taken: %v", err)
		}
		got := make(chan error, 1)
		go func() {
			l, err := sem.Acquire(ctx)
			if err == nil {
				err = sem.Release(ctx, l)
			}
			got <- err
		}()
		tg.waitChildren(dir+"/locks", 1)
		a.expect("released", "release", "s1")
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		a.expect("acquired", "try", "sem:2", dir)

		// Go holds both leases; a Curator acquirer waits for one.
		l2, err := sem.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held := a.send("hold", "s2", "sem:2", dir)
		tg.waitChildren(dir+"/locks", 1)
		if held.answered() {
			t.Fatal("Curator took a third lease of 2")
		}
		if err := sem.Release(ctx, l1); err != nil {
			t.Fatal(err)
		}
		held.wait()
		if _, err := sem.TryAcquire(ctx); !errors.Is(err, recipes.ErrNoLeases) {
			t.Fatalf("Go TryAcquire with both leases taken: %v", err)
		}
		a.expect("released", "release", "s2")
		if err := sem.Release(ctx, l2); err != nil {
			t.Fatal(err)
		}
	})
}

// DistributedDoubleBarrier and Paddock DoubleBarriers on one path: nobody
// enters before all four have arrived, nobody leaves before all have left.
func TestCuratorDoubleBarrier(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		dir := tg.path("barrier")
		a := tg.curator("a")
		c1 := a.send("hold", "b1", "dbar:4", dir)
		c2 := a.send("hold", "b2", "dbar:4", dir)
		var gos []*recipes.DoubleBarrier
		entered := make(chan error, 2)
		for i := 0; i < 2; i++ {
			b := recipes.NewDoubleBarrier(tg.connect(), dir, 4)
			gos = append(gos, b)
			tg.waitChildren(dir, 2+i)
			if c1.answered() || c2.answered() || len(entered) > 0 {
				t.Fatalf("entered with %d of 4 members", 2+i)
			}
			go func() { entered <- b.Enter(ctx) }()
		}
		c1.wait()
		c2.wait()
		for range gos {
			if err := <-entered; err != nil {
				t.Fatal(err)
			}
		}

		l1 := a.send("release", "b1")
		left := make(chan error, 2)
		go func() { left <- gos[0].Leave(ctx) }()
		l2 := a.send("release", "b2")
		if l1.answered() || l2.answered() || len(left) > 0 {
			t.Fatal("left before the last member left")
		}
		if err := gos[1].Leave(ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-left; err != nil {
			t.Fatal(err)
		}
		if r := l1.wait() + " " + l2.wait(); r != "released released" {
			t.Fatalf("Curator leave: %s", r)
		}
	})
}
