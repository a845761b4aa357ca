package integration_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// Section 5: many requests in flight on one connection.

// pipelined is one request of a pipeline and the check of its reply.
type pipelined struct {
	op    wire.OpCode
	req   wire.Record
	code  wire.Code
	resp  wire.Record // decoded when code is OK
	check func(resp wire.Record)
}

// runPipeline writes every request without waiting, from another
// goroutine, while this one reads: replies must come back strictly in
// request order, each with its request's xid.
func runPipeline(t *testing.T, c *rawConn, reqs []pipelined) {
	t.Helper()
	var buf bytes.Buffer
	first := c.xid + 1
	for i, r := range reqs {
		buf.Write(requestFrame(first+int32(i), r.op, r.req))
	}
	c.xid += int32(len(reqs))
	werr := make(chan error, 1)
	go func() {
		_, err := c.nc.Write(buf.Bytes())
		werr <- err
	}()
	var lastZxid int64
	for i, r := range reqs {
		h, d := c.reply(first + int32(i))
		require.Equal(t, r.code, h.Err, "request %d (%v)", i, r.op)
		require.GreaterOrEqual(t, h.Zxid, lastZxid, "reply zxids never go back")
		lastZxid = h.Zxid
		if h.Err == wire.OK && r.resp != nil {
			require.NoError(t, r.resp.Decode(d), "request %d (%v)", i, r.op)
			require.NoError(t, d.Finish())
			if r.check != nil {
				r.check(r.resp)
			}
		}
	}
	require.NoError(t, <-werr)
}

func TestPipelinedRequestsAnsweredInOrder(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/pl", nil, wire.ModePersistent)
	var reqs []pipelined
	for i := range 100 {
		p := fmt.Sprintf("/pl/n%03d", i)
		data := []byte(fmt.Sprint(i))
		reqs = append(reqs,
			pipelined{op: wire.OpCreate, req: &wire.CreateRequest{Path: p, Data: data, ACL: wire.OpenACLUnsafe},
				resp: &wire.CreateResponse{}, check: func(r wire.Record) {
					require.Equal(t, p, r.(*wire.CreateResponse).Path)
				}},
			pipelined{op: wire.OpGetData, req: &wire.PathWatchRequest{Path: p}, resp: &wire.GetDataResponse{},
				check: func(r wire.Record) {
					require.Equal(t, data, r.(*wire.GetDataResponse).Data, "a read sees the earlier create")
				}},
			pipelined{op: wire.OpSetData, req: &wire.SetDataRequest{Path: p, Data: []byte("v2"), Version: 0},
				resp: &wire.StatResponse{}, check: func(r wire.Record) {
					require.EqualValues(t, 1, r.(*wire.StatResponse).Stat.Version)
				}},
			pipelined{op: wire.OpExists, req: &wire.PathWatchRequest{Path: p}, resp: &wire.StatResponse{},
				check: func(r wire.Record) {
					require.EqualValues(t, 1, r.(*wire.StatResponse).Stat.Version, "a read sees the earlier set")
				}},
			pipelined{op: wire.OpGetChildren, req: &wire.PathWatchRequest{Path: "/pl"}, resp: &wire.GetChildrenResponse{},
				check: func(r wire.Record) {
					require.Len(t, r.(*wire.GetChildrenResponse).Children, i+1)
				}},
		)
	}
	require.Len(t, reqs, 500)
	runPipeline(t, c, reqs)
}

// TestPipelineMixedOutcomes mixes failures, pings-free reads, a multi and
// a delete in one pipeline: a failed write does not disturb the order.
func TestPipelineMixedOutcomes(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	var reqs []pipelined
	for i := range 50 {
		p := fmt.Sprintf("/x%d", i)
		reqs = append(reqs,
			pipelined{op: wire.OpGetData, req: &wire.PathWatchRequest{Path: p}, code: wire.ErrNoNode},
			pipelined{op: wire.OpCreate, req: &wire.CreateRequest{Path: p, ACL: wire.OpenACLUnsafe}, resp: &wire.CreateResponse{}},
			pipelined{op: wire.OpCreate, req: &wire.CreateRequest{Path: p, ACL: wire.OpenACLUnsafe}, code: wire.ErrNodeExists},
			pipelined{op: wire.OpMulti, req: &wire.MultiRequest{Ops: []wire.MultiOp{
				{Op: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: p, Version: 0}},
				{Op: wire.OpSetData, Req: &wire.SetDataRequest{Path: p, Data: []byte("m"), Version: 0}},
			}}, resp: &wire.MultiResponse{}},
			pipelined{op: wire.OpGetData, req: &wire.PathWatchRequest{Path: p}, resp: &wire.GetDataResponse{},
				check: func(r wire.Record) { require.Equal(t, []byte("m"), r.(*wire.GetDataResponse).Data) }},
			pipelined{op: wire.OpSync, req: &wire.PathRequest{Path: p}, resp: &wire.PathRequest{}},
			pipelined{op: wire.OpDelete, req: &wire.DeleteRequest{Path: p, Version: 0}, code: wire.ErrBadVersion},
			pipelined{op: wire.OpDelete, req: &wire.DeleteRequest{Path: p, Version: 1}},
			pipelined{op: wire.OpExists, req: &wire.PathWatchRequest{Path: p}, code: wire.ErrNoNode},
		)
	}
	runPipeline(t, c, reqs)
	require.Empty(t, srv.Tree())
}
