package diff_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// TestOneShotWatches: which reads arm which watches (exists on a missing
// node does, getData and getChildren on a missing node do not), which
// writes fire which events on which paths, one event per connection per
// trigger, and that a fired watch is gone.
func TestOneShotWatches(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w, w2 := r.conn("c"), r.conn("w"), r.conn("w2")
		r.create(c, "/o", "", wire.ModePersistent)

		r.note("reads on missing nodes")
		r.exists(w, "/o/a", true)
		r.get(w, "/o/b", true)
		r.children(w, "/o/c", true)
		r.do(w, wire.OpGetChildren, &wire.PathWatchRequest{Path: r.p("/o/c"), Watch: true})
		r.create(c, "/o/a", "", wire.ModePersistent)
		r.create(c, "/o/b", "", wire.ModePersistent)
		r.create(c, "/o/c", "", wire.ModePersistent)
		r.events(w)

		r.note("data and exists watches share one trigger; setACL, sync and failed writes fire nothing")
		r.get(w, "/o/a", true)
		r.exists(w, "/o/a", true)
		r.get(w2, "/o/a", true)
		r.children(w, "/o/a", true)
		r.setACL(c, "/o/a", openACL, -1)
		r.do(c, wire.OpSync, &wire.PathRequest{Path: r.p("/o/a")})
		r.setData(c, "/o/a", "x", 42)
		r.create(c, "/o/a", "", wire.ModePersistent)
		r.del(c, "/o/a/none", -1)
		r.events(w)
		r.setData(c, "/o/a", "1", -1)
		r.events(w)
		r.events(w2)
		r.setData(c, "/o/a", "2", -1)
		r.create(c, "/o/a/x", "", wire.ModePersistent)
		r.create(c, "/o/a/y", "", wire.ModePersistent)
		r.events(w)

		r.note("a grandchild does not fire the grandparent's child watch")
		r.children(w, "/o", true)
		r.create(c, "/o/a/x/deep", "", wire.ModePersistent)
		r.setData(c, "/o/a/x", "", -1)
		r.events(w)

		r.note("delete with data, exists and child watches on the node and a child watch on the parent")
		r.get(w, "/o/a/x/deep", true)
		r.exists(w, "/o/a/x/deep", true)
		r.children(w, "/o/a/x/deep", true)
		r.children(w, "/o/a/x", true)
		r.get(w2, "/o/a/x/deep", true)
		r.del(c, "/o/a/x/deep", -1)
		r.events(w)
		r.events(w2)
		r.note("only a child watch on the deleted node")
		r.children(w, "/o/a/y", true)
		r.del(c, "/o/a/y", -1)
		r.events(w)

		r.note("create/delete of a child fires the parent's child watch, then nothing until re-armed")
		r.children(w, "/o/a", true)
		r.create(c, "/o/a/z", "", wire.ModePersistent)
		r.del(c, "/o/a/z", -1)
		r.events(w)

		r.note("the writer's own watch fires before its reply")
		r.get(c, "/o/b", true)
		r.setData(c, "/o/b", "self", -1)
		r.events(c)

		r.note("a multi fires each event once, in op order")
		r.get(w, "/o/b", true)
		r.get(w, "/o/c", true)
		r.children(w, "/o", true)
		r.multi(c, r.mSetData("/o/c", "m", -1), r.mSetData("/o/b", "m", -1), r.mCreate(wire.OpCreate, "/o/d", "", wire.ModePersistent))
		r.events(w)

		r.note("ephemeral owner closes: watchers of its nodes are told")
		e := r.conn("e")
		r.create(e, "/o/eph", "", wire.ModeEphemeral)
		r.get(w, "/o/eph", true)
		r.children(w, "/o", true)
		r.do(e, wire.OpCloseSession, nil)
		r.events(w)
	})
}

