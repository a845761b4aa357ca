package fsm

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// Check verifies the state's invariants and returns every violation found
// (joined), or nil:
//   - the tree's links are consistent (each child points back at its
//     parent, sibling links pair up, child counts match), every node is
//     reachable from the root, and the path index finds every node;
//   - numChildren ≤ the stored child-create count, and
//     pzxid ≥ czxid of every child; mzxid, pzxid ≥ czxid; no zxid is
//     beyond the last applied one;
//   - ephemerals have no children, their owner session exists and indexes
//     them, and every indexed ephemeral exists with that owner;
//   - the container and TTL indexes match the nodes' owner encodings.
func (f *FSM) Check() error {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var errs []error
	bad := func(format string, args ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	reached := 0
	f.chunks.walk(func(p string, id uint32, n *node) {
		reached++
		f.checkNode(p, id, n, bad)
	})
	if reached != f.count {
		bad("%d nodes reachable from the root, %d counted", reached, f.count)
	}
	for id, s := range f.sessions {
		for p := range s.ephemerals {
			if n := f.node(p); n == nil || n.owner != id {
				bad("session 0x%x indexes ephemeral %q that it does not own", id, p)
			}
		}
	}
	checkIndex := func(name string, set map[string]struct{}, want func(*node) bool) {
		for p := range set {
			if n := f.node(p); n == nil || !want(n) {
				bad("%s index holds %q wrongly", name, p)
			}
		}
	}
	checkIndex("container", f.containers, (*node).isContainer)
	checkIndex("ttl", f.ttls, func(n *node) bool { _, ok := n.ttl(); return ok })
	return errors.Join(errs...)
}

func (f *FSM) checkNode(p string, id uint32, n *node, bad func(string, ...any)) {
	if !n.used() {
		bad("%q: linked record %d is free", p, id)
	}
	if got, ok := f.lookup(p); !ok || got != id {
		bad("%q: the path index does not find node %d", p, id)
	}
	if n.mzxid < n.czxid || n.pzxid < n.czxid {
		bad("%q: mzxid %d or pzxid %d below czxid %d", p, n.mzxid, n.pzxid, n.czxid)
	}
	if n.mzxid > f.lastZxid || n.pzxid > f.lastZxid {
		bad("%q: zxid beyond last applied %d", p, f.lastZxid)
	}
	// The built-in children of / and /zookeeper were added without a
	// create, so they do not count towards cversion.
	if created := int(n.nkids) - builtinChildren(p); n.cversion >= 0 && int(n.cversion) < created {
		bad("%q: %d created children > create count %d", p, created, n.cversion)
	}
	kids, prev := 0, none
	for c := n.first; c != none; c = f.chunks.at(c).next {
		child := f.chunks.at(c)
		kids++
		if child.parent != id || child.prev != prev {
			bad("%q: child %q is linked wrongly", p, child.name())
		}
		if child.czxid > n.pzxid {
			bad("%q: pzxid %d below child %q czxid %d", p, n.pzxid, child.name(), child.czxid)
		}
		prev = c
	}
	if kids != int(n.nkids) {
		bad("%q: %d children linked, %d counted", p, kids, n.nkids)
	}
	switch {
	case n.isEphemeral():
		if n.nkids > 0 {
			bad("ephemeral %q has children", p)
		}
		s := f.sessions[n.owner]
		if s == nil {
			bad("ephemeral %q owned by missing session 0x%x", p, n.owner)
		} else if _, ok := s.ephemerals[p]; !ok {
			bad("ephemeral %q missing from session 0x%x index", p, n.owner)
		}
	case n.isContainer():
		if _, ok := f.containers[p]; !ok {
			bad("container %q not indexed", p)
		}
	default:
		if _, ok := n.ttl(); ok {
			if _, ok := f.ttls[p]; !ok {
				bad("ttl node %q not indexed", p)
			}
		}
	}
}

// Digest returns a deterministic hash of the whole replicated state: every
// node (path, data, ACL, Stat) in path order, every session, the last zxid
// and the session-id counter. Equal states have equal digests on every
// replica.
func (f *FSM) Digest() [32]byte {
	f.mu.RLock()
	defer f.mu.RUnlock()
	h := sha256.New()
	type entry struct {
		path string
		id   uint32
	}
	nodes := make([]entry, 0, f.count)
	f.chunks.walk(func(p string, id uint32, _ *node) { nodes = append(nodes, entry{p, id}) })
	slices.SortFunc(nodes, func(a, b entry) int { return strings.Compare(a.path, b.path) })
	var e wire.Encoder
	for _, en := range nodes {
		p, n := en.path, f.chunks.at(en.id)
		e.Reset()
		e.String(p)
		e.Buffer(n.data())
		wire.EncodeACLs(&e, f.acls.get(n.aclRef))
		st := n.stat()
		st.Encode(&e)
		e.Long(n.owner) // the stored owner, including container/TTL markers
		e.Int(n.cversion)
		h.Write(e.Bytes())
	}
	ids := make([]int64, 0, len(f.sessions))
	for id := range f.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		writeInts(h, id, int64(f.sessions[id].timeout))
	}
	writeInts(h, f.lastZxid, f.nextSession)
	h.Write(f.secret)
	var out [32]byte
	h.Sum(out[:0])
	return out
}

func writeInts(h hash.Hash, vs ...int64) {
	var b [8]byte
	for _, v := range vs {
		binary.BigEndian.PutUint64(b[:], uint64(v))
		h.Write(b[:])
	}
}

func builtinChildren(p string) int {
	switch p {
	case RootPath:
		return 1
	case ZooKeeperPath:
		return 2
	}
	return 0
}
