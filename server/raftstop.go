package server

import (
	"reflect"
	"sync"

	"github.com/hashicorp/raft"
)

// Futures hashicorp/raft never answers.
//
// Raft hands proposals and committed entries between its goroutines
// through buffered channels (applyCh, with BatchApplyCh; fsmMutateCh,
// always), and a goroutine that sees its shutdown returns without
// answering what is left in them. A future waits on its answer or on its
// ShutdownCh field, but Raft sets that field only on a few internal
// futures, so Error on an Apply, Barrier or membership change stranded
// that way blocks for ever: a connection's writer, a forwarded write's
// answer or a caller of Server.apply would wait on a server that has
// stopped (TestClusterLeaderWriteFailureStopsTheServer hung on it once in
// a while, under load).
//
// settle points the field at the node's stopped channel, closed once
// Raft has shut down (raftNode.close): from then on nothing answers a
// future any more, and a wait ends with raft.ErrRaftShutdown. A future
// answered before that keeps its answer, unless it is first asked after
// the stop, when either may come back (Go's select takes either ready
// case): its caller's connection is closed by then, and the client sees
// ConnectionLoss, a write's fate unknown, either way.
//
// The field is exported on an unexported type, so it is reached through
// reflection; TestSettledFutureEndsAtShutdown fails if a Raft upgrade
// moves it.

// shutdownChIndex caches, per future type, the index path of its
// ShutdownCh field (nil: the type has none).
var shutdownChIndex sync.Map // reflect.Type -> []int

var stopChanType = reflect.TypeOf((chan struct{})(nil))

// settleOn makes f's Error return once stopped is closed, if f is one of
// Raft's futures (a pointer to a struct with a ShutdownCh channel). It
// must run before f is shared with another goroutine. It reports whether
// f was settled.
func settleOn(f raft.Future, stopped chan struct{}) bool {
	v := reflect.ValueOf(f)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false // an errorFuture: answered already
	}
	idx := shutdownChField(v.Type().Elem())
	if idx == nil {
		return false
	}
	field := v.Elem().FieldByIndex(idx)
	if !field.CanSet() {
		return false
	}
	field.Set(reflect.ValueOf(stopped))
	return true
}

// shutdownChField returns the index path of t's ShutdownCh field, or nil.
func shutdownChField(t reflect.Type) []int {
	if idx, ok := shutdownChIndex.Load(t); ok {
		return idx.([]int)
	}
	var idx []int
	if sf, ok := t.FieldByName("ShutdownCh"); ok && sf.Type == stopChanType && sf.IsExported() {
		idx = sf.Index
	}
	shutdownChIndex.Store(t, idx)
	return idx
}

// settled is settleOn with the node's stopped channel, for a call site:
// f := settled(n, n.r.Barrier(timeout)).
func settled[F raft.Future](n *raftNode, f F) F {
	settleOn(f, n.stopped)
	return f
}
