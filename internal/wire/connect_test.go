package wire

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestConnectRequestReadOnlyByte(t *testing.T) {
	base := ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 0x500000001, TimeOut: 10000, SessionID: 0, Passwd: make([]byte, PasswordSize)}

	// Without the byte (3.8 and older clients, go-zookeeper): 44 bytes.
	old := base
	b := encode(&old)
	require.Len(t, b, ConnectRequestSize)
	var got ConnectRequest
	d := NewDecoder(b)
	require.NoError(t, got.Decode(d))
	require.NoError(t, d.Finish())
	require.False(t, got.HasReadOnly)
	require.False(t, got.ReadOnly)
	require.Equal(t, old, got)

	// With the byte, both values: 45 bytes.
	for _, ro := range []bool{false, true} {
		r := base
		r.HasReadOnly, r.ReadOnly = true, ro
		b := encode(&r)
		require.Len(t, b, ConnectRequestSize+1)
		var got ConnectRequest
		d := NewDecoder(b)
		require.NoError(t, got.Decode(d))
		require.NoError(t, d.Finish())
		require.True(t, got.HasReadOnly)
		require.Equal(t, ro, got.ReadOnly)
		require.Equal(t, r, got)
	}

	// ReadOnly without HasReadOnly is not encoded.
	r := base
	r.ReadOnly = true
	require.Len(t, encode(&r), ConnectRequestSize)

	// Two trailing bytes: the first is the readOnly flag, as ZooKeeper's
	// server reads it; Finish reports the rest (which ZooKeeper ignores).
	b = append(encode(&base), 1, 0)
	d = NewDecoder(b)
	got = ConnectRequest{}
	require.NoError(t, got.Decode(d))
	require.True(t, got.HasReadOnly && got.ReadOnly)
	require.ErrorIs(t, d.Finish(), ErrMalformed)

	// A non-zero trailing byte reads as true, as in jute.
	b = append(encode(&base), 7)
	got = ConnectRequest{}
	require.NoError(t, got.Decode(NewDecoder(b)))
	require.True(t, got.HasReadOnly && got.ReadOnly)
}

func TestConnectRequestGolden(t *testing.T) {
	r := &ConnectRequest{ProtocolVersion: 0, LastZxidSeen: 2, TimeOut: 30000, SessionID: 0x0102030405060708,
		Passwd: []byte("ABCDEFGHIJKLMNOP"), ReadOnly: true, HasReadOnly: true}
	require.Equal(t, mustHex(t, "00000000 0000000000000002 00007530 0102030405060708 00000010 4142434445464748494a4b4c4d4e4f50 01"), encode(r))
}

func TestConnectResponseReadOnlyByte(t *testing.T) {
	r := ConnectResponse{ProtocolVersion: 0, TimeOut: 4000, SessionID: 0x7700000000000001, Passwd: []byte("0123456789abcdef")}
	require.Len(t, encode(&r), 36)
	require.Equal(t, r, *roundTrip(t, &r).(*ConnectResponse))

	r.HasReadOnly, r.ReadOnly = true, true
	require.Len(t, encode(&r), 37)
	require.Equal(t, r, *roundTrip(t, &r).(*ConnectResponse))

	// Expired session answer.
	exp := ConnectResponse{Passwd: make([]byte, PasswordSize)}
	got := roundTrip(t, &exp).(*ConnectResponse)
	require.Equal(t, int32(0), got.TimeOut)
	require.Equal(t, int64(0), got.SessionID)
}

func TestConnectRequestOddPasswords(t *testing.T) {
	for _, pw := range [][]byte{nil, {}, make([]byte, 40)} {
		r := ConnectRequest{TimeOut: 1, Passwd: pw}
		require.Equal(t, r, *roundTrip(t, &r).(*ConnectRequest))
		r.HasReadOnly = true
		require.Equal(t, r, *roundTrip(t, &r).(*ConnectRequest))
	}
	// password longer than the frame
	b := encode(&ConnectRequest{Passwd: make([]byte, 16)})
	binary.BigEndian.PutUint32(b[24:], 0x7fffffff) // the passwd length
	require.ErrorIs(t, (&ConnectRequest{}).Decode(NewDecoder(b)), ErrMalformed)
}
