package recipes_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// Readers share, writers exclude everyone: sessions of readers and
// writers at random, with counters of who is inside.
func TestRWMutexExclusion(t *testing.T) {
	for _, naive := range []bool{false, true} {
		t.Run(fmt.Sprintf("naive=%v", naive), func(t *testing.T) {
			e := newEnv(t)
			ctx := tctx(t)
			dir := e.path("rw")
			var readers, writers, maxReaders atomic.Int32
			var wg sync.WaitGroup
			for s := 0; s < 8; s++ {
				conn := e.connect()
				for g := 0; g < 2; g++ {
					rw := newRW(conn, dir, naive)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := 0; i < 4; i++ {
							if err := rwRound(ctx, rw, rand.IntN(3) == 0, &readers, &writers, &maxReaders); err != nil {
								t.Error(err)
								return
							}
						}
					}()
				}
			}
			wg.Wait()
			t.Logf("up to %d readers inside at once", maxReaders.Load())
			noContenders(t, e, dir)
		})
	}
}

func newRW(c *client.Conn, dir string, naive bool, opts ...recipes.Option) *recipes.RWMutex {
	if naive {
		return recipes.NewNaiveRWMutex(c, dir, opts...)
	}
	return recipes.NewRWMutex(c, dir, opts...)
}

func rwRound(ctx context.Context, rw *recipes.RWMutex, write bool, readers, writers, maxReaders *atomic.Int32) error {
	if write {
		if _, err := rw.Lock(ctx); err != nil {
			return err
		}
		w := writers.Add(1)
		r := readers.Load()
		writers.Add(-1)
		if w != 1 || r != 0 {
			return fmt.Errorf("writer inside with %d writers, %d readers", w, r)
		}
		return rw.Unlock(ctx)
	}
	if _, err := rw.RLock(ctx); err != nil {
		return err
	}
	r := readers.Add(1)
	for m := maxReaders.Load(); r > m && !maxReaders.CompareAndSwap(m, r); m = maxReaders.Load() {
	}
	w := writers.Load()
	readers.Add(-1)
	if w != 0 {
		return fmt.Errorf("reader inside with %d writers", w)
	}
	return rw.RUnlock(ctx)
}

// The herd-free pattern: with W1 holding and R2 R3 W4 R5 R6 queued, W1's
// release wakes R2 and R3 (both proceed), R2's wakes no one (W4 waits for
// R3), R3's wakes W4, W4's wakes R5 and R6: 2+0+1+2 wake-ups, each a
// waiter that proceeds, and as many server notifications. The naive lock
// wakes every waiter on every release: 5+3+3+2.
func TestRWMutexHerd(t *testing.T) {
	free := rwHerd(t, false)
	naive := rwHerd(t, true)
	t.Logf("wake-ups per release: herd-free %v, naive %v; server notifications: herd-free %v, naive %v",
		free.wakes, naive.wakes, free.notifications, naive.notifications)
	if fmt.Sprint(free.wakes) != "[2 0 1 2]" {
		t.Errorf("herd-free wake-ups per release = %v, want [2 0 1 2]", free.wakes)
	}
	if free.notifications != nil && fmt.Sprint(free.notifications) != "[2 0 1 2]" {
		t.Errorf("herd-free notifications per release = %v, want [2 0 1 2]", free.notifications)
	}
	if fmt.Sprint(naive.wakes) != "[5 3 3 2]" {
		t.Errorf("naive wake-ups per release = %v, want [5 3 3 2]", naive.wakes)
	}
}

type rwHerdCount struct {
	wakes         []int64
	notifications []uint64 // nil against the oracle
}

