package fsm

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// FuzzDecodeCommand: a corrupt log entry is an error, never a panic, and
// whatever decodes re-encodes to something that decodes the same way.
func FuzzDecodeCommand(f *testing.F) {
	for _, c := range []*Command{
		{Type: CmdInit, Secret: []byte("s")},
		{Type: CmdCreateSession, Time: 1, Timeout: 4000},
		{Type: CmdCreateSession, Time: 1, Timeout: 4000, ServerID: 1},
		{Type: CmdOps, Session: 7, Multi: true, NoTTL: true, Auth: []wire.Id{{Scheme: "digest", ID: "a:b"}}, Ops: []Op{
			{Type: wire.OpCreateTTL, Path: "/a", Data: []byte{}, ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentWithTTL, TTL: 5},
			{Type: wire.OpSetData, Path: "/b", Version: -1}}},
	} {
		b, err := EncodeCommand(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := DecodeCommand(b)
		if err != nil {
			return
		}
		again, err := EncodeCommand(c)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if _, err := DecodeCommand(again); err != nil {
			t.Fatalf("re-decode: %v", err)
		}
	})
}

func BenchmarkEncodeCommand(b *testing.B) {
	c := &Command{Type: CmdOps, Time: 1, Session: 42, Auth: []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}},
		Ops: []Op{{Type: wire.OpCreate2, Path: "/bench/node-0000000001", Data: make([]byte, 100), ACL: wire.OpenACLUnsafe}}}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := EncodeCommand(c); err != nil {
			b.Fatal(err)
		}
	}
}
