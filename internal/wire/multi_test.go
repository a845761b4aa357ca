package wire

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMultiRequestEveryOp(t *testing.T) {
	for _, c := range []struct {
		op  OpCode
		req *MultiRequest
	}{{OpMulti, sampleMultiRequest()}, {OpMultiRead, sampleMultiReadRequest()}, {OpMulti, &MultiRequest{}}, {OpMultiRead, &MultiRequest{}}} {
		b := encode(c.req)
		d := NewDecoder(b)
		got, err := DecodeRequest(c.op, d)
		require.NoError(t, err)
		require.NoError(t, d.Finish())
		require.Equal(t, c.req, got)
	}
	// Every write op type appears in the sample multi.
	seen := map[OpCode]bool{}
	for _, o := range sampleMultiRequest().Ops {
		seen[o.Op] = true
		require.IsType(t, newMultiOpRequest(o.Op), o.Req)
	}
	for _, op := range []OpCode{OpCreate, OpCreate2, OpCreateContainer, OpCreateTTL, OpDelete, OpSetData, OpCheck} {
		require.True(t, seen[op], op.String())
	}
}

func TestMultiRequestKinds(t *testing.T) {
	read := sampleMultiReadRequest()
	write := sampleMultiRequest()

	// multi with only read ops, multiRead with only write ops
	_, err := DecodeRequest(OpMulti, NewDecoder(encode(read)))
	require.ErrorIs(t, err, ErrInvalidMultiOp)
	_, err = DecodeRequest(OpMultiRead, NewDecoder(encode(write)))
	require.ErrorIs(t, err, ErrInvalidMultiOp)

	// mixing is rejected by the record itself
	mixed := &MultiRequest{Ops: append(append([]MultiOp{}, write.Ops[:2]...), read.Ops...)}
	for _, op := range []OpCode{OpMulti, OpMultiRead} {
		_, err = DecodeRequest(op, NewDecoder(encode(mixed)))
		require.ErrorIs(t, err, ErrInvalidMultiOp)
	}
	require.ErrorIs(t, (&MultiRequest{}).Decode(NewDecoder(encode(mixed))), ErrInvalidMultiOp)

	// op types that never appear in a multi
	for _, op := range []OpCode{OpExists, OpGetACL, OpSetACL, OpSync, OpGetChildren2, OpMulti, OpMultiRead,
		OpReconfig, OpError, OpNotification, OpPing, 99} {
		bad := &MultiRequest{Ops: []MultiOp{{Op: op, Req: &PathWatchRequest{Path: "/x"}}}}
		_, err := DecodeRequest(OpMulti, NewDecoder(encode(bad)))
		require.ErrorIs(t, err, ErrInvalidMultiOp, op.String())
		require.ErrorIs(t, (&MultiOp{}).Decode(NewDecoder(encode(&bad.Ops[0]))), ErrInvalidMultiOp)
	}
	// a lone end marker is not a MultiOp
	require.ErrorIs(t, (&MultiOp{}).Decode(NewDecoder(encode(&multiEnd))), ErrMalformed)
	require.ErrorIs(t, (&MultiResult{}).Decode(NewDecoder(encode(&multiEnd))), ErrMalformed)
}

func TestMultiRequestNilReq(t *testing.T) {
	r := &MultiRequest{Ops: []MultiOp{{Op: OpDelete}, {Op: OpCreateTTL}}}
	got, err := DecodeRequest(OpMulti, NewDecoder(encode(r)))
	require.NoError(t, err)
	require.Equal(t, &MultiRequest{Ops: []MultiOp{
		{Op: OpDelete, Req: &DeleteRequest{}},
		{Op: OpCreateTTL, Req: &CreateTTLRequest{}},
	}}, got)
}

// The end marker's type and err fields are ignored, as in ZooKeeper.
func TestMultiEndMarkerFieldsIgnored(t *testing.T) {
	b := mustHex(t, "0000000d 00 ffffffff 00000002 2f61 00000003 00000007 01 00000000")
	got, err := DecodeRequest(OpMulti, NewDecoder(b))
	require.NoError(t, err)
	require.Equal(t, &MultiRequest{Ops: []MultiOp{{OpCheck, &CheckVersionRequest{Path: "/a", Version: 3}}}}, got)
}