// TestPersistentWatches: addWatch PERSISTENT and PERSISTENT_RECURSIVE,
// each alone on its path.
func TestPersistentWatches(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.addWatch(w, "/p", wire.AddWatchPersistent)
		r.addWatch(w, "/r", wire.AddWatchPersistentRecursive)
		r.create(c, "/p", "", wire.ModePersistent)
		r.setData(c, "/p", "1", -1)
		r.setData(c, "/p", "2", -1)
		r.create(c, "/p/c", "", wire.ModePersistent)
		r.setData(c, "/p/c", "x", -1)
		r.create(c, "/p/c/d", "", wire.ModePersistent)
		r.del(c, "/p/c/d", -1)
		r.del(c, "/p/c", -1)
		r.setACL(c, "/p", openACL, -1)
		r.del(c, "/p", -1)
		r.create(c, "/p", "", wire.ModePersistent)
		r.events(w)

		r.create(c, "/r", "", wire.ModePersistent)
		r.create(c, "/r/a", "", wire.ModePersistent)
		r.create(c, "/r/a/b", "", wire.ModePersistent)
		r.setData(c, "/r/a/b", "x", -1)
		r.del(c, "/r/a/b", -1)
		r.setData(c, "/r", "y", -1)
		r.create(c, "/rr", "", wire.ModePersistent)
		r.del(c, "/r/a", -1)
		r.multi(c, r.mCreate(wire.OpCreate, "/r/m1", "", wire.ModePersistent), r.mCreate(wire.OpCreate, "/r/m1/m2", "", wire.ModePersistent))
		r.events(w)

		r.note("a one-shot watch on a path below a recursive one, and another connection's watches")
		w2 := r.conn("w2")
		r.addWatch(w2, "/r", wire.AddWatchPersistent)
		r.get(w, "/r/m1", true)
		r.exists(w, "/r/new", true)
		r.setData(c, "/r/m1", "z", -1)
		r.create(c, "/r/new", "", wire.ModePersistent)
		r.setData(c, "/r/m1", "zz", -1)
		r.events(w)
		r.events(w2)

		r.note("addWatch with an unknown mode")
		r.do(w, wire.OpAddWatch, &wire.AddWatchRequest{Path: r.p("/q"), Mode: 2})
		r.do(w, wire.OpAddWatch, &wire.AddWatchRequest{Path: r.p("/q"), Mode: -1})
		r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/q"), Type: wire.WatcherAny})
		r.create(c, "/q", "", wire.ModePersistent)
		r.events(w)
	})
}

// TestMixedWatchModes: one connection with several watch modes on the
// same path. ZooKeeper 3.8 keeps one mode per connection and path, so a
// later getData/getChildren watch turns a persistent watch into a one-shot
// one and a second addWatch replaces the first; ZooKeeper 3.9
// (ZOOKEEPER-4466) keeps each mode, and so does Paddock.
func TestMixedWatchModes(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/p", "", wire.ModePersistent)
		r.create(c, "/p/k", "", wire.ModePersistent)

		w := r.conn("persistent+oneshot")
		r.addWatch(w, "/p", wire.AddWatchPersistent)
		r.get(w, "/p", true)
		r.children(w, "/p", true)
		r.setData(c, "/p", "1", -1)
		r.create(c, "/p/a", "", wire.ModePersistent)
		r.setData(c, "/p", "2", -1)
		r.create(c, "/p/b", "", wire.ModePersistent)
		r.eventsDiffer(w, "a one-shot watch added on a persistent one's path",
			"NodeDataChanged ~/p, NodeChildrenChanged ~/p",
			"NodeDataChanged ~/p, NodeChildrenChanged ~/p, NodeDataChanged ~/p, NodeChildrenChanged ~/p")

		w = r.conn("persistent+recursive")
		r.addWatch(w, "/p", wire.AddWatchPersistent)
		r.addWatch(w, "/p", wire.AddWatchPersistentRecursive)
		r.create(c, "/p/k/deep", "", wire.ModePersistent)
		r.create(c, "/p/c", "", wire.ModePersistent)
		r.eventsDiffer(w, "addWatch recursive on a persistent watch's path",
			"NodeCreated ~/p/k/deep, NodeCreated ~/p/c",
			"NodeCreated ~/p/k/deep, NodeCreated ~/p/c, NodeChildrenChanged ~/p")

		w = r.conn("recursive+persistent")
		r.addWatch(w, "/p", wire.AddWatchPersistentRecursive)
		r.addWatch(w, "/p", wire.AddWatchPersistent)
		r.create(c, "/p/k/deep2", "", wire.ModePersistent)
		r.create(c, "/p/d", "", wire.ModePersistent)
		r.eventsDiffer(w, "addWatch persistent on a recursive watch's path",
			"NodeChildrenChanged ~/p",
			"NodeCreated ~/p/k/deep2, NodeCreated ~/p/d, NodeChildrenChanged ~/p")
	})
}

