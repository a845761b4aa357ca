package fsm

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
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

// A corrupt command allocates no more than its own size suggests: a
// byte string or array whose declared length runs past the input is an
// error before anything is allocated. A 20-byte command declaring a
// 2.4 GB byte string used to allocate it (msgpack's DecodeBytes trusts
// the length; the fuzzer's worker died of it), and one declaring an
// array of a million ops a million Ops.
func TestDecodeCommandBoundsAllocationByInput(t *testing.T) {
	for name, b := range map[string][]byte{
		"bin32 past the end": []byte("\x02\x9d0\x11000\xc0\xc3\xc6\x91\xa6000000b"),
		"ops array past the end": func() []byte {
			good, err := EncodeCommand(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpDelete, Path: "/a"}}})
			require.NoError(t, err)
			// The ops array's length (fixarray 1) becomes array32 of 2^20-1.
			i := bytes.Index(good, []byte{0x91, 0x97})
			require.Positive(t, i)
			return append(append(append([]byte{}, good[:i]...), 0xdd, 0x00, 0x0f, 0xff, 0xff), good[i+1:]...)
		}(),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := DecodeCommand(b)
		runtime.ReadMemStats(&after)
		require.ErrorIs(t, err, ErrBadCommand, name)
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "%s: bytes allocated", name)
	}
}