func TestMaxMultiOps(t *testing.T) {
	ops := make([]MultiOp, MaxMultiOps+1)
	for i := range ops {
		ops[i] = MultiOp{Op: OpCheck, Req: &CheckVersionRequest{Path: "/", Version: -1}}
	}
	b := encode(&MultiRequest{Ops: ops})
	_, err := DecodeRequest(OpMulti, NewDecoder(b))
	require.ErrorIs(t, err, ErrMalformed)
	require.Contains(t, err.Error(), "more than")

	ok := encode(&MultiRequest{Ops: ops[:MaxMultiOps]})
	got, err := DecodeRequest(OpMulti, NewDecoder(ok))
	require.NoError(t, err)
	require.Len(t, got.(*MultiRequest).Ops, MaxMultiOps)

	res := make([]MultiResult, MaxMultiOps+1)
	for i := range res {
		res[i] = MultiResult{Op: OpCheck}
	}
	require.ErrorIs(t, (&MultiResponse{}).Decode(NewDecoder(encode(&MultiResponse{Results: res}))), ErrMalformed)
	var mr MultiResponse
	require.NoError(t, mr.Decode(NewDecoder(encode(&MultiResponse{Results: res[:MaxMultiOps]}))))
	require.Len(t, mr.Results, MaxMultiOps)
}

// A 10k-op multi (reliability §9.4) fits in a default frame and decodes.
func TestMulti10kOps(t *testing.T) {
	ops := make([]MultiOp, 10000)
	for i := range ops {
		ops[i] = MultiOp{Op: OpCreate, Req: &CreateRequest{Path: "/n/0000000000", ACL: OpenACLUnsafe}}
	}
	b := encode(&MultiRequest{Ops: ops})
	require.LessOrEqual(t, len(b), DefaultMaxFrame)
	got, err := DecodeRequest(OpMulti, NewDecoder(b))
	require.NoError(t, err)
	require.Len(t, got.(*MultiRequest).Ops, 10000)
}

func TestMultiResponseEveryResult(t *testing.T) {
	st := sampleStat()
	r := sampleMultiResponse()
	got := roundTrip(t, r)
	require.Equal(t, r, got)

	// createTTL and createContainer results are reported as create2.
	in := &MultiResponse{Results: []MultiResult{
		{Op: OpCreateTTL, Resp: &Create2Response{Path: "/t", Stat: st}},
		{Op: OpCreateContainer, Resp: &Create2Response{Path: "/c", Stat: st}},
	}}
	b := encode(in)
	require.Equal(t, mustHex(t, "0000000f 00 00000000"), b[:9])
	var out MultiResponse
	require.NoError(t, out.Decode(NewDecoder(b)))
	require.Equal(t, []MultiResult{
		{Op: OpCreate2, Resp: &Create2Response{Path: "/t", Stat: st}},
		{Op: OpCreate2, Resp: &Create2Response{Path: "/c", Stat: st}},
	}, out.Results)
}

// A failed multi: every result is an error result; ops before the failure
// carry OK, the failing op its code, the rest ErrRuntimeInconsistency.
func TestMultiResponseFailure(t *testing.T) {
	in := &MultiResponse{Results: []MultiResult{
		{Op: OpError, Err: OK},
		{Op: OpError, Err: ErrBadVersion},
		{Op: OpError, Err: ErrRuntimeInconsistency},
		{Op: OpError, Err: ErrRuntimeInconsistency},
	}}
	b := encode(in)
	require.Equal(t, mustHex(t,
		"ffffffff 00 00000000 00000000"+
			"ffffffff 00 ffffff99 ffffff99"+
			"ffffffff 00 fffffffe fffffffe"+
			"ffffffff 00 fffffffe fffffffe"+
			"ffffffff 01 ffffffff"), b)
	var out MultiResponse
	require.NoError(t, out.Decode(NewDecoder(b)))
	for i, res := range out.Results {
		require.Equal(t, OpError, res.Op)
		require.Equal(t, in.Results[i].Err, res.Err)
		require.Equal(t, &ErrorResponse{Err: in.Results[i].Err}, res.Resp)
	}

	// multiRead: independent per-op results
	read := &MultiResponse{Results: []MultiResult{
		{Op: OpGetData, Resp: &GetDataResponse{Data: []byte("x"), Stat: sampleStat()}},
		{Op: OpError, Err: ErrNoNode, Resp: &ErrorResponse{Err: ErrNoNode}},
		{Op: OpGetChildren, Resp: &GetChildrenResponse{Children: []string{}}},
	}}
	require.Equal(t, read, roundTrip(t, read))
}