// TestCheckAndRemoveWatches: checkWatches and removeWatches answers for
// each watcher type against each kind of one-shot watch, and their effect.
func TestCheckAndRemoveWatches(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/w", "", wire.ModePersistent)
		arms := []struct {
			name string
			arm  func(w *conn)
		}{
			{"none", func(*conn) {}},
			{"data", func(w *conn) { r.get(w, "/w", true) }},
			{"exist", func(w *conn) { r.exists(w, "/w", true) }},
			{"child", func(w *conn) { r.children(w, "/w", true) }},
			{"data+child", func(w *conn) { r.get(w, "/w", true); r.children(w, "/w", true) }},
		}
		types := []wire.WatcherType{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny}
		for _, a := range arms {
			for _, typ := range types {
				r.note("armed: %s; removeWatches %v", a.name, typ)
				w := r.conn(fmt.Sprintf("w-%s-%v", a.name, typ))
				a.arm(w)
				for _, t2 := range types {
					r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: t2})
				}
				r.do(w, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: typ})
				for _, t2 := range types {
					r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: t2})
				}
				r.setData(c, "/w", a.name, -1)
				r.create(c, "/w/x", "", wire.ModePersistent)
				r.del(c, "/w/x", -1)
				r.events(w)
			}
		}

		r.note("watches on a missing path, another path, undefined types")
		w := r.conn("w")
		r.exists(w, "/w/missing", true)
		r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/w/missing"), Type: wire.WatcherData})
		r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/w/other"), Type: wire.WatcherAny})
		r.do(w, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/w/missing"), Type: wire.WatcherData})
		r.do(w, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/w/missing"), Type: wire.WatcherData})
		for _, typ := range []wire.WatcherType{0, 6, -1} {
			r.do(w, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: typ})
			r.do(w, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: typ})
		}
		r.note("the connection survives")
		r.exists(w, "/w", false)
	})
}

