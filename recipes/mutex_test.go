package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// exclusion runs sessions × perSession goroutines, each with its own
// Locker, each acquiring iters times and incrementing an unguarded
// counter node (get, then set at any version) inside the lock. A second
// holder would lose updates, be seen inside at the same time, or hand
// out a token that does not grow.
func exclusion(t *testing.T, e *env, sessions, perSession, iters int, mk func(*client.Conn) recipes.Locker) {
	t.Helper()
	ctx := tctx(t)
	counter := e.path("counter-" + randHex(3))
	if err := recipes.NewBarrier(e.admin, counter).Set(ctx); err != nil { // creates the node
		t.Fatal(err)
	}
	var inside, maxInside atomic.Int32
	var lastToken atomic.Int64
	var wg sync.WaitGroup
	for s := 0; s < sessions; s++ {
		conn := e.connect()
		for g := 0; g < perSession; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l := mk(conn)
				for i := 0; i < iters; i++ {
					if err := critical(ctx, l, conn, counter, &inside, &maxInside, &lastToken); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	data, _, err := e.admin.Get(ctx, counter)
	if err != nil {
		t.Fatal(err)
	}
	want := sessions * perSession * iters
	if got, _ := strconv.Atoi(string(data)); got != want {
		t.Errorf("counter = %d after %d locked increments: lost updates", got, want)
	}
	if m := maxInside.Load(); m != 1 {
		t.Errorf("%d holders inside at once", m)
	}
}

func critical(ctx context.Context, l recipes.Locker, conn *client.Conn, counter string, inside, maxInside *atomic.Int32, lastToken *atomic.Int64) error {
	lease, err := l.Lock(ctx)
	if err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	n := inside.Add(1)
	for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
	}
	if prev := lastToken.Swap(lease.Token()); lease.Token() <= prev {
		err = fmt.Errorf("token %d after %d: not increasing", lease.Token(), prev)
	}
	data, _, gerr := conn.Get(ctx, counter)
	v, _ := strconv.Atoi(string(data))
	if gerr == nil {
		_, gerr = conn.Set(ctx, counter, []byte(strconv.Itoa(v+1)), -1)
	}
	inside.Add(-1)
	if uerr := l.Unlock(ctx); uerr != nil {
		return fmt.Errorf("unlock: %w", uerr)
	}
	return errors.Join(err, gerr)
}

// noContenders waits until the lock directory has no nodes left (or is
// gone: containers are reaped).
func noContenders(t *testing.T, e *env, dir string) {
	t.Helper()
	waitFor(t, "no nodes left in "+dir, func() error {
		kids, err := e.tryChildren(dir)
		if err == nil && len(kids) > 0 {
			err = fmt.Errorf("left behind: %v", kids)
		}
		return err
	})
}

func TestMutexExclusion50Sessions(t *testing.T) {
	e := newEnv(t)
	dir := e.path("lock")
	exclusion(t, e, 50, 2, 2, func(c *client.Conn) recipes.Locker { return recipes.NewMutex(c, dir) })
	noContenders(t, e, dir)
}

func TestLockersExclusion(t *testing.T) {
	kinds := map[string]func(c *client.Conn, dir string) recipes.Locker{
		"mutex-kazoo": func(c *client.Conn, dir string) recipes.Locker {
			return recipes.NewMutex(c, dir, recipes.WithCompat(recipes.Kazoo))
		},
		"mutex-curator": func(c *client.Conn, dir string) recipes.Locker {
			return recipes.NewMutex(c, dir, recipes.WithCompat(recipes.Curator))
		},
		"unfair":          func(c *client.Conn, dir string) recipes.Locker { return recipes.NewUnfairMutex(c, dir) },
		"semaphore-mutex": func(c *client.Conn, dir string) recipes.Locker { return recipes.NewSemaphoreMutex(c, dir) },
		"rw-write":        func(c *client.Conn, dir string) recipes.Locker { return recipes.NewRWMutex(c, dir) },
		"naive-rw-write":  func(c *client.Conn, dir string) recipes.Locker { return recipes.NewNaiveRWMutex(c, dir) },
	}
	for name, mk := range kinds {
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			dir := e.path("lock")
			exclusion(t, e, 4, 2, 3, func(c *client.Conn) recipes.Locker { return mk(c, dir) })
		})
	}
}

