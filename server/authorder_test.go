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

// digestID gives the identity Apache ZooKeeper 3.8 gave (on OpenJDK 17)
// for credentials that are not UTF-8: it hashes the text Java decodes,
// with one U+FFFD per maximal malformed subpart.
func TestDigestIDOfMalformedUTF8(t *testing.T) {
	for cred, want := range map[string]string{
		"u:pw":                       "u:" + DigestOf("u:pw"),
		"u\xff:pw":                   "u\uFFFD:ZkDbACI8jhxEZENwrdx+ToaWXM8=",
		"u:p\xff":                    "u:6CtHK7C6iAk/ZYK1Hf0L2NA4tRg=",
		"u:\xe2\x82":                 "u:NP+S9gihaPOxs49p+sWDO0/R0ac=", // one U+FFFD
		"u:\xed\xa0\x80":             "u:NP+S9gihaPOxs49p+sWDO0/R0ac=", // a surrogate: one
		"u:\xf0\x9f\x98":             "u:NP+S9gihaPOxs49p+sWDO0/R0ac=",
		"u:\xe2\x82x":                "u:S4dNrmWVdGA2oJvbuKzKAbsdmho=", // one, then x
		"u:\xf0\x9f\x98x":            "u:S4dNrmWVdGA2oJvbuKzKAbsdmho=",
		"u:\xc0\xaf":                 "u:tBXHUAUzZXYCqAcMeZihzl82Xwo=", // two
		"u:\xed\xa0\x80\xed\xb0\x80": "u:tBXHUAUzZXYCqAcMeZihzl82Xwo=", // a surrogate pair: two
		"u:\xe0\x80\xaf":             "u:vEkuhjHdfUZNvfORkvAkZ7fhsck=", // three
		"u:\xf0\x80\x80":             "u:vEkuhjHdfUZNvfORkvAkZ7fhsck=",
		"u:\xf8\x88\x80\x80\x80":     "u:90vAICo8dqKarHTCU27Kz3VKQqA=", // five
		"u:\xf4\x90\x80\x80":         "u:HCZx0lTy+9lYQAH9rf604FmDKjw=",
		"u\xfe\xff":                  "u\uFFFD\uFFFD:rciAPryU1vnf4iMrqL8ABrG9ueQ=",
		"\x80:pw":                    "\uFFFD:WzWS3Ogd1jZiLDTZOdDvuVYHXi8=",
	} {
		require.Equal(t, want, digestID([]byte(cred)), "%q", cred)
	}
}
