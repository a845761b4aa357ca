package wire

import (
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRoundTripEveryRecord(t *testing.T) {
	for _, r := range sampleRecords() {
		got := roundTrip(t, r)
		require.Equal(t, r, got, name(r))
	}
}

func TestRecordsImplementRecord(t *testing.T) {
	// Compile-time list of every record type with pointer receivers.
	var _ = []Record{
		&RequestHeader{}, &ReplyHeader{}, &ConnectRequest{}, &ConnectResponse{},
		&CreateRequest{}, &CreateTTLRequest{}, &CreateResponse{}, &Create2Response{},
		&DeleteRequest{}, &PathWatchRequest{}, &PathRequest{}, &StatResponse{},
		&GetDataResponse{}, &SetDataRequest{}, &GetACLResponse{}, &SetACLRequest{},
		&GetChildrenResponse{}, &GetChildren2Response{}, &CheckVersionRequest{},
		&ReconfigRequest{}, &SetWatches{}, &SetWatches2{}, &AddWatchRequest{},
		&WatchesRequest{}, &GetEphemeralsResponse{}, &GetAllChildrenNumberResponse{},
		&ClientInfo{}, &WhoAmIResponse{}, &WatcherEvent{}, &ErrorResponse{},
		&AuthPacket{}, &SASLRequest{}, &MultiHeader{}, &MultiRequest{}, &MultiResult{},
		&MultiResponse{}, &Stat{}, &Id{}, &ACL{},
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

func TestGoldenEncodings(t *testing.T) {
	cases := []struct {
		r   Record
		hex string
	}{
		{&RequestHeader{Xid: 1, Op: OpGetData}, "00000001 00000004"},
		{&RequestHeader{Xid: XidPing, Op: OpPing}, "fffffffe 0000000b"},
		{&ReplyHeader{Xid: 7, Zxid: 0x10, Err: ErrNoNode}, "00000007 0000000000000010 ffffff9b"},
		{&CreateRequest{Path: "/a", Data: []byte("x"), ACL: OpenACLUnsafe, Flags: ModeEphemeral},
			"00000002 2f61 00000001 78 00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65 00000001"},
		{&CreateRequest{Path: "/a", Data: nil, ACL: nil, Flags: ModePersistent},
			"00000002 2f61 ffffffff ffffffff 00000000"},
		{&PathWatchRequest{Path: "/", Watch: true}, "00000001 2f 01"},
		{&WatcherEvent{Type: EventNodeCreated, State: StateSyncConnected, Path: "/n"}, "00000001 00000003 00000002 2f6e"},
		{&GetChildrenResponse{Children: nil}, "ffffffff"},
		{&GetChildrenResponse{Children: []string{}}, "00000000"},
		{&AuthPacket{Scheme: "ip", Auth: []byte{}}, "00000000 00000002 6970 00000000"},
		{&ErrorResponse{Err: OK}, "00000000"},
		{&MultiRequest{Ops: []MultiOp{{OpCheck, &CheckVersionRequest{Path: "/a", Version: 3}}}},
			"0000000d 00 ffffffff 00000002 2f61 00000003 ffffffff 01 ffffffff"},
		{&MultiRequest{}, "ffffffff 01 ffffffff"},
		// Unset strings go as null, as Java's ZooKeeperAdmin sends them:
		// ZooKeeper reads a newMembers of "" as an empty membership.
		{&ReconfigRequest{LeavingServers: "3", CurConfigID: -1},
			"ffffffff 00000001 33 ffffffff ffffffffffffffff"},
		{&MultiResponse{Results: []MultiResult{{Op: OpDelete}, {Op: OpError, Err: ErrNoNode}}},
			"00000002 00 00000000 ffffffff 00 ffffff9b ffffff9b ffffffff 01 ffffffff"},
	}
	for _, c := range cases {
		require.Equal(t, mustHex(t, c.hex), encode(c.r), name(c.r))
		roundTrip(t, c.r)
	}
	require.Len(t, encode(&Stat{}), StatSize)
	require.Len(t, encode(&ReplyHeader{}), ReplyHeaderSize)
}

// Every record truncated at every byte must fail with ErrMalformed and
// never panic. The only valid prefixes are the 44-byte forms of the
// connect records without their optional readOnly byte.
func TestTruncatedRecords(t *testing.T) {
	for _, r := range sampleRecords() {
		b := encode(r)
		for i := 0; i < len(b); i++ {
			got := newLike(r)
			err := got.Decode(NewDecoder(b[:i]))
			if i == len(b)-1 && optionalTrailingByte(r) {
				require.NoError(t, err, "%s cut at %d", name(r), i)
				continue
			}
			require.Error(t, err, "%s cut at %d of %d", name(r), i, len(b))
			require.ErrorIs(t, err, ErrMalformed, "%s cut at %d", name(r), i)
		}
	}
	for _, c := range sampleRequests() {
		b := encode(c.req)
		for i := 0; i < len(b); i++ {
			_, err := DecodeRequest(c.op, NewDecoder(b[:i]))
			require.ErrorIs(t, err, ErrMalformed, "%v cut at %d", c.op, i)
		}
	}
}

func optionalTrailingByte(r Record) bool {
	switch r := r.(type) {
	case *ConnectRequest:
		return r.HasReadOnly
	case *ConnectResponse:
		return r.HasReadOnly
	}
	return false
}

// maxRejectAllocs bounds the allocations of rejecting one malformed record
// or frame (the record, the decoder, the error and its formatting: 7
// without the race detector). It leaves room above that because under -race
// sync.Pool drops items at random, so fmt's printer cache misses now and
// then (9 and 10 were seen); what the tests guard against, an allocation
// proportional to a hostile count or length, is far beyond it and is also
// bounded in bytes.
const maxRejectAllocs = 16

// A vector count of 2^31-1 in a 10-byte body must be rejected before any
// allocation proportional to the count.
func TestHugeVectorCount(t *testing.T) {
	body := mustHex(t, "7fffffff 000000000000")
	require.Len(t, body, 10)
	zxid := make([]byte, 8)
	cases := []struct {
		r    Record
		body []byte
	}{
		{&GetChildrenResponse{}, body},
		{&GetChildren2Response{}, body},
		{&GetEphemeralsResponse{}, body},
		{&GetACLResponse{}, body},
		{&WhoAmIResponse{}, body},
		{&SetWatches{}, append(append([]byte{}, zxid...), body...)},
		{&SetWatches2{}, append(append([]byte{}, zxid...), body...)},
		{&CreateRequest{}, append(mustHex(t, "00000001 2f ffffffff"), body...)},
		{&SetACLRequest{}, append(mustHex(t, "00000001 2f"), body...)},
	}
	for _, c := range cases {
		err := newLike(c.r).Decode(NewDecoder(c.body))
		require.ErrorIs(t, err, ErrMalformed, name(c.r))
		require.Contains(t, err.Error(), "2147483647")

		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		allocs := testing.AllocsPerRun(100, func() {
			_ = newLike(c.r).Decode(NewDecoder(c.body))
		})
		runtime.ReadMemStats(&after)
		require.LessOrEqual(t, allocs, float64(maxRejectAllocs), name(c.r))
		require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), name(c.r))
	}
}

func TestBadLengths(t *testing.T) {
	// string/buffer longer than the bytes remaining
	for _, r := range []Record{&PathRequest{}, &SASLRequest{}, &CreateResponse{}} {
		err := r.Decode(NewDecoder(mustHex(t, "00000010 616263")))
		require.ErrorIs(t, err, ErrMalformed, name(r))
		err = r.Decode(NewDecoder(mustHex(t, "7fffffff 616263")))
		require.ErrorIs(t, err, ErrMalformed, name(r))
		// negative lengths other than -1
		err = r.Decode(NewDecoder(mustHex(t, "fffffffe")))
		require.ErrorIs(t, err, ErrMalformed, name(r))
		err = r.Decode(NewDecoder(mustHex(t, "80000000")))
		require.ErrorIs(t, err, ErrMalformed, name(r))
	}
	// -1 is a null string / buffer / vector
	var p PathRequest
	require.NoError(t, p.Decode(NewDecoder(mustHex(t, "ffffffff"))))
	require.Equal(t, "", p.Path)
	var s SASLRequest
	require.NoError(t, s.Decode(NewDecoder(mustHex(t, "ffffffff"))))
	require.Nil(t, s.Token)
	var g GetChildrenResponse
	require.NoError(t, g.Decode(NewDecoder(mustHex(t, "ffffffff"))))
	require.Nil(t, g.Children)
	// MaxField bounds single fields
	d := NewDecoder(mustHex(t, "00000003 616263"))
	d.MaxField = 2
	require.ErrorIs(t, p.Decode(d), ErrMalformed)
}

func TestDecodeRequestEveryOp(t *testing.T) {
	for _, c := range sampleRequests() {
		b := encode(c.req)
		d := NewDecoder(b)
		got, err := DecodeRequest(c.op, d)
		require.NoError(t, err, c.op.String())
		require.NoError(t, d.Finish(), c.op.String())
		require.Equal(t, c.req, got, c.op.String())
		require.IsType(t, NewRequest(c.op), got, c.op.String())
	}
	for _, op := range []OpCode{OpPing, OpCloseSession, OpWhoAmI} {
		got, err := DecodeRequest(op, NewDecoder(nil))
		require.NoError(t, err)
		require.Nil(t, got)
		require.Nil(t, NewRequest(op))
	}
	for _, op := range []OpCode{OpNotification, 10, OpDeleteContainer, OpCreateSession, OpError, 23, 99, 108, 1 << 30, -1 << 31} {
		got, err := DecodeRequest(op, NewDecoder([]byte{0, 0, 0, 1, '/'}))
		require.Nil(t, got)
		require.Equal(t, error(ErrUnimplemented), err, op.String())
		require.Nil(t, NewRequest(op))
	}
	// Trailing bytes are ignored (as ZooKeeper does) but visible to Finish.
	d := NewDecoder(append(encode(&PathRequest{Path: "/a"}), 0xff))
	got, err := DecodeRequest(OpSync, d)
	require.NoError(t, err)
	require.Equal(t, &PathRequest{Path: "/a"}, got)
	require.ErrorIs(t, d.Finish(), ErrMalformed)
}

func TestNewResponse(t *testing.T) {
	cases := map[OpCode]Record{
		OpNotification:         &WatcherEvent{},
		OpCreate:               &CreateResponse{},
		OpDelete:               nil,
		OpExists:               &StatResponse{},
		OpGetData:              &GetDataResponse{},
		OpSetData:              &StatResponse{},
		OpGetACL:               &GetACLResponse{},
		OpSetACL:               &StatResponse{},
		OpGetChildren:          &GetChildrenResponse{},
		OpSync:                 &PathRequest{},
		OpPing:                 nil,
		OpGetChildren2:         &GetChildren2Response{},
		OpCheck:                nil,
		OpMulti:                &MultiResponse{},
		OpCreate2:              &Create2Response{},
		OpReconfig:             &GetDataResponse{},
		OpCheckWatches:         nil,
		OpRemoveWatches:        nil,
		OpCreateContainer:      &Create2Response{},
		OpCreateTTL:            &Create2Response{},
		OpMultiRead:            &MultiResponse{},
		OpAuth:                 nil,
		OpSetWatches:           nil,
		OpSASL:                 &SASLRequest{},
		OpGetEphemerals:        &GetEphemeralsResponse{},
		OpGetAllChildrenNumber: &GetAllChildrenNumberResponse{},
		OpSetWatches2:          nil,
		OpAddWatch:             &ErrorResponse{},
		OpWhoAmI:               &WhoAmIResponse{},
		OpCloseSession:         nil,
		OpDeleteContainer:      nil,
		OpCreateSession:        nil,
		12345:                  nil,
	}
	for op, want := range cases {
		got := NewResponse(op)
		if want == nil {
			require.Nil(t, got, op.String())
			continue
		}
		require.Equal(t, want, got, op.String())
	}
}

func TestDecoderErrorsAreSticky(t *testing.T) {
	d := NewDecoder(mustHex(t, "00000005 2f"))
	var r PathRequest
	err := d.Record(&r)
	require.ErrorIs(t, err, ErrMalformed)
	// Later reads return zero values and keep the first error.
	require.Equal(t, int32(0), d.Int())
	require.Same(t, err, d.Err())
	require.True(t, errors.Is(d.Finish(), ErrMalformed))
}
