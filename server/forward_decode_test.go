package server

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// forwardFrame frames b as a forwarding message.
func forwardFrame(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// A forwarding message whose byte string declares more than the message
// holds is an error before anything is allocated: msgpack's reflection
// allocated the declared length (here 4 GiB for a 20-byte message), so
// anyone who reached the cluster port could make a node allocate at will.
func TestForwardMessageBoundsAllocationByInput(t *testing.T) {
	hostile := []byte{0x81, 0xa1, 'c', 0xc6, 0xff, 0xff, 0xff, 0xf0, 'x', 'y'} // {"c": bin32(4 GiB)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var req fwdRequest
	err := readMsg(bytes.NewReader(forwardFrame(hostile)), &req)
	runtime.ReadMemStats(&after)
	require.Error(t, err)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated")

	good, err := msgpack.Marshal(&fwdRequest{ID: 7, Kind: fwdApply, Cmd: []byte("cmd"), Tag: []byte("t")})
	require.NoError(t, err)
	require.NoError(t, readMsg(bytes.NewReader(forwardFrame(good)), &req))
	require.Equal(t, fwdRequest{ID: 7, Kind: fwdApply, Cmd: []byte("cmd"), Tag: []byte("t")}, req)
}

// FuzzReadForwardMessage: whatever a peer sends on the cluster port's
// forwarding stream decodes to an error or a message, never a panic.
func FuzzReadForwardMessage(f *testing.F) {
	for _, m := range []any{
		&fwdRequest{ID: 1, Kind: fwdApply, Cmd: []byte{2, 0x9d}, Session: 9, Tag: []byte{1, 2}},
		&fwdRequest{ID: 2, Kind: fwdTouch, Sessions: []int64{1, 2, 3}},
		&fwdResponse{ID: 3, Err: "no leader", Code: wire.ErrSessionMoved},
	} {
		b, err := msgpack.Marshal(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		// checkMsgpack takes exactly what msgpack itself can skip.
		d := msgpack.NewDecoder(bytes.NewReader(b))
		if skipErr, err := d.Skip(), checkMsgpack(b); (skipErr == nil) != (err == nil) {
			t.Fatalf("msgpack's Skip says %v, checkMsgpack %v", skipErr, err)
		}
		var req fwdRequest
		_ = readMsg(bytes.NewReader(forwardFrame(b)), &req)
		var resp fwdResponse
		_ = readMsg(bytes.NewReader(forwardFrame(b)), &resp)
	})
}

// checkMsgpack takes every value msgpack writes, and no truncation of one.
func TestCheckMsgpack(t *testing.T) {
	for _, v := range []any{
		&fwdRequest{ID: 1 << 40, Kind: fwdApply, Cmd: make([]byte, 70000), Session: -5, Sessions: make([]int64, 70000),
			Membership: &membershipOp{Kind: "add", ID: "4", Addr: "h:1"}, Tag: []byte{1}},
		&fwdResponse{ID: 3, Err: strings.Repeat("e", 300), Code: wire.ErrSessionMoved},
		map[string]any{"f": 1.5, "g": float32(2.5), "t": time.Unix(1, 2), "n": nil, "b": true, "i8": int8(-3),
			"u": uint64(1 << 63), "s": strings.Repeat("s", 70000), "m": map[int]string{1: "a"}},
		[]any{time.Unix(1<<40, 5), int16(-300), int32(-70000), int64(-1 << 40), uint16(300), uint32(70000)},
	} {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, checkMsgpack(b), "%T", v)
		for _, cut := range []int{0, 1, len(b) / 2, len(b) - 1} {
			require.Error(t, checkMsgpack(b[:cut]), "%T cut at %d of %d", v, cut, len(b))
		}
	}
	require.Error(t, checkMsgpack([]byte{0xc1}), "never used")
	require.Error(t, checkMsgpack([]byte{0xdd, 0xff, 0xff, 0xff, 0xff, 0x00}), "array count past the end")
}
