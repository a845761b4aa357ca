package interop_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
)

// CuratorCache (a persistent recursive watch) and a recursive
// PersistentWatcher follow what the Go side does under a path.
func TestCuratorCache(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		root := tg.path("cache")
		a := tg.curator("a")
		mustCreate(t, tg, tg.root, "")
		a.expect("", "cache", "c", root)
		a.expectEvent("c", "initialized")
		a.expect("", "pwatch", "w", root)
		a.expectEvent("w", "registered")

		steps := []struct {
			do   func() error
			want string // the cache's event
		}{
			{func() error { return create(tg, root, "r") }, "create " + root + " r"},
			{func() error { return create(tg, root+"/a", "1") }, "create " + root + "/a 1"},
			{func() error { return create(tg, root+"/a/b", "2") }, "create " + root + "/a/b 2"},
			{func() error { _, err := tg.admin.Set(ctx, root+"/a", []byte("1b"), -1); return err }, "change " + root + "/a 1b"},
			{func() error { return tg.admin.Delete(ctx, root+"/a/b", -1) }, "delete " + root + "/a/b 2"},
			{func() error { return create(tg, root+"/c", "3") }, "create " + root + "/c 3"},
			{func() error { _, err := tg.admin.Set(ctx, root, []byte("r2"), -1); return err }, "change " + root + " r2"},
		}
		for _, s := range steps {
			if err := s.do(); err != nil {
				t.Fatal(err)
			}
			a.expectEvent("c", s.want)
		}
		a.expect(root+"/a=1b,"+root+"/c=3,"+root+"=r2", "cachedump", "c") // sorted

		want := []string{
			"NodeCreated " + root,
			"NodeCreated " + root + "/a",
			"NodeCreated " + root + "/a/b",
			"NodeDataChanged " + root + "/a",
			"NodeDeleted " + root + "/a/b",
			"NodeCreated " + root + "/c",
			"NodeDataChanged " + root,
		}
		for _, w := range want {
			a.expectEvent("w", w)
		}

		// A delete of the whole tree: both see every node go.
		a.expect("", "close", "w")
		for _, p := range []string{root + "/a", root + "/c", root} {
			if err := tg.admin.Delete(ctx, p, -1); err != nil {
				t.Fatal(err)
			}
		}
		for _, w := range []string{"delete " + root + "/a 1b", "delete " + root + "/c 3", "delete " + root + " r2"} {
			a.expectEvent("c", w)
		}
		a.expect("-", "cachedump", "c")
	})
}

func create(tg *target, p, data string) error {
	_, _, err := tg.admin.Create(tg.ctx(), p, []byte(data), client.ModePersistent, nil)
	return err
}

func mustCreate(t *testing.T, tg *target, p, data string) {
	t.Helper()
	if err := create(tg, p, data); err != nil && !errors.Is(err, client.ErrNodeExists) {
		t.Fatal(err)
	}
}

// SharedCount in two agents and a Paddock Counter in Curator mode add to
// one count concurrently (versioned sets); DistributedAtomicLong in two
// agents too.
func TestCuratorSharedCount(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		a, b := tg.curator("a"), tg.curator("b")
		shared := tg.path("shared")
		mustCreate(t, tg, tg.root, "")
		mustCreate(t, tg, shared, "\x00\x00\x00\x00")
		da := a.send("shared", shared, 2, 15)
		db := b.send("shared", shared, 2, 15)
		var wg sync.WaitGroup
		for i := 0; i < 2; i++ {
			c := recipes.NewCounter(tg.connect(), shared, curator)
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 15; j++ {
					if _, err := c.Add(ctx, 1); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		da.wait()
		db.wait()
		if v, _, err := recipes.NewCounter(tg.admin, shared, curator).Get(ctx); err != nil || v != 90 {
			t.Fatalf("shared count = %d, %v; want 90 (60 by Curator, 30 by Go)", v, err)
		}

		dal := tg.path("dal")
		da = a.send("dal", dal, 2, 15)
		db = b.send("dal", dal, 2, 15)
		da.wait()
		db.wait()
		data, _, err := tg.admin.Get(ctx, dal)
		if err != nil || len(data) != 8 || binary.BigEndian.Uint64(data) != 60 {
			t.Fatalf("DistributedAtomicLong %x, %v; want 60 as 8 bytes", data, err)
		}
	})
}

// Curator reads /zookeeper/config (getConfig, and its EnsembleTracker
// watches it): against a standalone server it must neither fail nor
// replace the connection string.
func TestCuratorEnsembleTracker(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		a := tg.curator("a")
		cfg := a.do("config")
		want, _, err := tg.admin.Get(tg.ctx(), "/zookeeper/config")
		if err != nil {
			t.Fatal(err)
		}
		if w := strings.ReplaceAll(strings.TrimSpace(string(want)), "\n", "|"); cfg != w && !(cfg == "-" && w == "") {
			t.Errorf("getConfig().forEnsemble() = %q, /zookeeper/config holds %q", cfg, want)
		}
		a.expect(tg.hosts, "connstr")
		if tg.zk != nil {
			tg.zk.DropConnections()
			a.expectEvent("state", "CONNECTED")
			a.expectEvent("state", "SUSPENDED")
			a.expectEvent("state", "RECONNECTED")
			a.expect(tg.hosts, "connstr")
		}
		a.expect(fmt.Sprint(tg.root), "create", tg.root, "-")
	})
}

