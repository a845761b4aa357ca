package diff_test

import (
	"io"
	"net"
	"regexp"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestRecursiveWatchLifecycle: a recursive watch next to one-shot watches
// of the same connection (in the other table or on other paths), on a
// node deleted and created again, sequential and ephemeral children, a
// persistent watch with a one-shot watch on a child, getChildren2's
// watch, and SetWatches2 after the watched nodes changed or went away.
func TestRecursiveWatchLifecycle(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.create(c, "/r", "", wire.ModePersistent)
		r.addWatch(w, "/r", wire.AddWatchPersistentRecursive)
		r.exists(w, "/r/a", true)
		r.children(w, "/r", true)
		r.create(c, "/r/a", "", wire.ModePersistent)
		r.events(w)
		r.get(w, "/r/a", true)
		r.del(c, "/r/a", -1)
		r.events(w)

		r.note("the watched node deleted and created again: the watch stays")
		r.del(c, "/r", -1)
		r.create(c, "/r", "x", wire.ModePersistent)
		r.create(c, "/r/s-", "", wire.ModePersistentSequential)
		r.setData(c, "/r", "y", -1)
		r.events(w)

		r.note("a persistent watch on a node, one-shot watches on its child")
		w2 := r.conn("w2")
		r.create(c, "/p", "", wire.ModePersistent)
		r.create(c, "/p/c", "", wire.ModePersistent)
		r.addWatch(w2, "/p", wire.AddWatchPersistent)
		r.exists(w2, "/p/c", true)
		r.children(w2, "/p/c", true)
		r.del(c, "/p/c", -1)
		r.events(w2)

		r.note("getChildren2 arms a child watch; not on a missing node")
		w3 := r.conn("w3")
		r.children(w3, "/p", true)
		r.children(w3, "/p/none", true)
		r.create(c, "/p/none", "", wire.ModePersistent)
		r.create(c, "/p/d", "", wire.ModePersistent)
		r.events(w3)

		r.note("ephemerals of a closed session below a recursive watch")
		e := r.conn("e")
		r.create(e, "/r/e1", "", wire.ModeEphemeral)
		r.create(e, "/r/e2", "", wire.ModeEphemeral)
		r.events(w)
		r.do(e, wire.OpCloseSession, nil)
		r.eventsUnordered(w)

		r.note("SetWatches2 after changes: persistent and recursive watches are re-armed without events")
		rel := c.call(wire.OpExists, &wire.PathWatchRequest{Path: r.p("/r")}).zxid
		r.create(c, "/r/after", "", wire.ModePersistent)
		r.del(c, "/p/none", -1)
		r.del(c, "/p/d", -1)
		r.del(c, "/p", -1)
		w4 := r.conn("w4")
		r.do(w4, wire.OpSetWatches2, &wire.SetWatches2{RelativeZxid: rel,
			DataWatches: []string{r.p("/r/after")}, ExistWatches: []string{r.p("/r/after"), r.p("/p")},
			ChildWatches: []string{r.p("/r/after"), r.p("/r")}, PersistentWatches: []string{r.p("/p")},
			PersistentRecursiveWatches: []string{r.p("/r"), r.p("/r")}})
		r.events(w4)
		r.create(c, "/p", "", wire.ModePersistent)
		r.create(c, "/r/after/x", "", wire.ModePersistent)
		r.events(w4)
		r.do(w4, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/r"), Type: wire.WatcherAny})
		r.do(w4, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/r"), Type: wire.WatcherAny})
		r.create(c, "/r/after/y", "", wire.ModePersistent)
		r.events(w4)
	})
}

// TestWatchesInMultiAndRemoval: a multi fires one event per change, in op
// order (a node created, changed and deleted by one multi too); a failed
// multi fires nothing; removeWatches sends no event (the Java client
// makes its DataWatchRemoved/ChildWatchRemoved itself) and leaves a fired
// or removed watch silent.
func TestWatchesInMultiAndRemoval(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.create(c, "/r", "", wire.ModePersistent)
		r.addWatch(w, "/r", wire.AddWatchPersistentRecursive)
		r.children(w, "/r", true)
		r.multi(c, r.mCreate(wire.OpCreate, "/r/m", "", wire.ModePersistent), r.mSetData("/r/m", "x", -1), r.mDelete("/r/m", -1))
		r.events(w)
		r.multi(c, r.mCreate(wire.OpCreate, "/r/f", "", wire.ModePersistent), r.mCheck("/r", 7))
		r.events(w)

		w2 := r.conn("w2")
		r.create(c, "/d", "", wire.ModePersistent)
		r.get(w2, "/d", true)
		r.exists(w2, "/d/x", true)
		r.children(w2, "/r", true)
		r.addWatch(w2, "/d", wire.AddWatchPersistent)
		r.del(c, "/d", -1)
		r.events(w2)
		r.do(w2, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/d"), Type: wire.WatcherAny})
		r.do(w2, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/d/x"), Type: wire.WatcherData})
		r.do(w2, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/d/x"), Type: wire.WatcherData})
		r.do(w2, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/r"), Type: wire.WatcherChildren})
		r.do(w2, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/r"), Type: wire.WatcherChildren})
		r.events(w2)
		r.create(c, "/r/z", "", wire.ModePersistent)
		r.create(c, "/d", "", wire.ModePersistent)
		r.create(c, "/d/x", "", wire.ModePersistent)
		r.events(w2)
	})
}

// TestWatchOddPaths: addWatch, checkWatches and removeWatches take any
// path (the server validates none of them). ZooKeeper 3.8.0's
// checkWatches does not look up the asking connection's watch: it answers
// for any connection's watch on the path, never for "" (its path iterator
// stops there), MarshallingError for a path without '/' (it throws
// looking for the parent) and OK for Data on a persistent watch; Paddock
// answers as 3.9 does, for the connection's own watch of that type (see
// TestPersistentWatchRemoval and README).
func TestWatchOddPaths(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/r", "", wire.ModePersistent)
		// checkWatches answers for Any and Data: {ZooKeeper 3.8.0, Paddock}.
		for _, tc := range []struct {
			path      string
			any, data [2]string
		}{
			{"", [2]string{"NoWatcher", "OK"}, [2]string{"NoWatcher", "NoWatcher"}},
			{"x", [2]string{"MarshallingError", "OK"}, [2]string{"MarshallingError", "NoWatcher"}},
			{"/", [2]string{"OK", "OK"}, [2]string{"OK", "NoWatcher"}},
			{r.p("/r/"), [2]string{"OK", "OK"}, [2]string{"OK", "NoWatcher"}},
			{r.p("/r\x00"), [2]string{"OK", "OK"}, [2]string{"OK", "NoWatcher"}},
			{r.p("//r"), [2]string{"OK", "OK"}, [2]string{"OK", "NoWatcher"}},
			{r.p("/missing"), [2]string{"OK", "OK"}, [2]string{"OK", "NoWatcher"}},
		} {
			k := r.conn("k")
			r.do(k, wire.OpAddWatch, &wire.AddWatchRequest{Path: tc.path, Mode: wire.AddWatchPersistent})
			for i, answers := range [][2]string{tc.any, tc.data} {
				req := &wire.WatchesRequest{Path: tc.path, Type: []wire.WatcherType{wire.WatcherAny, wire.WatcherData}[i]}
				if answers[0] == answers[1] {
					r.do(k, wire.OpCheckWatches, req)
				} else {
					r.doDiffer(k, "3.8.0 checkWatches", code(answers[0]), code(answers[1]), wire.OpCheckWatches, req)
				}
			}
			r.do(k, wire.OpRemoveWatches, &wire.WatchesRequest{Path: tc.path, Type: wire.WatcherAny})
			r.do(k, wire.OpRemoveWatches, &wire.WatchesRequest{Path: tc.path, Type: wire.WatcherAny})
			r.note("k: connection still open: %v", k.alive())
			k.close()
		}
		r.note("a recursive watch on a missing path fires for its subtree once created")
		w := r.conn("w")
		r.addWatch(w, "/later", wire.AddWatchPersistentRecursive)
		r.create(c, "/later", "", wire.ModePersistent)
		r.create(c, "/later/k", "", wire.ModePersistent)
		r.events(w)
	})
}

// code returns the wire.Code named name in transcripts.
func code(name string) wire.Code {
	for c, n := range codeNames {
		if n == name {
			return c
		}
	}
	panic("unknown code name " + name)
}

// TestWatchesOnRootAndSystemNodes: watches on "/", "/zookeeper",
// /zookeeper/quota and /zookeeper/config. (Nothing is written under
// /zookeeper/quota: TestSystemNodes compares its Stat on the shared
// oracle.) Not parallel: a child watch on "/" sees every scenario's base
// node.
func TestWatchesOnRootAndSystemNodes(t *testing.T) {
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		// The root's Stat and children are not recorded: other scenarios
		// (and earlier runs on the oracle) change them.
		for _, req := range []struct {
			op wire.OpCode
			rq wire.Record
		}{
			{wire.OpGetData, &wire.PathWatchRequest{Path: "/", Watch: true}},
			{wire.OpGetChildren, &wire.PathWatchRequest{Path: "/", Watch: true}},
		} {
			res := w.call(req.op, req.rq)
			r.note("w: %s -> %s", r.desc(req.op, req.rq), codeName(res.code))
		}
		r.do(w, wire.OpExists, &wire.PathWatchRequest{Path: "/zookeeper", Watch: true})
		r.do(w, wire.OpGetChildren, &wire.PathWatchRequest{Path: "/zookeeper/quota", Watch: true})
		r.do(w, wire.OpAddWatch, &wire.AddWatchRequest{Path: "/zookeeper", Mode: wire.AddWatchPersistentRecursive})
		r.do(w, wire.OpGetData, &wire.PathWatchRequest{Path: "/zookeeper/config", Watch: true})
		sib := r.base + "-sibling"
		r.do(c, wire.OpCreate, &wire.CreateRequest{Path: sib, ACL: openACL})
		r.do(c, wire.OpDelete, &wire.DeleteRequest{Path: sib, Version: -1})
		r.events(w)

		r.note("writes elsewhere fire none of them")
		r.create(c, "/k", "abc", wire.ModePersistent)
		r.setData(c, "/k", "abcdef", -1)
		r.events(w)
	})
}

