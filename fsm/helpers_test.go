package fsm

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// harness applies commands to an FSM with increasing indexes and times and
// checks the invariants when the test ends.
type harness struct {
	t   testing.TB
	f   *FSM
	idx uint64
	now int64
}

func newHarness(t testing.TB) *harness {
	h := &harness{t: t, f: New(), now: 1_700_000_000_000}
	h.apply(&Command{Type: CmdInit, Secret: []byte("test-secret")})
	t.Cleanup(func() { require.NoError(t, h.f.Check()) })
	return h
}

func (h *harness) apply(c *Command) *Result {
	h.idx++
	h.now += 1000
	if c.Time == 0 {
		c.Time = h.now
	}
	return h.f.ApplyCommand(h.idx, 1, c)
}

func (h *harness) session() int64 {
	r := h.apply(&Command{Type: CmdCreateSession, Timeout: 10000})
	require.Equal(h.t, wire.OK, r.Err)
	return r.Session
}

func (h *harness) do(session int64, op Op) OpResult {
	r := h.apply(&Command{Type: CmdOps, Session: session, Ops: []Op{op}})
	require.Len(h.t, r.Ops, 1)
	require.Equal(h.t, r.Err, r.Ops[0].Err)
	return r.Ops[0]
}

func (h *harness) create(path string, data string, mode wire.CreateMode) OpResult {
	return h.do(0, Op{Type: wire.OpCreate2, Path: path, Data: []byte(data), ACL: wire.OpenACLUnsafe, Mode: mode})
}

func (h *harness) mustCreate(path string) string {
	res := h.create(path, "", wire.ModePersistent)
	require.Equal(h.t, wire.OK, res.Err, path)
	return res.Path
}

func createOp(path string) Op {
	return Op{Type: wire.OpCreate, Path: path, ACL: wire.OpenACLUnsafe}
}

// plain drops the ACLs from events, for comparisons.
func plain(evs []Event) []Event {
	out := make([]Event, len(evs))
	for i, e := range evs {
		out[i] = Event{Type: e.Type, Path: e.Path}
	}
	return out
}
