package zkcli

import (
	"context"
	"strings"

	"github.com/paddockzk/paddock/client"
)

// zkCli sets every watch with one watcher object, and the Java client
// delivers an event once per watcher however many of its watches (data,
// exist, child, persistent) it fires. The client package gives every
// watch its own channel, so the Shell keeps the bookkeeping needed to
// print each event once, as zkCli does:
//
//   - one-shot watches of one kind on one path share a slot; the first
//     event delivered marks the slot fired and is printed, the others
//     are dropped; an event that fires both kinds (NodeDeleted) marks
//     both slots;
//   - an event that a persistent watch also delivers is printed by the
//     persistent watch only;
//   - setting a persistent watch again on the same path and mode
//     replaces the previous one silently.

// watchKind is a table of one-shot watches: data (get -w, stat -w) or
// child (ls -w).
type watchKind int

const (
	kindData watchKind = iota
	kindChild
	numKinds
)

// slot is the set of pending one-shot watches of one kind on one path.
type slot struct{ fired bool }

type persistentKey struct {
	path      string
	recursive bool
}

// triggered returns the kinds of one-shot watches an event fires.
func triggered(t client.EventType) []watchKind {
	switch t {
	case client.EventNodeCreated, client.EventNodeDataChanged, client.EventDataWatchRemoved:
		return []watchKind{kindData}
	case client.EventNodeChildrenChanged, client.EventChildWatchRemoved:
		return []watchKind{kindChild}
	case client.EventNodeDeleted:
		return []watchKind{kindData, kindChild}
	}
	return nil
}

// watchOneShot prints the event of a one-shot watch set on path.
func (s *Shell) watchOneShot(sess *session, kind watchKind, path string, ch <-chan client.Event) {
	s.mu.Lock()
	slots := sess.slots[path]
	if slots == nil {
		slots = new([numKinds]*slot)
		sess.slots[path] = slots
	}
	sl := slots[kind]
	if sl == nil {
		sl = &slot{}
		slots[kind] = sl
	}
	s.mu.Unlock()
	sess.wg.Add(1)
	go func() {
		defer sess.wg.Done()
		ev, ok := <-ch
		if !ok || ev.Type == client.EventNone {
			return // the session ended
		}
		if s.fire(sess, kind, path, sl, ev) {
			s.printWatchEvent(ev)
		}
	}()
}

// fire marks the slots ev fires and reports whether to print ev.
func (s *Shell) fire(sess *session, kind watchKind, path string, sl *slot, ev client.Event) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sl.fired {
		return false
	}
	sl.fired = true
	if slots := sess.slots[path]; slots != nil {
		if slots[kind] == sl {
			slots[kind] = nil
		}
		for _, k := range triggered(ev.Type) {
			if x := slots[k]; x != nil {
				x.fired = true
				slots[k] = nil
			}
		}
		if *slots == [numKinds]*slot{} {
			delete(sess.slots, path)
		}
	}
	return s.printWatches && !s.persistentDelivers(sess, path, ev.Type)
}

// persistentDelivers reports whether a persistent watch of the session
// also delivers an event of type t on path.
func (s *Shell) persistentDelivers(sess *session, path string, t client.EventType) bool {
	switch t {
	case client.EventNodeCreated, client.EventNodeDeleted, client.EventNodeDataChanged:
	case client.EventNodeChildrenChanged:
		_, ok := sess.persistent[persistentKey{path, false}]
		return ok
	default:
		return false
	}
	for k := range sess.persistent {
		if k.path == path || k.recursive && isAncestor(k.path, path) {
			return true
		}
	}
	return false
}

func isAncestor(a, p string) bool {
	return a == "/" || strings.HasPrefix(p, a+"/")
}

// watchPersistent sets a persistent watch and prints its events.
func (s *Shell) watchPersistent(ctx context.Context, sess *session, path string, recursive bool) error {
	w, err := sess.conn.AddWatch(ctx, path, recursive)
	if err != nil {
		return err
	}
	key := persistentKey{path, recursive}
	s.mu.Lock()
	old := sess.persistent[key]
	sess.persistent[key] = w
	s.mu.Unlock()
	sess.wg.Add(1)
	go func() {
		defer sess.wg.Done()
		for ev := range w.Events() {
			if ev.Type == client.EventNone {
				continue // state changes are printed once, by watchState
			}
			s.mu.Lock()
			current := sess.persistent[key] == w
			if ev.Type == client.EventPersistentWatchRemoved && current {
				delete(sess.persistent, key)
			}
			print := current && s.printWatches
			s.mu.Unlock()
			if print {
				s.printWatchEvent(ev)
			}
		}
		s.mu.Lock()
		if sess.persistent[key] == w {
			delete(sess.persistent, key)
		}
		s.mu.Unlock()
	}()
	if old != nil {
		// The new watch keeps the server-side watch; the old one ends
		// without a word.
		_ = old.Remove(ctx)
	}
	return nil
}

func (s *Shell) printWatchEvent(ev client.Event) {
	state := keeperState(ev.State)
	if state == "" {
		state = "SyncConnected"
	}
	s.printEvent(state, ev.Type.String(), ev.Path)
}
