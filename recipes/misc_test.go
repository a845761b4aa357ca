package recipes_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

func TestBarrier(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	p := e.path("barrier")
	b := recipes.NewBarrier(e.connect(), p)
	if err := b.Wait(ctx); err != nil { // not raised: returns at once
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 3)
	for i := 0; i < 3; i++ {
		w := recipes.NewBarrier(e.connect(), p)
		go func() { done <- w.Wait(ctx) }()
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Wait(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with a cancelled context = %v", err)
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := recv(t, done); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDoubleBarrier(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	p := e.path("double")
	const n = 4
	var mu sync.Mutex
	var log []string
	note := func(s string) { mu.Lock(); log = append(log, s); mu.Unlock() }
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		b := recipes.NewDoubleBarrier(e.connect(), p, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Enter(ctx); err != nil {
				t.Error(err)
				return
			}
			note("in")
			if err := b.Leave(ctx); err != nil {
				t.Error(err)
				return
			}
			note("out")
		}()
	}
	wg.Wait()
	// Nobody gets out before everybody got in.
	if want := "[in in in in out out out out]"; fmt.Sprint(log) != want {
		t.Errorf("order %v, want %s", log, want)
	}
	waitFor(t, "an empty barrier", func() error {
		if kids := e.children(p); len(kids) > 0 {
			return fmt.Errorf("left: %v", kids)
		}
		return nil
	})
}

func TestCounter(t *testing.T) {
	for _, compat := range compats {
		t.Run(compat.String(), func(t *testing.T) {
			e := newEnv(t)
			ctx := tctx(t)
			p := e.path("counter")
			var wg sync.WaitGroup
			for s := 0; s < 4; s++ {
				c := recipes.NewCounter(e.connect(), p, recipes.WithCompat(compat))
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 10; i++ {
						if _, err := c.Add(ctx, 1); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			c := recipes.NewCounter(e.admin, p, recipes.WithCompat(compat))
			v, ver, err := c.Get(ctx)
			if err != nil || v != 40 {
				t.Fatalf("counter = %d, %v; want 40", v, err)
			}
			if ok, err := c.CompareAndSet(ctx, ver-1, 7); ok || err != nil {
				t.Fatalf("CompareAndSet at a stale version = %v, %v", ok, err)
			}
			if ok, err := c.CompareAndSet(ctx, ver, 7); !ok || err != nil {
				t.Fatalf("CompareAndSet = %v, %v", ok, err)
			}
			data, _, _ := e.admin.Get(ctx, p)
			want := []byte("7")
			if compat == recipes.Curator {
				want = binary.BigEndian.AppendUint32(nil, 7)
			}
			if !slices.Equal(data, want) {
				t.Errorf("stored %q, want %q", data, want)
			}
		})
	}
}

func TestQueue(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	p := e.path("queue")
	q := recipes.NewQueue(e.connect(), p)
	if _, err := q.TryTake(ctx); !errors.Is(err, recipes.ErrQueueEmpty) {
		t.Fatalf("TryTake on an empty queue = %v", err)
	}
	for i := 0; i < 10; i++ {
		if err := q.Put(ctx, []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := q.Len(ctx); n != 10 || err != nil {
		t.Fatalf("Len = %d, %v", n, err)
	}
	for i := 0; i < 5; i++ { // FIFO for one consumer
		data, err := q.Take(ctx)
		if err != nil || string(data) != strconv.Itoa(i) {
			t.Fatalf("Take = %q, %v; want %d", data, err, i)
		}
	}
	// Several consumers, one of them waiting on the empty queue: every
	// item is taken exactly once.
	taken := make(chan string, 20)
	var wg sync.WaitGroup
	for c := 0; c < 3; c++ {
		cq := recipes.NewQueue(e.connect(), p)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				data, err := cq.Take(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if string(data) == "stop" {
					return
				}
				taken <- string(data)
			}
		}()
	}
	for i := 10; i < 15; i++ {
		if err := q.Put(ctx, []byte(strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 3; i++ {
		if err := q.Put(ctx, []byte("stop")); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(taken)
	var got []int
	for s := range taken {
		n, _ := strconv.Atoi(s)
		got = append(got, n)
	}
	slices.Sort(got)
	if fmt.Sprint(got) != "[5 6 7 8 9 10 11 12 13 14]" {
		t.Errorf("taken %v", got)
	}
}

func TestRegistry(t *testing.T) {
	e := newEnv(t)
	ctx := tctx(t)
	base := e.path("services")
	r := recipes.NewRegistry(e.connect(), base)
	w := r.Watch(ctx, "api")
	if got := recv(t, w.Updates()); len(got) != 0 {
		t.Fatalf("first list %v, want empty", got)
	}
	regs := map[string]*recipes.Registration{}
	var expire func(string)
	for _, id := range []string{"a", "b", "c"} {
		conn := e.connect()
		if id == "c" {
			conn, expire = e.expirable()
		}
		g, err := recipes.NewRegistry(conn, base).Register(ctx, "api", id, []byte("host-"+id))
		if err != nil {
			t.Fatal(err)
		}
		regs[id] = g
	}
	if _, err := r.Register(ctx, "api", "a", nil); !errors.Is(err, client.ErrNodeExists) {
		t.Fatalf("duplicate Register = %v", err)
	}
	waitIDs(t, w, "[a b c]")
	if got := w.Instances(); string(got[1].Data) != "host-b" {
		t.Errorf("instance b data %q", got[1].Data)
	}
	if err := regs["a"].Deregister(ctx); err != nil {
		t.Fatal(err)
	}
	waitIDs(t, w, "[b c]")
	expire(regs["c"].Path())
	waitIDs(t, w, "[b]")
	closed(t, regs["c"].Lost(), "lost registration")
	list, err := r.Instances(ctx, "api")
	if err != nil || len(list) != 1 || list[0].ID != "b" {
		t.Fatalf("Instances = %v, %v", list, err)
	}
}

func waitIDs(t *testing.T, w *recipes.ServiceWatch, want string) {
	t.Helper()
	for {
		var ids []string
		for _, in := range w.Instances() {
			ids = append(ids, in.ID)
		}
		if fmt.Sprint(ids) == want {
			return
		}
		select {
		case _, ok := <-w.Updates():
			if !ok {
				t.Fatalf("watch ended: %v", w.Err())
			}
		case <-time.After(waitTimeout):
			t.Fatalf("instances %v, want %s", ids, want)
		}
	}
}
