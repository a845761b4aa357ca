package server

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// A read pipelined before an addAuth, and waiting behind a write, is
// checked with the identities it arrived with: it must not read a node
// only the credential added after it may read (a digest the node's ACL
// names, or the super user's).
func TestReadBeforeAuthUsesEarlierIdentities(t *testing.T) {
	for name, cred := range map[string]string{"digest": "u:pw", "super": "super:pw"} {
		t.Run(name, func(t *testing.T) {
			srv := attachServer(t, func(cfg *Config) { cfg.SuperDigest = "super:" + DigestOf("super:pw") })
			nc, br, _ := handshakeRaw(t, srv.Addr().String(), 0, nil)
			acl := []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "u:" + DigestOf("u:pw")}}}
			send(t, nc, &wire.RequestHeader{Xid: 1, Op: wire.OpCreate}, &wire.CreateRequest{Path: "/secret", Data: []byte("s3cret"), ACL: acl})
			send(t, nc, &wire.RequestHeader{Xid: 2, Op: wire.OpCreate}, &wire.CreateRequest{Path: "/w", ACL: wire.OpenACLUnsafe})
			for range 2 {
				var h wire.ReplyHeader
				readRecord(t, br, &h)
				require.Equal(t, wire.OK, h.Err)
			}
			burst := append(frame(&wire.RequestHeader{Xid: 3, Op: wire.OpSetData}, &wire.SetDataRequest{Path: "/w", Version: -1}),
				frame(&wire.RequestHeader{Xid: 4, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/secret"})...)
			burst = append(burst, frame(&wire.RequestHeader{Xid: wire.XidAuth, Op: wire.OpAuth},
				&wire.AuthPacket{Scheme: "digest", Auth: []byte(cred)})...)
			burst = append(burst, frame(&wire.RequestHeader{Xid: 5, Op: wire.OpGetData}, &wire.PathWatchRequest{Path: "/secret"})...)
			_, err := nc.Write(burst)
			require.NoError(t, err)
			want := map[int32]wire.Code{3: wire.OK, 4: wire.ErrNoAuth, wire.XidAuth: wire.OK, 5: wire.OK}
			for range want {
				var h wire.ReplyHeader
				readRecord(t, br, &h) // the header; the frame's body is skipped
				require.Equal(t, want[h.Xid], h.Err, "xid %d", h.Xid)
			}
		})
	}
}
