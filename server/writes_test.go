package server

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// Without TTL nodes (extendedTypesEnabled=false) a TTL create is refused
// with Unimplemented inside a multi too, as ZooKeeper refuses it.
func TestMultiTTLCreateRefusedWhenTTLDisabled(t *testing.T) {
	srv := attachServer(t, func(cfg *Config) { cfg.TTLEnabled = false })
	nc, br, _ := handshakeRaw(t, srv.Addr().String(), 0, nil)
	ttl := &wire.CreateTTLRequest{Path: "/t", ACL: wire.OpenACLUnsafe, Flags: wire.ModePersistentWithTTL, TTL: 5000}
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpMulti},
		&wire.MultiRequest{Ops: []wire.MultiOp{{Op: wire.OpCreateTTL, Req: ttl}}})
	f, err := wire.ReadFrame(br, nil, 1<<20)
	require.NoError(t, err)
	d := wire.NewDecoder(f)
	var h wire.ReplyHeader
	require.NoError(t, h.Decode(d))
	var resp wire.MultiResponse
	require.NoError(t, resp.Decode(d))
	require.Len(t, resp.Results, 1)
	require.Equal(t, wire.ErrUnimplemented, resp.Results[0].Err, "%+v", resp.Results[0])
	_, _, err = srv.fsm.Get("/t")
	require.ErrorIs(t, err, wire.ErrNoNode)
}

// A multi holding an op it does not allow is answered MARSHALLINGERROR and
// the connection stays, as ZooKeeper answers "Invalid type of op" and
// "Mixing different kind of ops".
func TestInvalidMultiOpIsMarshallingError(t *testing.T) {
	srv := attachServer(t, nil)
	nc, br, _ := handshakeRaw(t, srv.Addr().String(), 0, nil)
	get := wire.MultiOp{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: "/"}}
	check := wire.MultiOp{Op: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: "/", Version: -1}}
	for i, r := range []struct {
		op  wire.OpCode
		ops []wire.MultiOp
	}{
		{wire.OpMulti, []wire.MultiOp{get}},
		{wire.OpMulti, []wire.MultiOp{check, get}},
		{wire.OpMultiRead, []wire.MultiOp{check}},
		{wire.OpMulti, []wire.MultiOp{{Op: wire.OpSetACL, Req: &wire.SetACLRequest{Path: "/", ACL: wire.OpenACLUnsafe, Version: -1}}}},
	} {
		xid := int32(i + 1)
		send(t, nc, &wire.RequestHeader{Xid: xid, Op: r.op}, &wire.MultiRequest{Ops: r.ops})
		var h wire.ReplyHeader
		readRecord(t, br, &h)
		require.Equal(t, xid, h.Xid)
		require.Equal(t, wire.ErrMarshallingError, h.Err, "%v %v", r.op, r.ops)
	}
	send(t, nc, &wire.RequestHeader{Xid: 99, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/"})
	var h wire.ReplyHeader
	readRecord(t, br, &h)
	require.Equal(t, int32(99), h.Xid, "the connection still serves")
	require.Equal(t, wire.OK, h.Err)
}

// A reconfig removes members in a fixed order, the leader last: removing
// the leader first made it step down, and the other removals failed
// unseen.
func TestLeaderLast(t *testing.T) {
	require.Equal(t, []string{"1", "3", "2"}, leaderLast([]string{"3", "2", "1"}, "2"))
	require.Equal(t, []string{"1", "3"}, leaderLast([]string{"3", "1"}, "2"))
	require.Empty(t, leaderLast(nil, "2"))
	require.Equal(t, []string{"1", "3"}, leaderLast([]string{"3", "1", "3"}, "2"), "an id named twice (3 and 03, made one) is removed once")
}

// srst resets the server's latency and packet counts, crst each
// connection's counts, as ZooKeeper's; neither may take the server down
// (srst used to overwrite a locked mutex: a fatal error).
func TestStatsReset(t *testing.T) {
	srv := attachServer(t, nil)
	nc, br, _ := handshakeRaw(t, srv.Addr().String(), 0, nil)
	send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpExists}, &wire.PathWatchRequest{Path: "/"})
	var h wire.ReplyHeader
	readRecord(t, br, &h)
	require.NotZero(t, srv.stats.received.Load())
	require.Equal(t, "Server stats reset.\n", srv.FourLetterWord("srst"))
	require.Zero(t, srv.stats.received.Load())
	_, avg, _ := srv.stats.latency.snapshot()
	require.Zero(t, avg)
	require.Equal(t, "Connection stats reset.\n", srv.FourLetterWord("crst"))
	for _, c := range srv.connList() {
		require.Zero(t, c.stats.received.Load())
	}
	require.Equal(t, "imok", srv.FourLetterWord("ruok"), "still serving")
}