// TestPersistentWatchRemoval: checkWatches/removeWatches on persistent and
// persistent-recursive watches. ZooKeeper 3.8 answers WatcherType
// Persistent (4) and PersistentRecursive (5) with MarshallingError (its
// WatcherType.fromInt predates them), and matches Children/Data/Any
// against a table whatever the watch's mode, so Children and Data remove
// half of a persistent watch and a removed watch can still be reported
// as present. ZooKeeper 3.9 (ZOOKEEPER-4466) accepts types 4 and 5 and
// matches modes: Children and Data select one-shot watches only, Any
// every mode. Paddock follows 3.9; each answer is asserted on both.
func TestPersistentWatchRemoval(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.create(c, "/w", "", wire.ModePersistent)
		types := []wire.WatcherType{wire.WatcherChildren, wire.WatcherData, wire.WatcherAny, wire.WatcherPersistent, wire.WatcherPersistentRecursive}
		// The check lists answer types Children, Data, Any, Persistent,
		// PersistentRecursive, in that order. {ZooKeeper 3.8.0, Paddock}.
		want := map[string][2]string{
			"PERSISTENT Children": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove OK; check NoWatcher,OK,OK,MarshallingError,MarshallingError; events [NodeDataChanged ~/w]",
				"check NoWatcher,NoWatcher,OK,OK,NoWatcher; remove NoWatcher; check NoWatcher,NoWatcher,OK,OK,NoWatcher; events [NodeDataChanged ~/w, NodeChildrenChanged ~/w, NodeChildrenChanged ~/w]"},
			"PERSISTENT Data": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove OK; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeChildrenChanged ~/w, NodeChildrenChanged ~/w]",
				"check NoWatcher,NoWatcher,OK,OK,NoWatcher; remove NoWatcher; check NoWatcher,NoWatcher,OK,OK,NoWatcher; events [NodeDataChanged ~/w, NodeChildrenChanged ~/w, NodeChildrenChanged ~/w]"},
			"PERSISTENT Any": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove OK; check OK,OK,OK,MarshallingError,MarshallingError; events []",
				"check NoWatcher,NoWatcher,OK,OK,NoWatcher; remove OK; check NoWatcher,NoWatcher,NoWatcher,NoWatcher,NoWatcher; events []"},
			"PERSISTENT Persistent": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove MarshallingError; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeDataChanged ~/w, NodeChildrenChanged ~/w, NodeChildrenChanged ~/w]",
				"check NoWatcher,NoWatcher,OK,OK,NoWatcher; remove OK; check NoWatcher,NoWatcher,NoWatcher,NoWatcher,NoWatcher; events []"},
			"PERSISTENT PersistentRecursive": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove MarshallingError; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeDataChanged ~/w, NodeChildrenChanged ~/w, NodeChildrenChanged ~/w]",
				"check NoWatcher,NoWatcher,OK,OK,NoWatcher; remove NoWatcher; check NoWatcher,NoWatcher,OK,OK,NoWatcher; events [NodeDataChanged ~/w, NodeChildrenChanged ~/w, NodeChildrenChanged ~/w]"},
			"PERSISTENT_RECURSIVE Children": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove OK; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeDataChanged ~/w, NodeCreated ~/w/x, NodeDeleted ~/w/x]",
				"check NoWatcher,NoWatcher,OK,NoWatcher,OK; remove NoWatcher; check NoWatcher,NoWatcher,OK,NoWatcher,OK; events [NodeDataChanged ~/w, NodeCreated ~/w/x, NodeDeleted ~/w/x]"},
			"PERSISTENT_RECURSIVE Data": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove OK; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeDeleted ~/w/x]",
				"check NoWatcher,NoWatcher,OK,NoWatcher,OK; remove NoWatcher; check NoWatcher,NoWatcher,OK,NoWatcher,OK; events [NodeDataChanged ~/w, NodeCreated ~/w/x, NodeDeleted ~/w/x]"},
			"PERSISTENT_RECURSIVE Any": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove OK; check OK,OK,OK,MarshallingError,MarshallingError; events []",
				"check NoWatcher,NoWatcher,OK,NoWatcher,OK; remove OK; check NoWatcher,NoWatcher,NoWatcher,NoWatcher,NoWatcher; events []"},
			"PERSISTENT_RECURSIVE Persistent": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove MarshallingError; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeDataChanged ~/w, NodeCreated ~/w/x, NodeDeleted ~/w/x]",
				"check NoWatcher,NoWatcher,OK,NoWatcher,OK; remove NoWatcher; check NoWatcher,NoWatcher,OK,NoWatcher,OK; events [NodeDataChanged ~/w, NodeCreated ~/w/x, NodeDeleted ~/w/x]"},
			"PERSISTENT_RECURSIVE PersistentRecursive": {
				"check OK,OK,OK,MarshallingError,MarshallingError; remove MarshallingError; check OK,OK,OK,MarshallingError,MarshallingError; events [NodeDataChanged ~/w, NodeCreated ~/w/x, NodeDeleted ~/w/x]",
				"check NoWatcher,NoWatcher,OK,NoWatcher,OK; remove OK; check NoWatcher,NoWatcher,NoWatcher,NoWatcher,NoWatcher; events []"},
		}
		for _, mode := range []wire.AddWatchMode{wire.AddWatchPersistent, wire.AddWatchPersistentRecursive} {
			for _, typ := range types {
				w := r.conn(fmt.Sprintf("w-%v-%v", mode, typ))
				res := w.call(wire.OpAddWatch, &wire.AddWatchRequest{Path: r.p("/w"), Mode: mode})
				if res.code != wire.OK {
					r.t.Fatalf("addWatch: %v", res.code)
				}
				got := "check " + checkAll(r, w, types)
				got += "; remove " + codeName(w.call(wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: typ}).code)
				got += "; check " + checkAll(r, w, types)
				r.setData(c, "/w", "", -1)
				r.create(c, "/w/x", "", wire.ModePersistent)
				r.del(c, "/w/x", -1)
				got += "; events " + eventList(r, w.barrier())
				exp := want[fmt.Sprintf("%v %v", mode, typ)]
				r.differ(fmt.Sprintf("addWatch %v, removeWatches %v", mode, typ), got, exp[0], exp[1])
			}
		}
	})
}