var compats = []recipes.Compat{recipes.Paddock, recipes.Kazoo, recipes.Curator}

func TestMutexFIFO(t *testing.T) {
	for _, compat := range compats {
		t.Run(compat.String(), func(t *testing.T) {
			e := newEnv(t)
			ctx := tctx(t)
			dir := e.path("fifo")
			opt := recipes.WithCompat(compat)
			holder := recipes.NewMutex(e.connect(), dir, opt)
			if _, err := holder.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var order []int
			var wg sync.WaitGroup
			for i := 1; i <= 6; i++ {
				m := recipes.NewMutex(e.connect(), dir, opt)
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := m.Lock(ctx); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					if err := m.Unlock(ctx); err != nil {
						t.Error(err)
					}
				}()
				e.waitChildren(dir, i+1) // queued in this order
			}
			if err := holder.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			if fmt.Sprint(order) != "[1 2 3 4 5 6]" {
				t.Errorf("acquisition order %v, want arrival order", order)
			}
			noContenders(t, e, dir)
		})
	}
}

func TestMutexReentrant(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("reentrant")
	m := recipes.NewMutex(e.connect(), dir)
	other := recipes.NewMutex(e.connect(), dir)
	l1, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := m.TryLock(ctx)
	if err != nil || l2 != l1 {
		t.Fatalf("reentrant TryLock = %v, %v; want the same lease", l2, err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := other.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
		t.Fatalf("TryLock by another value after one of two Unlocks: %v, want ErrLocked", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(l1.Err(), recipes.ErrReleased) {
		t.Errorf("lease Err after release = %v", l1.Err())
	}
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrNotLocked) {
		t.Errorf("extra Unlock = %v, want ErrNotLocked", err)
	}
	if _, err := other.TryLock(ctx); err != nil {
		t.Fatalf("TryLock after release: %v", err)
	}
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	noContenders(t, e, dir)
}

// Timeouts and cancellations, at random points of the acquisition, leave
// no node behind.
func TestMutexTimeoutsLeaveNothing(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("timeouts")
	holder := recipes.NewMutex(e.connect(), dir)
	if _, err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	conn := e.connect()
	for i := 0; i < 30; i++ {
		c, cancel := context.WithTimeout(ctx, time.Duration(rand.IntN(3000))*time.Microsecond)
		if i%3 == 0 { // cancel instead
			c, cancel = context.WithCancel(ctx)
			time.AfterFunc(time.Duration(rand.IntN(3000))*time.Microsecond, cancel)
		}
		_, err := recipes.NewMutex(conn, dir).Lock(c)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
			t.Fatalf("Lock with a short context: %v", err)
		}
	}
	for i := 0; i < 5; i++ {
		if _, err := recipes.NewMutex(conn, dir).TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
			t.Fatalf("TryLock = %v, want ErrLocked", err)
		}
	}
	waitFor(t, "only the holder's node", func() error {
		if kids := e.children(dir); len(kids) != 1 {
			return fmt.Errorf("nodes: %v", kids)
		}
		return nil
	})
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	noContenders(t, e, dir)
}

// The holder's session expires: its Lost channel closes, the next waiter
// acquires with a larger token, and a fenced write by the old holder
// fails while the new holder's succeeds.
func TestMutexExpiryFencing(t *testing.T) {
	for _, compat := range compats {
		t.Run(compat.String(), func(t *testing.T) {
			testExpiryFencing(t, func(c *client.Conn, dir string) recipes.Locker {
				return recipes.NewMutex(c, dir, recipes.WithCompat(compat))
			})
		})
	}
	t.Run("unfair", func(t *testing.T) {
		testExpiryFencing(t, func(c *client.Conn, dir string) recipes.Locker { return recipes.NewUnfairMutex(c, dir) })
	})
	t.Run("rw", func(t *testing.T) {
		testExpiryFencing(t, func(c *client.Conn, dir string) recipes.Locker { return recipes.NewRWMutex(c, dir) })
	})
	t.Run("semaphore", func(t *testing.T) {
		testExpiryFencing(t, func(c *client.Conn, dir string) recipes.Locker { return recipes.NewSemaphoreMutex(c, dir) })
	})
}