// Connection states (Paddock only: the test drops connections and expires
// the session through zktest): SUSPENDED then RECONNECTED on a dropped
// connection, with an InterProcessMutex still held; LOST on expiry, with
// the lock gone (as Curator documents: after LOST the lock is not held).
func TestCuratorConnectionStates(t *testing.T) {
	tg := curatorPaddock(t)
	ctx := tg.ctx()
	dir := tg.path("lock")
	a := tg.curator("a")
	a.expectEvent("state", "CONNECTED")
	goLock := recipes.NewMutex(tg.connect(), dir, curator)

	a.expect("held", "hold", "h1", "mutex", dir)
	kids, _, err := tg.admin.Children(ctx, dir)
	if err != nil || len(kids) != 1 {
		t.Fatalf("lock children %v, %v", kids, err)
	}
	tg.zk.DropConnections()
	a.expectEvent("state", "SUSPENDED")
	a.expectEvent("state", "RECONNECTED")
	if after, _, _ := tg.admin.Children(ctx, dir); fmt.Sprint(after) != fmt.Sprint(kids) {
		t.Fatalf("lock children %v after a drop, want %v", after, kids)
	}
	if _, err := goLock.TryLock(ctx); !errors.Is(err, recipes.ErrLocked) {
		t.Fatalf("Go TryLock while Curator holds across a drop: %v", err)
	}
	a.expect("released", "release", "h1")
	tg.waitChildren(dir, 0)

	a.expect("held", "hold", "h2", "mutex", dir)
	before := a.do("session")
	id, err := strconv.ParseInt(before, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.zk.ExpireSession(id); err != nil {
		t.Fatal(err)
	}
	var states []string
	for len(states) == 0 || states[len(states)-1] != "RECONNECTED" {
		states = append(states, a.event("state"))
	}
	if s := strings.Join(states, " "); s != "SUSPENDED LOST RECONNECTED" && s != "LOST RECONNECTED" {
		t.Errorf("states after expiry: %s, want [SUSPENDED] LOST RECONNECTED", s)
	}
	tg.waitChildren(dir, 0)
	if _, err := goLock.TryLock(ctx); err != nil {
		t.Fatalf("Go TryLock after the Curator holder's session expired: %v", err)
	}
	if err := goLock.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	a.expect("released", "release", "h2") // the node is gone: no error
	if after := a.do("session"); after == before {
		t.Errorf("session %s unchanged after expiry", after)
	}
	a.expect("acquired", "try", "mutex", dir)
}

// CuratorCache and a PersistentWatcher keep following a path across a
// dropped connection (the client re-registers the persistent watch, and
// Curator adds it again) and across a session expiry (Curator adds it on
// the new session and the cache reloads): every change is seen once.
func TestCuratorCacheReconnect(t *testing.T) {
	tg := curatorPaddock(t)
	ctx := tg.ctx()
	root := tg.path("cache")
	mustCreate(t, tg, tg.root, "")
	mustCreate(t, tg, root, "r")
	a := tg.curator("a")
	a.expectEvent("state", "CONNECTED")
	a.expect("", "cache", "c", root)
	a.expectEvent("c", "create "+root+" r")
	a.expectEvent("c", "initialized")
	a.expect("", "pwatch", "w", root)
	a.expectEvent("w", "registered")

	set := func(p, data string) {
		t.Helper()
		if _, err := tg.admin.Set(ctx, p, []byte(data), -1); err != nil {
			t.Fatal(err)
		}
	}
	// The cache's events, of its watch and of its reload, come in no
	// defined order.
	cacheSees := func(want ...string) {
		t.Helper()
		sort.Strings(want)
		if got := a.someEvents("c", len(want)); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("cache events %q, want %q", got, want)
		}
	}

	tg.zk.DropConnections()
	a.expectEvent("state", "SUSPENDED")
	a.expectEvent("state", "RECONNECTED")
	a.expectEvent("w", "registered")
	mustCreate(t, tg, root+"/x", "1")
	set(root, "r2")
	cacheSees("create "+root+"/x 1", "change "+root+" r2")
	a.expectEvent("w", "NodeCreated "+root+"/x")
	a.expectEvent("w", "NodeDataChanged "+root) // once: no duplicate before it

	id, err := strconv.ParseInt(a.do("session"), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.zk.ExpireSession(id); err != nil {
		t.Fatal(err)
	}
	for s := ""; s != "RECONNECTED"; {
		s = a.event("state")
	}
	a.expectEvent("w", "registered")
	set(root+"/x", "2")
	set(root, "r3")
	cacheSees("change "+root+"/x 2", "change "+root+" r3")
	a.expectEvent("w", "NodeDataChanged "+root+"/x")
	a.expectEvent("w", "NodeDataChanged "+root)
	a.expect(root+"/x=2,"+root+"=r3", "cachedump", "c")
}