// checkAll returns checkWatches' answer for each type, comma-separated.
func checkAll(r *run, w *conn, types []wire.WatcherType) string {
	s := ""
	for i, typ := range types {
		if i > 0 {
			s += ","
		}
		s += codeName(w.call(wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/w"), Type: typ}).code)
	}
	return s
}

func eventList(r *run, evs []notification) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = fmt.Sprintf("%v %s", e.ev.Type, r.rel(e.ev.Path))
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// TestSetWatches: restoring watches after a reconnect with SetWatches and
// SetWatches2: what changed after relativeZxid is notified at once, the
// rest is re-armed.
func TestSetWatches(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		for _, p := range []string{"/s", "/s/data1", "/s/data2", "/s/gone", "/s/kids", "/s/kids2", "/s/gone2", "/s/prec", "/s/rec"} {
			r.create(c, p, "", wire.ModePersistent)
		}
		rel := c.call(wire.OpExists, &wire.PathWatchRequest{Path: r.p("/s")}).zxid
		r.setData(c, "/s/data1", "changed", -1)
		r.del(c, "/s/gone", -1)
		r.del(c, "/s/gone2", -1)
		r.create(c, "/s/kids/x", "", wire.ModePersistent)
		r.create(c, "/s/new", "", wire.ModePersistent)
		r.create(c, "/s/prec/x", "", wire.ModePersistent)

		w := r.conn("w")
		r.do(w, wire.OpSetWatches, &wire.SetWatches{RelativeZxid: rel,
			DataWatches:  []string{r.p("/s/data1"), r.p("/s/data2"), r.p("/s/gone"), r.p("/s/never-d")},
			ExistWatches: []string{r.p("/s/new"), r.p("/s/never"), r.p("/s/data2")},
			ChildWatches: []string{r.p("/s/kids"), r.p("/s/kids2"), r.p("/s/gone2"), r.p("/s/never-c")}})
		r.events(w)
		r.setData(c, "/s/data2", "now", -1)
		r.create(c, "/s/never", "", wire.ModePersistent)
		r.create(c, "/s/kids2/x", "", wire.ModePersistent)
		r.setData(c, "/s/data1", "again", -1)
		r.create(c, "/s/never-d", "", wire.ModePersistent)
		r.create(c, "/s/never-c", "", wire.ModePersistent)
		r.events(w)

		w2 := r.conn("w2")
		r.do(w2, wire.OpSetWatches2, &wire.SetWatches2{RelativeZxid: rel,
			DataWatches:                []string{r.p("/s/data1")},
			ExistWatches:               []string{},
			ChildWatches:               []string{r.p("/s/kids")},
			PersistentWatches:          []string{r.p("/s/prec"), r.p("/s/nothing")},
			PersistentRecursiveWatches: []string{r.p("/s/rec")}})
		r.events(w2)
		r.create(c, "/s/prec/y", "", wire.ModePersistent)
		r.create(c, "/s/rec/a", "", wire.ModePersistent)
		r.create(c, "/s/rec/a/b", "", wire.ModePersistent)
		r.setData(c, "/s/prec", "1", -1)
		r.create(c, "/s/nothing", "", wire.ModePersistent)
		r.events(w2)
		r.setData(c, "/s/prec", "2", -1)
		r.events(w2)
		r.do(w2, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/s/rec"), Type: wire.WatcherAny})
		r.do(w2, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/s/data1"), Type: wire.WatcherAny})

		r.note("with the Java client's xid -8")
		w4 := r.conn("w4")
		r.doXid(w4, wire.XidSetWatches, wire.OpSetWatches, &wire.SetWatches{RelativeZxid: rel,
			DataWatches: []string{r.p("/s/data1")}, ExistWatches: []string{}, ChildWatches: []string{}})
		r.events(w4)

		r.note("relativeZxid 0 reports every existing watched node as changed")
		w3 := r.conn("w3")
		r.do(w3, wire.OpSetWatches, &wire.SetWatches{RelativeZxid: 0,
			DataWatches: []string{r.p("/s/data2")}, ExistWatches: []string{r.p("/s/absent")}, ChildWatches: []string{r.p("/s/kids2")}})
		r.events(w3)

		r.note(`"" names the root, as for every read: an exists watch on it fires NodeCreated at once`)
		w5 := r.conn("w5")
		r.do(w5, wire.OpSetWatches, &wire.SetWatches{RelativeZxid: 1 << 60,
			DataWatches: []string{""}, ExistWatches: []string{""}, ChildWatches: []string{""}})
		r.events(w5)
	})
}

// TestNotificationHeaderZxid: the zxid in a notification's reply header.
// ZooKeeper 3.8 sends -1; 3.9 (and Paddock) send the zxid of the change
// that triggered it.
func TestNotificationHeaderZxid(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, w := r.conn("c"), r.conn("w")
		r.create(c, "/n", "", wire.ModePersistent)
		r.get(w, "/n", true)
		res := r.setData(c, "/n", "x", -1)
		evs := r.events(w)
		got := "no event"
		if len(evs) == 1 {
			switch st := res.resp.(*wire.StatResponse).Stat; evs[0].zxid {
			case -1:
				got = "-1"
			case st.Mzxid:
				got = "the setData zxid"
			default:
				got = fmt.Sprintf("%d", evs[0].zxid)
			}
		}
		r.differ("notification header zxid", got, "-1", "the setData zxid")
	})
}