func testExpiryFencing(t *testing.T, mk func(*client.Conn, string) recipes.Locker) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("fenced")
	resource := e.path("resource")
	if err := recipes.NewBarrier(e.admin, resource).Set(ctx); err != nil {
		t.Fatal(err)
	}
	// The old holder's client starts a new session after expiry (as
	// Curator does), so its fenced write reaches the server.
	oldConn, expire := e.expirable(client.WithNewSessionOnExpiry(true))
	old := mk(oldConn, dir)
	a, err := old.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	oldSession := oldConn.SessionID()
	if _, err := a.FencedSet(ctx, resource, []byte("a"), -1); err != nil {
		t.Fatalf("fenced write while holding: %v", err)
	}
	next := mk(e.connect(), dir)
	got := make(chan *recipes.Lease, 1)
	go func() {
		l, err := next.Lock(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	expire(a.Node())
	b := recv(t, got)
	if b == nil {
		t.FailNow()
	}
	if b.Token() <= a.Token() {
		t.Errorf("token went from %d to %d", a.Token(), b.Token())
	}
	closed(t, a.Lost(), "the old holder's Lost channel")
	// The client sees either the expiry or, first, its node's deletion.
	if err := a.Err(); !errors.Is(err, recipes.ErrLockLost) ||
		!errors.Is(err, client.ErrSessionExpired) && !errors.Is(err, recipes.ErrNodeDeleted) {
		t.Errorf("old lease Err = %v", err)
	}
	waitFor(t, "the old client's new session", func() error {
		if id, st := oldConn.SessionID(), oldConn.State(); id == oldSession || st != client.StateConnected {
			return fmt.Errorf("session %x, state %v", id, st)
		}
		return nil
	})
	if _, err := a.FencedSet(ctx, resource, []byte("stale"), -1); !errors.Is(err, recipes.ErrLockLost) {
		t.Errorf("fenced write by the old holder = %v, want ErrLockLost", err)
	}
	if _, err := b.FencedSet(ctx, resource, []byte("b"), -1); err != nil {
		t.Errorf("fenced write by the new holder: %v", err)
	}
	if data, _, _ := e.admin.Get(ctx, resource); string(data) != "b" {
		t.Errorf("resource = %q", data)
	}
	if err := old.Unlock(ctx); err != nil {
		t.Errorf("Unlock of a lost lock: %v", err)
	}
	if err := next.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Deleting the holder's node from outside closes its Lost channel.
func TestMutexNodeDeleted(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	m := recipes.NewMutex(e.connect(), e.path("deleted"))
	l, err := m.Lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.admin.Delete(ctx, l.Node(), -1); err != nil {
		t.Fatal(err)
	}
	closed(t, l.Lost(), "Lost after deletion")
	if !errors.Is(l.Err(), recipes.ErrNodeDeleted) {
		t.Errorf("Err = %v", l.Err())
	}
	if _, err := m.Lock(ctx); !errors.Is(err, recipes.ErrLockLost) {
		t.Errorf("reentrant Lock on a lost lease = %v", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Each release of the fair mutex wakes exactly one waiter (one server
// notification); each release of the unfair one wakes every waiter.
func TestMutexHerd(t *testing.T) {
	const waiters = 5
	fair := herdRun(t, waiters, false, func(c *client.Conn, dir string, o recipes.Option) recipes.Locker {
		return recipes.NewMutex(c, dir, o)
	})
	unfair := herdRun(t, waiters, true, func(c *client.Conn, dir string, o recipes.Option) recipes.Locker {
		return recipes.NewUnfairMutex(c, dir, o)
	})
	t.Logf("%d hand-offs: fair mutex %v, unfair mutex %v", waiters, fair, unfair)
	if fair.wakes != waiters || (fair.notifications != 0 && fair.notifications != waiters) {
		t.Errorf("fair mutex: %v, want %d wake-ups and notifications", fair, waiters)
	}
	want := int64(waiters * (waiters + 1) / 2)
	if unfair.wakes != want || (unfair.notifications != 0 && unfair.notifications != uint64(want)) {
		t.Errorf("unfair mutex: %v, want %d wake-ups and notifications", unfair, want)
	}
}

type herdCount struct {
	wakes         int64
	notifications uint64 // 0 against the oracle
}

func (h herdCount) String() string {
	return fmt.Sprintf("%d wake-ups, %d notifications", h.wakes, h.notifications)
}

// herdRun queues waiters behind a holder, one session each, then passes
// the lock down the queue, each release happening once every remaining
// waiter waits (with herd, once every remaining waiter has been woken by
// every release so far and waits again); it counts wake-ups and server
// notifications.
func herdRun(t *testing.T, waiters int, herd bool, mk func(*client.Conn, string, recipes.Option) recipes.Locker) herdCount {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("herd")
	holder := mk(e.connect(), dir, nil)
	if _, err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	hs := make([]*hooks, waiters)
	acquired := make(chan int)
	locks := make([]recipes.Locker, waiters)
	for i := range hs {
		hs[i] = new(hooks)
		locks[i] = mk(e.connect(), dir, hs[i].option())
		go func() {
			if _, err := locks[i].Lock(ctx); err != nil {
				t.Error(err)
			}
			acquired <- i
		}()
	}
	remaining := map[int]bool{}
	for i := range hs {
		remaining[i] = true
	}
	settle := func(releases int64) {
		waitFor(t, "waiters to settle", func() error {
			for i := range remaining {
				h := hs[i]
				if h.waiting.Load()-h.woken.Load() != 1 || herd && h.woken.Load() != releases {
					return fmt.Errorf("waiter %d: %d waits, %d wake-ups", i, h.waiting.Load(), h.woken.Load())
				}
			}
			return nil
		})
	}
	settle(0)
	n0 := e.notifications()
	for r := int64(1); len(remaining) > 0; r++ {
		if err := holder.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		i := recv(t, acquired)
		delete(remaining, i)
		holder = locks[i]
		settle(r)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	var wakes int64
	for _, h := range hs {
		wakes += h.woken.Load()
	}
	return herdCount{wakes: wakes, notifications: e.notifications() - n0}
}

var nameRE = map[recipes.Compat]*regexp.Regexp{
	recipes.Paddock: regexp.MustCompile(`^_c_[0-9a-f]{32}-lock-\d{10}$`),
	recipes.Kazoo:   regexp.MustCompile(`^[0-9a-f]{32}__lock__\d{10}$`),
	recipes.Curator: regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-lock-\d{10}$`),
}

func TestMutexNodeNames(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	for compat, re := range nameRE {
		dir := e.path("names-" + compat.String())
		m := recipes.NewMutex(e.connect(), dir, recipes.WithCompat(compat), recipes.WithNodeData([]byte("me")))
		if _, err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		kids := e.children(dir)
		if len(kids) != 1 || !re.MatchString(kids[0]) {
			t.Errorf("%v: nodes %v, want one matching %v", compat, kids, re)
		}
		if cs, err := m.Contenders(ctx); err != nil || len(cs) != 1 || string(cs[0]) != "me" {
			t.Errorf("%v: Contenders = %q, %v", compat, cs, err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// Unlock with a context that has ended still releases the lock.
func TestMutexUnlockWithEndedContext(t *testing.T) {
	e := newEnv(t)
	dir := e.path("ended")
	for i := 0; i < 20; i++ {
		m := recipes.NewMutex(e.connect(), dir)
		if _, err := m.Lock(tctx(t)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := m.Unlock(ctx); err != nil {
			t.Fatalf("Unlock: %v", err)
		}
	}
	noContenders(t, e, dir)
}