// fourLetterWord sends word to the scenario's server and returns its
// answer.
func fourLetterWord(r *run, word string) string {
	r.t.Helper()
	nc, err := net.DialTimeout("tcp", r.addr, waitTimeout)
	if err != nil {
		r.t.Fatalf("%s: %v", word, err)
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(waitTimeout))
	if _, err := nc.Write([]byte(word)); err != nil {
		r.t.Fatalf("%s: %v", word, err)
	}
	b, err := io.ReadAll(nc)
	if err != nil {
		r.t.Fatalf("%s: %v", word, err)
	}
	return string(b)
}

var wchsRE = regexp.MustCompile(`^(\d+) connections watching (\d+) paths\nTotal watches:(\d+)\n$`)

// wchs returns wchs' numbers as "connections/paths/watches".
func wchs(r *run) string {
	r.t.Helper()
	out := fourLetterWord(r, "wchs")
	m := wchsRE.FindStringSubmatch(out)
	if m == nil {
		r.t.Fatalf("wchs: unexpected answer %q", out)
	}
	return m[1] + "/" + m[2] + "/" + m[3]
}

// mntrValue returns the value of one mntr line.
func mntrValue(r *run, key string) string {
	r.t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(key) + `\t(.*)$`).FindStringSubmatch(fourLetterWord(r, "mntr"))
	if m == nil {
		r.t.Fatalf("mntr: no %s", key)
	}
	return m[1]
}

