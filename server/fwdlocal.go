package server

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
)

// A write forwarded by a follower is answered once the follower's own FSM
// has applied it, so that the reply and any read after it see the write.
// The leader's answer carried nothing the follower cannot learn from that
// apply: the entry's index is its own, and the FSM, a pure function of the
// log, computes the same result on every node. So the follower tags each
// forwarded write (raft.Log Extensions: its forwarder's epoch and the
// call's id) and resolves the call when it applies the tagged entry, as
// ZooKeeper's CommitProcessor matches a committed request to the waiting
// one by session and cxid. The leader answers a tagged write only when it
// fails; on success it sends nothing, which saves one message, encoded,
// written, read and decoded, per forwarded write.
//
// A leader that does not know tags (an older Paddock, during a rolling
// upgrade) answers as before; whichever answer comes first resolves the
// call. A follower that installs a snapshot fails its pending tagged calls
// (their entries may be inside it, never applied one by one), as a lost
// connection to the leader does: the client learns the write's fate is
// unknown (ConnectionLoss) and reads it back.

const (
	// fwdTagV1 starts a forward tag: 1 byte, then the forwarder's epoch and
	// the call's id, 8 bytes each, big-endian.
	fwdTagV1  = 1
	fwdTagLen = 17
)

func fwdTag(epoch, id uint64) []byte {
	b := make([]byte, 0, fwdTagLen)
	b = append(b, fwdTagV1)
	b = binary.BigEndian.AppendUint64(b, epoch)
	return binary.BigEndian.AppendUint64(b, id)
}

func parseFwdTag(b []byte) (epoch, id uint64, ok bool) {
	if len(b) != fwdTagLen || b[0] != fwdTagV1 {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[1:9]), binary.BigEndian.Uint64(b[9:]), true
}

// newFwdEpoch names one forwarder: calls of another node, or of this one
// before a restart, never match its tags.
func newFwdEpoch() uint64 {
	for {
		if e := rand.Uint64(); e != 0 {
			return e
		}
	}
}

// resolveLocal resolves the pending tagged call whose entry (index, with
// result out) this node has just applied. It never blocks.
func (f *forwarder) resolveLocal(tag []byte, index uint64, out interface{}) {
	epoch, id, ok := parseFwdTag(tag)
	if !ok || epoch != f.epoch {
		return
	}
	f.mu.Lock()
	call, found := f.pending[id]
	found = found && call.tagged
	if found {
		delete(f.pending, id)
	}
	f.mu.Unlock()
	if !found {
		return // answered already, timed out, or not a tagged call
	}
	resp := &fwdResponse{ID: id, Index: index}
	switch r := out.(type) {
	case *fsm.Result:
		res := *r
		res.Events = nil
		resp.Result = &res
	case error:
		resp.Err = r.Error()
	default:
		resp.Err = fmt.Sprintf("paddock: unexpected apply result %T", out)
	}
	call.ch <- resp
}

// failTagged fails every pending tagged call (see above).
func (f *forwarder) failTagged() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, call := range f.pending {
		if call.tagged {
			delete(f.pending, id)
			if call.lane != nil {
				call.lane.broken = true // the entry may be in the snapshot
			}
			call.ch <- &fwdResponse{ID: id, Err: errFwdConn.Error()}
		}
	}
}

// tagFSM wraps a cluster node's FSM: it passes each applied entry that
// carries Extensions, with its result, to applied, and calls restored
// after a snapshot was installed.
type tagFSM struct {
	inner    raft.FSM
	applied  func(l *raft.Log, out interface{})
	restored func()
}

// ApplyBatch applies logs (through the inner FSM's ApplyBatch if it has
// one; otherwise its Apply for each command, as Raft would).
func (t *tagFSM) ApplyBatch(logs []*raft.Log) []interface{} {
	out := applyBatch(t.inner, logs)
	for i, l := range logs {
		if len(l.Extensions) > 0 && l.Type == raft.LogCommand {
			t.applied(l, out[i])
		}
	}
	return out
}

// applyBatch applies logs to f as Raft would: through f's ApplyBatch if it
// is a raft.BatchingFSM, otherwise through its Apply for each command.
func applyBatch(f raft.FSM, logs []*raft.Log) []interface{} {
	if b, ok := f.(raft.BatchingFSM); ok {
		return b.ApplyBatch(logs)
	}
	out := make([]interface{}, len(logs))
	for i, l := range logs {
		if l.Type == raft.LogCommand {
			out[i] = f.Apply(l)
		}
	}
	return out
}

// Apply applies one entry (see ApplyBatch).
func (t *tagFSM) Apply(l *raft.Log) interface{} { return t.ApplyBatch([]*raft.Log{l})[0] }

// Snapshot snapshots the inner FSM.
func (t *tagFSM) Snapshot() (raft.FSMSnapshot, error) { return t.inner.Snapshot() }

// Restore installs a snapshot in the inner FSM.
func (t *tagFSM) Restore(rc io.ReadCloser) error {
	err := t.inner.Restore(rc)
	t.restored()
	return err
}
