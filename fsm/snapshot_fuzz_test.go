package fsm

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/hashicorp/raft"

	"github.com/paddockzk/paddock/internal/wire"
)

// FuzzRestoreSnapshot: a corrupt snapshot (a damaged file, a bad
// InstallSnapshot) is ErrBadSnapshot and leaves the state as it was, never
// a panic; whatever restores passes the FSM's own consistency check.
func FuzzRestoreSnapshot(f *testing.F) {
	h := newHarness(f)
	s := h.session()
	h.mustCreate("/a")
	h.mustCreate("/a/b")
	h.do(s, Op{Type: wire.OpCreate, Path: "/a/e", ACL: wire.OpenACLUnsafe, Mode: wire.ModeEphemeral})
	h.do(0, Op{Type: wire.OpCreateContainer, Path: "/c", ACL: wire.OpenACLUnsafe, Mode: wire.ModeContainer})
	h.do(0, Op{Type: wire.OpCreateTTL, Path: "/t", ACL: wire.ReadACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 9})
	h.do(0, Op{Type: wire.OpSetData, Path: "/a", Data: []byte("v1"), Version: -1})
	f.Add(snapshotBytes(f, h.f))
	f.Add(snapshotBytes(f, New()))
	f.Fuzz(func(t *testing.T, b []byte) {
		g := New()
		before := g.Digest()
		err := g.Restore(io.NopCloser(bytes.NewReader(b)))
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error not ErrBadSnapshot: %v", err)
			}
			if g.Digest() != before {
				t.Fatal("a failed restore changed the state")
			}
			return
		}
		// The data may be nonsense (zxids, owners), but the structure
		// must hold: every node reachable and found by its path.
		reached := 0
		g.chunks.walk(func(p string, id uint32, _ *node) {
			reached++
			if got, ok := g.lookup(p); !ok || got != id {
				t.Fatalf("%q: the path index does not find node %d", p, id)
			}
		})
		if reached != g.count {
			t.Fatalf("%d nodes reachable, %d counted", reached, g.count)
		}
		// And it keeps working.
		r := g.Apply(&raft.Log{Index: uint64(g.LastZxid()) + 1, Data: mustEncode(t, &Command{Type: CmdOps,
			Ops: []Op{{Type: wire.OpCreate, Path: "/fuzz-after", ACL: wire.OpenACLUnsafe}}})})
		if res, ok := r.(*Result); !ok || (res.Err != wire.OK && res.Err != wire.ErrNodeExists) {
			t.Fatalf("create after restore: %#v", r)
		}
	})
}

func mustEncode(t *testing.T, c *Command) []byte {
	b, err := EncodeCommand(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