// rwHerd runs the pattern. Each release happens once every waiting
// contender waits on a watch; for the naive lock, once every waiting
// contender has also been woken by every change so far (creations of
// later contenders, releases) and waits again.
func rwHerd(t *testing.T, naive bool) rwHerdCount {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("rwherd")
	w1 := newRW(e.connect(), dir, naive)
	if _, err := w1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	queue := []bool{false, false, true, false, false} // R2 R3 W4 R5 R6
	locks := make([]*recipes.RWMutex, len(queue))
	held := make([]chan struct{}, len(queue))
	hs := make([]*hooks, len(queue))
	waiting := map[int]int64{} // contender → wake-ups expected so far (naive)
	settle := func() {
		waitFor(t, "waiters to settle", func() error {
			for i, want := range waiting {
				h := hs[i]
				if h.waiting.Load()-h.woken.Load() != 1 || naive && h.woken.Load() != want {
					return fmt.Errorf("contender %d: %d waits, %d wake-ups", i+2, h.waiting.Load(), h.woken.Load())
				}
			}
			return nil
		})
	}
	changed := func() { // a child was created or deleted
		for i := range waiting {
			waiting[i]++
		}
	}
	for i, write := range queue {
		hs[i], held[i] = new(hooks), make(chan struct{})
		locks[i] = newRW(e.connect(), dir, naive, hs[i].option())
		go func() {
			var err error
			if write {
				_, err = locks[i].Lock(ctx)
			} else {
				_, err = locks[i].RLock(ctx)
			}
			if err != nil {
				t.Error(err)
			}
			close(held[i])
		}()
		e.waitChildren(dir, i+2)
		changed()
		waiting[i] = 0
		settle()
	}
	var out rwHerdCount
	step := func(release func() error, proceed []int) {
		n0 := e.notifications()
		var w0 int64
		for _, h := range hs {
			w0 += h.woken.Load()
		}
		if err := release(); err != nil {
			t.Fatal(err)
		}
		changed()
		for _, i := range proceed {
			closed(t, held[i], fmt.Sprintf("contender %d", i+2))
			delete(waiting, i)
		}
		settle()
		var w int64
		for _, h := range hs {
			w += h.woken.Load()
		}
		out.wakes = append(out.wakes, w-w0)
		if e.srv != nil {
			out.notifications = append(out.notifications, e.notifications()-n0)
		}
	}
	step(func() error { return w1.Unlock(ctx) }, []int{0, 1})
	step(func() error { return locks[0].RUnlock(ctx) }, nil)
	step(func() error { return locks[1].RUnlock(ctx) }, []int{2})
	step(func() error { return locks[2].Unlock(ctx) }, []int{3, 4})
	for _, i := range []int{3, 4} {
		if err := locks[i].RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	noContenders(t, e, dir)
	return out
}

func TestRWMutexUpgradeRefused(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	rw := recipes.NewRWMutex(e.connect(), e.path("upgrade"))
	if _, err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := rw.Lock(ctx); !errors.Is(err, recipes.ErrUpgrade) {
		t.Fatalf("Lock while reading = %v, want ErrUpgrade", err)
	}
	if _, err := rw.TryLock(ctx); !errors.Is(err, recipes.ErrUpgrade) {
		t.Fatalf("TryLock while reading = %v, want ErrUpgrade", err)
	}
	if _, err := rw.RLock(ctx); err != nil { // reentrant read
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		if err := rw.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := rw.Lock(ctx); err != nil {
		t.Fatalf("Lock after the reads: %v", err)
	}
	if err := rw.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Downgrade: a writer takes the read lock and releases the write lock. A
// writer queued meanwhile must still wait for the read hold; a reader
// queued meanwhile proceeds.
func TestRWMutexDowngrade(t *testing.T) {
	for _, compat := range compats {
		t.Run(compat.String(), func(t *testing.T) {
			e := newEnv(t)
			ctx := tctx(t)
			dir := e.path("downgrade")
			opt := recipes.WithCompat(compat)
			rw := recipes.NewRWMutex(e.connect(), dir, opt)
			wl, err := rw.Lock(ctx)
			if err != nil {
				t.Fatal(err)
			}
			writer := recipes.NewRWMutex(e.connect(), dir, opt)
			wrote := make(chan struct{})
			go func() {
				if _, err := writer.Lock(ctx); err != nil {
					t.Error(err)
				}
				close(wrote)
			}()
			e.waitChildren(dir, 2)
			rl, err := rw.RLock(ctx)
			if err != nil {
				t.Fatalf("downgrade RLock: %v", err)
			}
			if rl.Token() != wl.Token() {
				t.Errorf("downgraded read token %d, write token %d", rl.Token(), wl.Token())
			}
			if err := rw.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			reader := recipes.NewRWMutex(e.connect(), dir, opt)
			if _, err := reader.TryRLock(ctx); !errors.Is(err, recipes.ErrLocked) {
				t.Errorf("reader behind the queued writer: %v, want ErrLocked", err)
			}
			select {
			case <-wrote:
				t.Fatal("a queued writer entered while the downgraded reader holds the lock")
			default:
			}
			if _, err := recipes.NewRWMutex(e.connect(), dir, opt).TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
				t.Errorf("TryLock during the read hold: %v", err)
			}
			if err := rw.RUnlock(ctx); err != nil {
				t.Fatal(err)
			}
			closed(t, wrote, "the queued writer")
			if err := writer.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			noContenders(t, e, dir)
		})
	}
}

var rwNameRE = map[recipes.Compat][2]*regexp.Regexp{
	recipes.Paddock: {regexp.MustCompile(`^_c_[0-9a-f]{32}-read-\d{10}$`), regexp.MustCompile(`^_c_[0-9a-f]{32}-write-\d{10}$`)},
	recipes.Kazoo:   {regexp.MustCompile(`^[0-9a-f]{32}__rlock__\d{10}$`), regexp.MustCompile(`^[0-9a-f]{32}__lock__\d{10}$`)},
	recipes.Curator: {regexp.MustCompile(`^_c_[0-9a-f-]{36}-__READ__\d{10}$`), regexp.MustCompile(`^_c_[0-9a-f-]{36}-__WRIT__\d{10}$`)},
}

func TestRWMutexNodeNames(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	for compat, re := range rwNameRE {
		dir := e.path("names-" + compat.String())
		r := recipes.NewRWMutex(e.connect(), dir, recipes.WithCompat(compat))
		if _, err := r.RLock(ctx); err != nil {
			t.Fatal(err)
		}
		w := recipes.NewRWMutex(e.connect(), dir, recipes.WithCompat(compat))
		if _, err := w.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
			t.Fatalf("%v: TryLock while read-locked = %v", compat, err)
		}
		kids := e.children(dir)
		if len(kids) != 1 || !re[0].MatchString(kids[0]) {
			t.Errorf("%v: read nodes %v", compat, kids)
		}
		if err := r.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		kids = e.children(dir)
		if len(kids) != 1 || !re[1].MatchString(kids[0]) {
			t.Errorf("%v: write nodes %v", compat, kids)
		}
		if err := w.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRWMutexReadersShare(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("share")
	var locks []*recipes.RWMutex
	for i := 0; i < 3; i++ {
		rw := recipes.NewRWMutex(e.connect(), dir)
		if _, err := rw.TryRLock(ctx); err != nil {
			t.Fatalf("reader %d: %v", i, err)
		}
		locks = append(locks, rw)
	}
	if _, err := recipes.NewRWMutex(e.connect(), dir).TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
		t.Errorf("TryLock with readers inside = %v", err)
	}
	for _, rw := range locks {
		if err := rw.Unlock(ctx); !errors.Is(err, recipes.ErrNotLocked) {
			t.Errorf("Unlock of a read hold = %v, want ErrNotLocked", err)
		}
		if err := rw.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	noContenders(t, e, dir)
}
