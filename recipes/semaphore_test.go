package recipes_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/paddockzk/paddock/recipes"
)

func TestSemaphoreBound(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("sem")
	const max = 3
	var inside, maxInside atomic.Int32
	var wg sync.WaitGroup
	for s := 0; s < 6; s++ {
		sem := recipes.NewSemaphore(e.connect(), dir, max)
		for g := 0; g < 2; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 3; i++ {
					l, err := sem.Acquire(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					n := inside.Add(1)
					for m := maxInside.Load(); n > m && !maxInside.CompareAndSwap(m, n); m = maxInside.Load() {
					}
					inside.Add(-1)
					if err := sem.Release(ctx, l); err != nil {
						t.Error(err)
					}
				}
			}()
		}
	}
	wg.Wait()
	if m := maxInside.Load(); m > max {
		t.Errorf("%d leases held at once, max %d", m, max)
	}
	noContenders(t, e, dir+"/leases")
	noContenders(t, e, dir+"/locks")
}

func TestSemaphoreTryAndMismatch(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	dir := e.path("sem")
	sem := recipes.NewSemaphore(e.connect(), dir, 2)
	var leases []*recipes.Lease
	for i := 0; i < 2; i++ {
		l, err := sem.TryAcquire(ctx)
		if err != nil {
			t.Fatalf("lease %d: %v", i, err)
		}
		leases = append(leases, l)
	}
	if _, err := sem.TryAcquire(ctx); !errors.Is(err, recipes.ErrNoLeases) {
		t.Fatalf("third TryAcquire = %v, want ErrNoLeases", err)
	}
	if _, err := recipes.NewSemaphore(e.connect(), dir, 5).TryAcquire(ctx); !errors.Is(err, recipes.ErrLeasesMismatch) {
		t.Fatalf("semaphore with another max = %v, want ErrLeasesMismatch", err)
	}
	got := make(chan *recipes.Lease)
	go func() {
		l, err := recipes.NewSemaphore(e.connect(), dir, 2).Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	if err := sem.Release(ctx, leases[0]); err != nil {
		t.Fatal(err)
	}
	l := recv(t, got)
	for _, l := range []*recipes.Lease{leases[1], l} {
		if err := sem.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	noContenders(t, e, dir+"/leases")
}

func TestSemaphoreMutexNotReentrant(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	m := recipes.NewSemaphoreMutex(e.connect(), e.path("semmutex"))
	if _, err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Lock(ctx); !errors.Is(err, recipes.ErrNotReentrant) {
		t.Fatalf("second Lock = %v, want ErrNotReentrant", err)
	}
	if _, err := recipes.NewSemaphoreMutex(e.connect(), e.path("semmutex")).TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
		t.Fatalf("TryLock by another = %v, want ErrLocked", err)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Unlock(ctx); !errors.Is(err, recipes.ErrNotLocked) {
		t.Fatalf("second Unlock = %v", err)
	}
}
