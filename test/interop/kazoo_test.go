package interop_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// These tests run kazoo's lock recipes (test/interop/kazoo_agent.py, in a
// python3 with kazoo) and this repository's recipes with
// WithCompat(recipes.Kazoo) on the same paths, against an in-process
// Paddock server (or Apache ZooKeeper when ZK_ORACLE is set), and check
// that they exclude each other.

var kazoo = recipes.WithCompat(recipes.Kazoo)

// kazoo's Lock and a Paddock Mutex increment an unguarded counter under
// the same lock path concurrently: no update is lost.
func TestKazooMutexCounter(t *testing.T) {
	tg := newTarget(t)
	ctx := tg.ctx()
	dir, counter := tg.path("lock"), tg.path("counter")
	if err := recipes.NewBarrier(tg.admin, counter).Set(ctx); err != nil {
		t.Fatal(err)
	}
	py := tg.start("counter", dir, counter, "2", "15")
	var wg sync.WaitGroup
	for s := 0; s < 3; s++ {
		conn := tg.connect()
		m := recipes.NewMutex(conn, dir, kazoo)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 10; i++ {
				if err := increment(ctx, m, conn, counter); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	py.expect("done")
	py.wait()
	data, _, err := tg.admin.Get(ctx, counter)
	if n, _ := strconv.Atoi(string(data)); err != nil || n != 60 {
		t.Fatalf("counter = %q, %v; want 60 (30 by kazoo, 30 by Go)", data, err)
	}
}

func increment(ctx context.Context, l recipes.Locker, conn *client.Conn, counter string) error {
	if _, err := l.Lock(ctx); err != nil {
		return err
	}
	data, _, err := conn.Get(ctx, counter)
	if err == nil {
		n, _ := strconv.Atoi(string(data))
		_, err = conn.Set(ctx, counter, []byte(strconv.Itoa(n+1)), -1)
	}
	return errors.Join(err, l.Unlock(ctx))
}

func TestKazooMutexExcludes(t *testing.T) {
	tg := newTarget(t)
	ctx := tg.ctx()
	dir := tg.path("lock")
	goLock := recipes.NewMutex(tg.connect(), dir, kazoo, recipes.WithNodeData([]byte("go")))
	if _, err := goLock.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tg.run("try", "lock", dir); fmt.Sprint(got) != "[busy]" {
		t.Fatalf("kazoo try while Go holds: %v", got)
	}
	// kazoo lists the Go holder first, with its data.
	py := tg.start("hold", "lock", dir, "py")
	tg.waitChildren(dir, 2)
	if got := tg.run("contenders", "lock", dir); fmt.Sprint(got) != "[go py end]" {
		t.Errorf("kazoo contenders: %v", got)
	}
	// FIFO across clients: Go holds, kazoo waits, then a second Go value.
	second := recipes.NewMutex(tg.connect(), dir, kazoo)
	got := make(chan error)
	go func() {
		_, err := second.Lock(ctx)
		got <- err
	}()
	tg.waitChildren(dir, 3)
	py.silent(200 * time.Millisecond)
	if err := goLock.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	py.expect("held") // kazoo was queued before the second Go value
	if _, err := goLock.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
		t.Fatalf("Go TryLock while kazoo holds: %v", err)
	}
	select {
	case err := <-got:
		t.Fatalf("second Go value acquired while kazoo holds (%v)", err)
	default:
	}
	py.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if got := tg.run("try", "lock", dir); fmt.Sprint(got) != "[busy]" {
		t.Fatalf("kazoo try while the second Go value holds: %v", got)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if got := tg.run("try", "lock", dir); fmt.Sprint(got) != "[acquired]" {
		t.Fatalf("kazoo try on a free lock: %v", got)
	}
}

func TestKazooRWMutex(t *testing.T) {
	tg := newTarget(t)
	ctx := tg.ctx()
	dir := tg.path("rw")
	reader := recipes.NewRWMutex(tg.connect(), dir, kazoo)
	writer := recipes.NewRWMutex(tg.connect(), dir, kazoo)

	// A kazoo reader holds: Go readers share, Go writers wait.
	py := tg.start("hold", "read", dir, "py")
	py.expect("held")
	if _, err := reader.TryRLock(ctx); err != nil {
		t.Fatalf("Go TryRLock beside a kazoo reader: %v", err)
	}
	if _, err := writer.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
		t.Fatalf("Go TryLock beside readers: %v", err)
	}
	if got := tg.run("try", "write", dir); fmt.Sprint(got) != "[busy]" {
		t.Fatalf("kazoo try write beside readers: %v", got)
	}
	if err := reader.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	py.release()

	// A Go writer holds: kazoo readers, writers and plain locks wait.
	if _, err := writer.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"read", "write", "lock"} {
		if got := tg.run("try", kind, dir); fmt.Sprint(got) != "[busy]" {
			t.Errorf("kazoo try %s while a Go writer holds: %v", kind, got)
		}
	}
	// A kazoo reader queued behind the Go writer enters when it leaves.
	py = tg.start("hold", "read", dir, "py")
	tg.waitChildren(dir, 2)
	py.silent(200 * time.Millisecond)
	if err := writer.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	py.expect("held")
	py.release()

	// kazoo writers and Go writers increment a counter.
	counter := tg.path("counter")
	if err := recipes.NewBarrier(tg.admin, counter).Set(ctx); err != nil {
		t.Fatal(err)
	}
	pw := tg.start("wcounter", dir, counter, "2", "10")
	var wg sync.WaitGroup
	for s := 0; s < 2; s++ {
		conn := tg.connect()
		rw := recipes.NewRWMutex(conn, dir, kazoo)
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
	pw.expect("done")
	pw.wait()
	if data, _, _ := tg.admin.Get(ctx, counter); string(data) != "40" {
		t.Fatalf("counter = %q, want 40", data)
	}
}

// A kazoo reader waiting for a Go writer, with another Go writer queued
// behind the reader. kazoo before 2.9 has its ReadLock wait for the last
// write node of all, including writers queued after it, which then wait
// for the reader: a deadlock (fixed in kazoo 2.9, which only considers
// contenders with a smaller sequence number). Paddock's readers and
// writers behave as kazoo 2.9's.
func TestKazooReaderBeforeQueuedWriter(t *testing.T) {
	tg := newTarget(t)
	if v := kazooVersion(); v[0] < 2 || v[0] == 2 && v[1] < 9 {
		t.Skipf("kazoo %s: its ReadLock waits for writers queued after it (deadlock; fixed in kazoo 2.9)", kazooVer)
	}
	ctx := tg.ctx()
	dir := tg.path("rw")
	first := recipes.NewRWMutex(tg.connect(), dir, kazoo)
	if _, err := first.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	py := tg.start("hold", "read", dir, "py")
	tg.waitChildren(dir, 2)
	second := recipes.NewRWMutex(tg.connect(), dir, kazoo)
	got := make(chan error)
	go func() {
		_, err := second.Lock(ctx)
		got <- err
	}()
	tg.waitChildren(dir, 3)
	if err := first.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	py.expect("held")
	py.release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := second.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

func kazooVersion() [2]int {
	var v [2]int
	parts := strings.SplitN(kazooVer, ".", 3)
	for i := 0; i < 2 && i < len(parts); i++ {
		v[i], _ = strconv.Atoi(parts[i])
	}
	return v
}

// A Go Election with kazoo names and a kazoo Election on one path share
// the leadership, in order of candidacy.
func TestKazooElection(t *testing.T) {
	tg := newTarget(t)
	ctx := tg.ctx()
	dir := tg.path("election")
	goEl := recipes.NewElection(tg.connect(), dir, kazoo)
	if _, err := goEl.Campaign(ctx, []byte("go-1")); err != nil {
		t.Fatal(err)
	}
	py := tg.start("hold", "election", dir, "py-1")
	tg.waitChildren(dir, 2)
	if got := tg.run("contenders", "election", dir); fmt.Sprint(got) != "[go-1 py-1 end]" {
		t.Errorf("kazoo contenders: %v", got)
	}
	observed := goEl.Observe(ctx)
	if l := <-observed; string(l.Value) != "go-1" {
		t.Fatalf("observed leader %q", l.Value)
	}
	py.silent(200 * time.Millisecond)
	if err := goEl.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	py.expect("held")
	select {
	case l := <-observed:
		if string(l.Value) != "py-1" {
			t.Fatalf("observed leader %q, want py-1", l.Value)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no leader change observed")
	}
	if l, err := goEl.Leader(ctx); err != nil || string(l.Value) != "py-1" {
		t.Fatalf("Leader = %q, %v", l.Value, err)
	}
	won := make(chan error)
	go func() {
		_, err := goEl.Campaign(ctx, []byte("go-2"))
		won <- err
	}()
	tg.waitChildren(dir, 2)
	py.release()
	if err := <-won; err != nil {
		t.Fatal(err)
	}
	if err := goEl.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}
