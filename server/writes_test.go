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
	nc, br := dialRaw(t, srv.Addr().String())
	send(t, nc, &wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
	var cr wire.ConnectResponse
	readRecord(t, br, &cr)
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