func TestMultiResultEncodingFallbacks(t *testing.T) {
	st := sampleStat()
	cases := []struct{ in, want MultiResult }{
		// nil Resp: empty body of the right type
		{MultiResult{Op: OpSetData}, MultiResult{Op: OpSetData, Resp: &StatResponse{}}},
		{MultiResult{Op: OpGetData}, MultiResult{Op: OpGetData, Resp: &GetDataResponse{}}},
		{MultiResult{Op: OpGetChildren}, MultiResult{Op: OpGetChildren, Resp: &GetChildrenResponse{}}},
		{MultiResult{Op: OpCreate}, MultiResult{Op: OpCreate, Resp: &CreateResponse{}}},
		// create and create2 bodies stand in for each other
		{MultiResult{Op: OpCreate, Resp: &Create2Response{Path: "/a", Stat: st}}, MultiResult{Op: OpCreate, Resp: &CreateResponse{Path: "/a"}}},
		{MultiResult{Op: OpCreate2, Resp: &CreateResponse{Path: "/a"}}, MultiResult{Op: OpCreate2, Resp: &Create2Response{Path: "/a"}}},
		// wrong type: empty body of the right type
		{MultiResult{Op: OpSetData, Resp: &GetDataResponse{Data: []byte("x")}}, MultiResult{Op: OpSetData, Resp: &StatResponse{}}},
		// error results carry ErrorResponse{Err}, whatever Resp holds
		{MultiResult{Op: OpError, Err: ErrNoAuth}, MultiResult{Op: OpError, Err: ErrNoAuth, Resp: &ErrorResponse{Err: ErrNoAuth}}},
		{MultiResult{Op: OpError, Err: ErrNoAuth, Resp: &ErrorResponse{Err: OK}}, MultiResult{Op: OpError, Err: ErrNoAuth, Resp: &ErrorResponse{Err: ErrNoAuth}}},
		// Err of a non-error result is not encoded
		{MultiResult{Op: OpDelete, Err: ErrNoNode}, MultiResult{Op: OpDelete}},
		// an op that cannot be a multi result
		{MultiResult{Op: OpGetACL, Resp: &GetACLResponse{}}, MultiResult{Op: OpError, Err: ErrSystemError, Resp: &ErrorResponse{Err: ErrSystemError}}},
	}
	for _, c := range cases {
		var got MultiResult
		d := NewDecoder(encode(&c.in))
		require.NoError(t, got.Decode(d))
		require.NoError(t, d.Finish())
		require.Equal(t, c.want, got)
	}
}

func TestMultiResponseRejects(t *testing.T) {
	for _, typ := range []string{"00000003", "00000015", "00000013", "0000000e", "00000063"} {
		b := mustHex(t, typ+" 00 00000000 ffffffff 01 ffffffff")
		require.ErrorIs(t, (&MultiResponse{}).Decode(NewDecoder(b)), ErrMalformed, typ)
	}
	// header err of a non-error result is ignored; of an error result the
	// body wins
	b := mustHex(t, "00000002 00 ffffff9b ffffffff 00 ffffff9b ffffff99 ffffffff 01 ffffffff")
	var out MultiResponse
	require.NoError(t, out.Decode(NewDecoder(b)))
	require.Equal(t, []MultiResult{{Op: OpDelete}, {Op: OpError, Err: ErrBadVersion, Resp: &ErrorResponse{Err: ErrBadVersion}}}, out.Results)
}