// TestWatchSummary: wchs with one-shot, persistent and recursive watches.
// ZooKeeper's wchs (and wchc, wchp) show its data table only, so a
// getChildren watch is invisible there, and it counts a connection whose
// watches all fired or were removed; Paddock's show both tables and the
// connections holding a watch (README). mntr's zk_watch_count counts
// both tables on both servers, but ZooKeeper 3.8 keeps a recursive watch
// in both tables (3.9 and Paddock in the data table only). Not parallel: the numbers are the
// server's.
func TestWatchSummary(t *testing.T) {
	both(t, func(r *run) {
		// Wait for earlier scenarios' connections to be gone.
		deadline := time.Now().Add(waitTimeout)
		for wchs(r) != "0/0/0" {
			if time.Now().After(deadline) {
				r.t.Fatalf("wchs: watches of earlier connections remain: %s", wchs(r))
			}
			time.Sleep(20 * time.Millisecond) // poll interval
		}
		c := r.conn("c")
		r.create(c, "/a", "", wire.ModePersistent)
		r.create(c, "/b", "", wire.ModePersistent)
		step := func(what, zk, pd string) { r.differ("wchs "+what, wchs(r), zk, pd) }
		w1 := r.conn("w1")
		r.get(w1, "/a", true)
		step("after a getData watch", "1/1/1", "1/1/1")
		w2 := r.conn("w2")
		r.children(w2, "/a", true)
		step("+ a getChildren watch", "1/1/1", "2/1/2")
		w3 := r.conn("w3")
		r.addWatch(w3, "/b", wire.AddWatchPersistent)
		step("+ a persistent watch", "2/2/2", "3/2/4")
		w4 := r.conn("w4")
		r.addWatch(w4, "/b", wire.AddWatchPersistentRecursive)
		step("+ a recursive watch", "3/2/3", "4/2/5")
		r.differ("mntr zk_watch_count (3.8 adds a recursive watch to the child table too)", mntrValue(r, "zk_watch_count"), "6", "5")
		r.setData(c, "/a", "x", -1)
		step("after the getData watch fired", "3/1/2", "3/2/4")
		r.do(w3, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/b"), Type: wire.WatcherAny})
		step("after the persistent watch was removed", "3/1/1", "2/2/2")
	})
}
