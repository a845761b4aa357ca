package integration_test

import (
	"encoding/binary"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// Section 7: bad input (reliability.md §9.4). Every case ends with an
// error code or a closed connection, and another client still works.

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// requireAllErrors checks that replies received before a close carry
// errors only (a bad request is never answered with success).
func requireAllErrors(t *testing.T, hs []wire.ReplyHeader, msg string) {
	t.Helper()
	for _, h := range hs {
		require.NotEqual(t, wire.OK, h.Err, "%s: reply %+v", msg, h)
	}
}

// requireSessionAlive checks that c's session survived the close of its
// connection: a bad frame closes the connection at once, it does not leave
// it hanging until the session expires.
func requireSessionAlive(t *testing.T, srv *zktest.Server, c *rawConn, msg string) {
	t.Helper()
	_, ok := srv.Server().FSM().Session(c.resp.SessionID)
	require.True(t, ok, "%s: the connection closed at once, its session lives on", msg)
}

func TestBadFrameLengthsClose(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	cases := []struct {
		name   string
		length uint32
	}{
		{"-1", 0xFFFFFFFF},
		{"0", 0},
		{"max+1", wire.DefaultMaxFrame + 1},
		{"2^31-1", 0x7FFFFFFF},
		{"min int32", 0x80000000},
		{"-2", 0xFFFFFFFE},
	}
	for _, tc := range cases {
		for _, afterHandshake := range []bool{false, true} {
			name := fmt.Sprintf("%s (after handshake: %v)", tc.name, afterHandshake)
			var c *rawConn
			if afterHandshake {
				c = connectRaw(t, srv)
			} else {
				c = dialRaw(t, srv.Addr())
			}
			c.write(be32(tc.length))
			hs := c.expectClosedWithReplies()
			if afterHandshake {
				requireAllErrors(t, hs, name)
				requireSessionAlive(t, srv, c, name)
			} else {
				require.Empty(t, hs, name)
			}
			requireHealthy(t, srv)
		}
	}
	require.Len(t, srv.Sessions(), 6, "a bad frame closes the connection, not the session")
}

// createFrameOfSize returns a valid create request frame whose payload is
// exactly size bytes (the data buffer fills the rest).
func createFrameOfSize(t *testing.T, xid int32, path string, size int) []byte {
	t.Helper()
	req := &wire.CreateRequest{Path: path, Data: []byte{}, ACL: wire.OpenACLUnsafe}
	base := len(requestFrame(xid, wire.OpCreate, req)) - 4
	require.Less(t, base, size)
	req.Data = make([]byte, size-base)
	for i := range req.Data {
		req.Data[i] = byte(i)
	}
	f := requestFrame(xid, wire.OpCreate, req)
	require.Len(t, f, 4+size)
	return f
}

func TestMaxFrameAcceptedMaxPlusOneClosed(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.xid++
	c.write(createFrameOfSize(t, c.xid, "/max", wire.DefaultMaxFrame))
	h, _ := c.reply(c.xid)
	require.Equal(t, wire.OK, h.Err, "a frame of exactly jute.maxbuffer is accepted")
	var got wire.GetDataResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: "/max"}, &got))
	require.Len(t, got.Data, int(got.Stat.DataLength))
	require.Greater(t, len(got.Data), wire.DefaultMaxFrame-100)

	c.xid++
	// The server closes after reading the length, so writing the rest of
	// the megabyte may fail with a reset: that is the expected outcome.
	_ = c.nc.SetWriteDeadline(time.Now().Add(waitTimeout))
	_, _ = c.nc.Write(createFrameOfSize(t, c.xid, "/max1", wire.DefaultMaxFrame+1))
	require.Empty(t, c.expectClosedWithReplies(), "one byte more is a Len error: closed")
	requireHealthy(t, srv)
	require.Len(t, srv.Tree(), 1)
}

func TestGarbageBytesClose(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	garbageFrame := append(be32(16), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 7, 8}...)
	cases := []struct {
		name           string
		afterHandshake bool
		bytes          []byte
	}{
		{"http request as first bytes", false, []byte("GET / HTTP/1.1\r\nHost: zk\r\n\r\n")},
		{"0xff bytes as first bytes", false, []byte(strings.Repeat("\xff", 64))},
		{"tls client hello", false, []byte{0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03}},
		{"0xff bytes after handshake", true, []byte(strings.Repeat("\xff", 64))},
		{"garbage body in a valid frame", true, garbageFrame},
		{"text after handshake", true, []byte("hello zookeeper, are you there?\n")},
	}
	for _, tc := range cases {
		var c *rawConn
		if tc.afterHandshake {
			c = connectRaw(t, srv)
		} else {
			c = dialRaw(t, srv.Addr())
		}
		c.write(tc.bytes)
		b := c.expectClosed()
		if tc.afterHandshake {
			// Anything answered before the close is an error reply.
			for len(b) >= 4 {
				n := int(binary.BigEndian.Uint32(b))
				require.LessOrEqual(t, 4+n, len(b), tc.name)
				var h wire.ReplyHeader
				require.NoError(t, h.Decode(wire.NewDecoder(b[4:4+n])), tc.name)
				require.NotEqual(t, wire.OK, h.Err, tc.name)
				b = b[4+n:]
			}
		} else {
			require.Empty(t, b, tc.name)
		}
		requireHealthy(t, srv)
	}
}

func TestTruncatedFrameThenEOF(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, afterHandshake := range []bool{false, true} {
		var c *rawConn
		if afterHandshake {
			c = connectRaw(t, srv)
		} else {
			c = dialRaw(t, srv.Addr())
		}
		f := requestFrame(1, wire.OpCreate, &wire.CreateRequest{Path: "/trunc", ACL: wire.OpenACLUnsafe})
		if !afterHandshake {
			f = encodeFrame(nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
		}
		c.write(f[:len(f)/2])
		require.NoError(t, c.nc.(*net.TCPConn).CloseWrite())
		require.Empty(t, c.expectClosed(), "afterHandshake=%v", afterHandshake)
		requireHealthy(t, srv)
	}
	require.Len(t, srv.Sessions(), 1, "the half-sent ConnectRequest created no session")
	require.Empty(t, srv.Tree())
}

func TestRequestBeforeConnectCloses(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	frames := map[string][]byte{
		"ping":    requestFrame(wire.XidPing, wire.OpPing, nil),
		"getData": requestFrame(1, wire.OpGetData, &wire.PathWatchRequest{Path: "/"}),
		"create": requestFrame(1, wire.OpCreate, &wire.CreateRequest{Path: "/before-connect", Data: make([]byte, 64),
			ACL: wire.OpenACLUnsafe}),
		"closeSession": requestFrame(1, wire.OpCloseSession, nil),
	}
	for name, f := range frames {
		c := dialRaw(t, srv.Addr())
		c.write(f)
		require.Empty(t, c.expectClosed(), name)
		requireHealthy(t, srv)
	}
	require.Empty(t, srv.Tree())
}

func TestSecondConnectRequestCloses(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/eph", nil, wire.ModeEphemeral)
	c.write(encodeFrame(nil, &wire.ConnectRequest{TimeOut: 10000, SessionID: c.resp.SessionID, Passwd: c.resp.Passwd}))
	requireAllErrors(t, c.expectClosedWithReplies(), "second connect")
	require.Len(t, srv.Sessions(), 1, "no second session")
	requireHealthy(t, srv)
}

func TestFrameSplitAtEveryByte(t *testing.T) {
	t.Parallel()
	srv := startServer(t)

	// The handshake and a create, one byte per write.
	c := dialRaw(t, srv.Addr())
	bytes := encodeFrame(nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
	bytes = append(bytes, requestFrame(1, wire.OpCreate, &wire.CreateRequest{Path: "/bytewise", Data: []byte("d"),
		ACL: wire.OpenACLUnsafe})...)
	for i := range bytes {
		c.write(bytes[i : i+1])
	}
	frame, err := c.readFrame()
	require.NoError(t, err)
	require.NoError(t, c.resp.Decode(wire.NewDecoder(frame)))
	require.NotZero(t, c.resp.SessionID)
	var cr wire.CreateResponse
	h, d := c.reply(1)
	require.Equal(t, wire.OK, h.Err)
	require.NoError(t, cr.Decode(d))
	require.Equal(t, "/bytewise", cr.Path)
	c.xid = 1

	// A create split in two at every possible point, all pipelined.
	c2 := connectRaw(t, srv)
	probe := requestFrame(1, wire.OpCreate, &wire.CreateRequest{Path: "/split-000", ACL: wire.OpenACLUnsafe})
	n := len(probe)
	for k := 1; k < n; k++ {
		f := requestFrame(int32(k), wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/split-%03d", k), ACL: wire.OpenACLUnsafe})
		c2.write(f[:k])
		c2.write(f[k:])
	}
	for k := 1; k < n; k++ {
		h, _ := c2.reply(int32(k))
		require.Equal(t, wire.OK, h.Err, "split at %d", k)
	}
	require.Len(t, srv.Tree(), n)
}

func TestMalformedBodiesClose(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	hdr := func(op wire.OpCode) []byte {
		var e wire.Encoder
		(&wire.RequestHeader{Xid: 1, Op: op}).Encode(&e)
		return e.Bytes()
	}
	frame := func(parts ...[]byte) []byte {
		var body []byte
		for _, p := range parts {
			body = append(body, p...)
		}
		return append(be32(uint32(len(body))), body...)
	}
	str := func(s string) []byte { return append(be32(uint32(len(s))), s...) }
	acl := func() []byte {
		var e wire.Encoder
		wire.EncodeACLs(&e, wire.OpenACLUnsafe)
		return e.Bytes()
	}
	cases := []struct {
		name  string
		frame []byte
	}{
		{"string length beyond the frame", frame(hdr(wire.OpCreate), be32(1000), []byte("/abc"))},
		{"string length 2^31-1", frame(hdr(wire.OpGetData), be32(0x7FFFFFFF), []byte("/a"), []byte{0})},
		{"negative string length", frame(hdr(wire.OpGetData), be32(0xFFFFFFFB), []byte{0})},
		{"buffer length beyond the frame", frame(hdr(wire.OpCreate), str("/b"), be32(1<<20), []byte("xyz"))},
		{"buffer length 2^31-1", frame(hdr(wire.OpSetData), str("/b"), be32(0x7FFFFFFF), be32(0))},
		{"negative buffer length", frame(hdr(wire.OpSetData), str("/b"), be32(0xFFFFFFF0), be32(0))},
		{"ACL vector count 2^31-1", frame(hdr(wire.OpCreate), str("/v"), be32(0), be32(0x7FFFFFFF), be32(0))},
		{"SetWatches vector count 2^31-1", frame(hdr(wire.OpSetWatches), make([]byte, 8), be32(0x7FFFFFFF), []byte("/x"))},
		{"multi without end marker", frame(hdr(wire.OpMulti), be32(uint32(wire.OpDelete)), []byte{0}, be32(0xFFFFFFFF),
			str("/m"), be32(0xFFFFFFFF))},
		{"missing watch flag", frame(hdr(wire.OpGetData), str("/"))},
		{"create missing flags", frame(hdr(wire.OpCreate), str("/c"), be32(0), acl())},
		{"header only, body expected", frame(hdr(wire.OpCreate))},
		{"short header", frame([]byte{0, 0, 0, 1, 0, 0})},
	}
	for _, tc := range cases {
		c := connectRaw(t, srv)
		c.write(tc.frame)
		requireAllErrors(t, c.expectClosedWithReplies(), tc.name)
		requireSessionAlive(t, srv, c, tc.name)
		requireHealthy(t, srv)
	}
	require.Empty(t, srv.Tree())
	require.Len(t, srv.Sessions(), len(cases))

	// A well-formed multi holding an op type it does not allow is answered
	// MARSHALLINGERROR and the connection stays, as in ZooKeeper ("Invalid
	// type of op"): the frame's length delimits it.
	c := connectRaw(t, srv)
	c.write(frame(hdr(wire.OpMulti), be32(99), []byte{0}, be32(0xFFFFFFFF), str("/m")))
	h, _ := c.reply(1)
	require.Equal(t, wire.ErrMarshallingError, h.Err, "multi with an unknown op type")
	c.barrier()
	require.Empty(t, srv.Tree())
}

// TestNullBufferIsEmptyData: length -1 is a null buffer, a valid create.
func TestNullBufferIsEmptyData(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/null", nil, wire.ModePersistent) // Data nil encodes as -1
	var got wire.GetDataResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: "/null"}, &got))
	require.Empty(t, got.Data)
	require.Zero(t, got.Stat.DataLength)
}

func TestBadPathsAreBadArguments(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/a", nil, wire.ModePersistent)
	cases := []struct {
		name string
		path string
		// seqOK: a valid sequential prefix, since ZooKeeper validates the
		// path with its suffix ("/a/" becomes "/a/0000000001").
		seqOK bool
		// noParent: the text before the last '/' names no node. ZooKeeper
		// looks the parent up before checking the whole path, so create
		// answers NoNode.
		noParent bool
	}{
		{"empty", "", false, false},
		{"relative", "a", false, false},
		{"trailing slash", "/a/", true, false},
		{"double slash", "//a", false, false},
		{"inner double slash", "/a//b", false, true},
		{"slashes only", "//", false, false},
		{"dot", "/./a", false, true},
		{"trailing dot", "/a/.", true, false},
		{"dot dot", "/a/..", true, false},
		{"leading dot dot", "/../a", false, true},
		{"NUL", "/a\x00b", false, false},
		{"U+0001", "/a\u0001", false, false},
		{"U+001F", "/a\u001f", false, false},
		{"U+007F", "/a\u007f", false, false},
		{"U+0085", "/a\u0085", false, false},
		{"U+009F", "/a\u009f", false, false},
		{"U+D800 (invalid UTF-8)", "/a\xed\xa0\x80", false, false},
		{"U+DFFF (invalid UTF-8)", "/a\xed\xbf\xbf", false, false},
		{"U+E000 (private use)", "/a\ue000", false, false},
		{"U+F8FF", "/a\uf8ff", false, false},
		{"emoji (above U+FFFF)", "/a\U0001F600", false, false},
		{"U+FFF0", "/a\ufff0", false, false},
		{"U+FFFE", "/a\ufffe", false, false},
		{"U+FFFF", "/a\uffff", false, false},
		{"invalid UTF-8 byte", "/a\xff", false, false},
		{"truncated UTF-8 sequence", "/a\xe6\x97", false, false},
		{"overlong UTF-8 encoding", "/a\xc0\xaf", false, false},
	}
	for _, tc := range cases {
		wantCreate := wire.ErrBadArguments
		if tc.noParent {
			wantCreate = wire.ErrNoNode
		}
		code := c.call(wire.OpCreate, &wire.CreateRequest{Path: tc.path, Data: []byte("x"), ACL: wire.OpenACLUnsafe}, nil)
		require.Equal(t, wantCreate, code, "create %s %q", tc.name, tc.path)
		code = c.call(wire.OpSetData, &wire.SetDataRequest{Path: tc.path, Version: -1}, nil)
		require.Equal(t, wire.ErrBadArguments, code, "setData %s %q", tc.name, tc.path)
		code = c.call(wire.OpDelete, &wire.DeleteRequest{Path: tc.path, Version: -1}, nil)
		if tc.path == "" || tc.path[0] != '/' || strings.IndexByte(tc.path, 0) >= 0 {
			require.Equal(t, wire.ErrBadArguments, code, "delete %s %q", tc.name, tc.path)
		} else {
			// As ZooKeeper, delete checks only for a '/', NUL and the
			// system paths before looking the node up: NoNode.
			require.Equal(t, wire.ErrNoNode, code, "delete %s %q", tc.name, tc.path)
		}
		code = c.call(wire.OpSetACL, &wire.SetACLRequest{Path: tc.path, ACL: wire.OpenACLUnsafe, Version: -1}, nil)
		require.Equal(t, wire.ErrBadArguments, code, "setACL %s %q", tc.name, tc.path)
		var resp wire.CreateResponse
		code = c.call(wire.OpCreate, &wire.CreateRequest{Path: tc.path, ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistentSequential}, &resp)
		if tc.seqOK {
			require.Equal(t, wire.OK, code, "sequential create %s %q", tc.name, tc.path)
			require.True(t, strings.HasPrefix(resp.Path, tc.path), resp.Path)
		} else {
			require.Equal(t, wantCreate, code, "sequential create %s %q", tc.name, tc.path)
		}
	}
	require.Equal(t, wire.ErrBadArguments, c.call(wire.OpExists, &wire.PathWatchRequest{Path: "/a\x00"}, nil),
		"exists rejects NUL, as ZooKeeper")
	var got []string
	for _, n := range srv.Tree() {
		got = append(got, n.Path)
	}
	require.Equal(t, []string{"/a", "/a/..0000000002", "/a/.0000000001", "/a/0000000000"}, got,
		"only the valid sequential creates happened")
}

func TestUnicodeNamesRoundTrip(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/u", nil)
	names := []string{
		"日本語",              // CJK
		"中文节点",             // CJK
		"café",             // precomposed é
		"cafe\u0301",       // e + combining acute: a different name, not normalised
		"Ünïcödé-ñ",        // accented
		"שלום",             // Hebrew (RTL)
		"مرحبا",            // Arabic (RTL)
		"a\u200fb",         // right-to-left mark
		"Ελληνικά",         // Greek
		"한국어",              // Hangul
		"\u00a0nbsp",       // U+00A0, just above the C1 range
		"\uf900compat",     // U+F900, just above the rejected range
		"\uffefbeforeFFF0", // U+FFEF
	}
	for _, n := range names {
		p := "/u/" + n
		got, err := c.Create(p, []byte(n), 0, openACL)
		require.NoError(t, err, "%q", n)
		require.Equal(t, p, got)
		data, _, err := c.Get(p)
		require.NoError(t, err)
		require.Equal(t, []byte(n), data)
	}
	kids, _, err := c.Children("/u")
	require.NoError(t, err)
	require.ElementsMatch(t, names, kids, "names come back byte-exact")
	var inTree []string
	for _, n := range srv.Tree() {
		if strings.HasPrefix(n.Path, "/u/") {
			inTree = append(inTree, strings.TrimPrefix(n.Path, "/u/"))
		}
	}
	require.ElementsMatch(t, names, inTree)
}

func TestSlowHandshakeClosedAfterTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	srv := startServer(t, zktest.WithHandshakeTimeout(timeout))
	// Handshake done before the slow clients start. The raw connection
	// sends no pings, and the parallel subtests below may wait for slots
	// behind the package's long tests (seconds under -race), so its session
	// asks for the longest timeout the server allows: what is checked is
	// that the handshake timeout spares established connections.
	established := dialRaw(t, srv.Addr())
	resp, err := established.handshake(wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, wire.PasswordSize)})
	require.NoError(t, err)
	require.NotZero(t, resp.SessionID)

	hello := encodeFrame(nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
	cases := []struct {
		name  string
		bytes []byte
		every time.Duration
	}{
		{"handshake one byte every 40ms", hello, 40 * time.Millisecond},
		{"four-letter word one byte every 250ms", []byte("srvr"), 250 * time.Millisecond},
		{"nothing at all", nil, 0},
	}
	t.Run("slow", func(t *testing.T) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				c := dialRaw(t, srv.Addr())
				start := time.Now()
				stop := make(chan struct{})
				defer close(stop)
				if len(tc.bytes) > 0 {
					go func() {
						tick := time.NewTicker(tc.every)
						defer tick.Stop()
						for _, b := range tc.bytes {
							select {
							case <-tick.C:
							case <-stop:
								return
							}
							_ = c.nc.SetWriteDeadline(time.Now().Add(waitTimeout))
							if _, err := c.nc.Write([]byte{b}); err != nil {
								return
							}
						}
					}()
				}
				require.Empty(t, c.expectClosed())
				elapsed := time.Since(start)
				require.GreaterOrEqual(t, elapsed, timeout-20*time.Millisecond)
				if len(tc.bytes) > 0 {
					require.Less(t, elapsed, time.Duration(len(tc.bytes))*tc.every,
						"closed before the slow client was done")
				}
			})
		}
	})
	// The established connection outlived the handshake timeout.
	established.create("/still-here", nil, wire.ModeEphemeral)
	requireHealthy(t, srv)
	require.Len(t, srv.Sessions(), 1, "the slow clients got no session")
}

func TestNeverReadingClientDisconnected(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithMaxOutboundBytes(2<<20))
	big := "/" + strings.Repeat("n", 900<<10) // every notification on it is ~900 KiB
	w := connect(t, srv)
	_, err := w.Create(big, nil, 0, openACL)
	require.NoError(t, err)

	slow := dialRaw(t, srv.Addr())
	// A small receive buffer (but not below a segment, or loopback TCP
	// crawls) so that the server's socket fills up quickly.
	require.NoError(t, slow.nc.(*net.TCPConn).SetReadBuffer(256<<10))
	_, err = slow.handshake(wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
	require.NoError(t, err)
	slow.addWatch(big, wire.AddWatchPersistent)
	// From now on slow never reads.

	slowClosed := func() bool { return mntr(srv)["zk_slow_consumers_disconnected"] == "1" }
	deadline := time.Now().Add(waitTimeout)
	sets := 0
	for !slowClosed() {
		require.True(t, time.Now().Before(deadline), "slow consumer not disconnected after %d notifications", sets)
		_, err := w.Set(big, []byte{byte(sets)}, -1)
		require.NoError(t, err)
		sets++
	}
	t.Logf("slow consumer disconnected after %d notifications of %d KiB", sets, len(big)>>10)
	eventually(t, waitTimeout, func() bool { return len(srv.Watches()) == 0 }, "its watches are gone")
	slow.expectClosed()

	// The server and the writer carry on.
	_, err = w.Set(big, []byte("after"), -1)
	require.NoError(t, err)
	requireHealthy(t, srv)
	require.Len(t, srv.Sessions(), 2, "the slow client's session lives until it expires")
}

func TestMaxClientCnxnsPerIP(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithMaxClientCnxns(3))
	var conns []*rawConn
	for range 3 {
		conns = append(conns, connectRaw(t, srv))
	}
	extra := dialRaw(t, srv.Addr())
	require.Empty(t, extra.expectClosed(), "the 4th connection from one address is refused")
	require.Equal(t, "1", mntr(srv)["zk_connection_rejected"])
	for _, c := range conns {
		c.create(fmt.Sprintf("/ok-%d", c.resp.SessionID), nil, wire.ModeEphemeral)
	}

	require.NoError(t, conns[0].nc.Close())
	eventually(t, waitTimeout, func() bool {
		c := dialRaw(t, srv.Addr())
		_, err := c.handshake(wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize)})
		if err != nil {
			return false
		}
		_ = c.nc.Close()
		return true
	}, "a slot frees up once a connection closes")
}

func TestDeepTree(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	const depth = 1000
	path := func(level int) string { return strings.Repeat("/d", level+1) }

	var creates, gets, deletes []pipelined
	for i := range depth {
		p := path(i)
		creates = append(creates, pipelined{op: wire.OpCreate,
			req:  &wire.CreateRequest{Path: p, Data: []byte(fmt.Sprint(i)), ACL: wire.OpenACLUnsafe},
			resp: &wire.CreateResponse{}, check: func(r wire.Record) { require.Equal(t, p, r.(*wire.CreateResponse).Path) }})
		want := []byte(fmt.Sprint(i))
		kids := 1
		if i == depth-1 {
			kids = 0
		}
		gets = append(gets, pipelined{op: wire.OpGetData, req: &wire.PathWatchRequest{Path: p},
			resp: &wire.GetDataResponse{}, check: func(r wire.Record) {
				g := r.(*wire.GetDataResponse)
				require.Equal(t, want, g.Data)
				require.EqualValues(t, kids, g.Stat.NumChildren)
			}})
		deletes = append([]pipelined{{op: wire.OpDelete, req: &wire.DeleteRequest{Path: p, Version: -1}}}, deletes...)
	}
	runPipeline(t, c, creates)
	runPipeline(t, c, gets)
	var n wire.GetAllChildrenNumberResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: "/d"}, &n))
	require.EqualValues(t, depth-1, n.TotalNumber)
	require.Equal(t, wire.ErrNotEmpty, c.call(wire.OpDelete, &wire.DeleteRequest{Path: "/d", Version: -1}, nil))
	runPipeline(t, c, deletes)
	require.Empty(t, srv.Tree())
}

func TestMultiWithTenThousandOps(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/big", nil)
	const n = 10000
	ops := make([]any, n)
	for i := range ops {
		ops[i] = &zk.CreateRequest{Path: fmt.Sprintf("/big/n%05d", i), Acl: openACL}
	}
	res, err := c.Multi(ops...)
	require.NoError(t, err)
	require.Len(t, res, n)
	require.Equal(t, "/big/n09999", res[n-1].String)
	kids, st, err := c.Children("/big")
	require.NoError(t, err)
	require.Len(t, kids, n)
	require.EqualValues(t, n, st.Cversion)
	_, first, err := c.Exists("/big/n00000")
	require.NoError(t, err)
	_, last, err := c.Exists("/big/n09999")
	require.NoError(t, err)
	require.Equal(t, first.Czxid, last.Czxid, "one transaction")

	// 10,000 deletes with a failure in the middle: nothing is deleted.
	raw := connectRaw(t, srv)
	req := &wire.MultiRequest{}
	for i := range n {
		p := fmt.Sprintf("/big/n%05d", i)
		if i == n/2 {
			p = "/big/missing"
		}
		req.Ops = append(req.Ops, wire.MultiOp{Op: wire.OpDelete, Req: &wire.DeleteRequest{Path: p, Version: -1}})
	}
	var resp wire.MultiResponse
	require.Equal(t, wire.OK, raw.call(wire.OpMulti, req, &resp))
	require.Len(t, resp.Results, n)
	for i, r := range resp.Results {
		want := wire.OK
		switch {
		case i == n/2:
			want = wire.ErrNoNode
		case i > n/2:
			want = wire.ErrRuntimeInconsistency
		}
		require.Equal(t, want, r.Err, "op %d", i)
	}
	kids, _, err = c.Children("/big")
	require.NoError(t, err)
	require.Len(t, kids, n)

	// And all of them at once.
	req.Ops[n/2].Req = &wire.DeleteRequest{Path: fmt.Sprintf("/big/n%05d", n/2), Version: -1}
	resp = wire.MultiResponse{}
	require.Equal(t, wire.OK, raw.call(wire.OpMulti, req, &resp))
	for i, r := range resp.Results {
		require.Equal(t, wire.OpDelete, r.Op, "op %d", i)
	}
	kids, _, err = c.Children("/big")
	require.NoError(t, err)
	require.Empty(t, kids)
}

// TestReplyLargerThanFrameIsADefinedError: a getChildren whose reply would
// exceed the largest read reply (MaxReplyFrame; 4 MiB by default, what the
// Java client reads) answers MarshallingError (-5) instead of sending a
// frame clients must reject; the connection stays usable. A write's reply
// is sent whatever its size: a multi that was applied must not be
// answered as failed (it was, before).
func TestReplyLargerThanFrameIsADefinedError(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithMaxReplyFrame(64<<10))
	c := connect(t, srv)
	mustCreate(t, c, "/wide", nil)
	for batch := 0; batch < 10; batch++ {
		ops := make([]any, 0, 1000)
		for i := 0; i < 1000; i++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/wide/c-%05d", batch*1000+i), Acl: zk.WorldACL(zk.PermAll)})
		}
		res, err := c.Multi(ops...)
		require.NoError(t, err, "a multi reply of ~%d KiB", 1000*40>>10)
		require.Len(t, res, 1000)
	}
	n, err := srv.Server().FSM().AllChildrenNumber("/wide")
	require.NoError(t, err)
	require.EqualValues(t, 10000, n)
	_, _, err = c.Children("/wide")
	require.ErrorContains(t, err, "-5", "10,000 children do not fit in a 64 KiB reply: MARSHALLINGERROR")
	_, _, err = c.Get("/wide")
	require.NoError(t, err, "the connection survives")

	sets := make([]any, 2000)
	for i := range sets {
		sets[i] = &zk.SetDataRequest{Path: "/wide", Version: -1}
	}
	res, err := c.Multi(sets...) // a reply of ~180 KiB
	require.NoError(t, err, "an applied multi answered as failed")
	require.Len(t, res, len(sets))
	_, st, err := c.Get("/wide")
	require.NoError(t, err)
	require.EqualValues(t, len(sets), st.Version)
}

// TestTenThousandDeep builds the deepest tree of our test plan (10,000
// levels, paths of 20 KB) one request at a time, reads and counts it, and
// takes it down again.
func TestTenThousandDeep(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	const depth = 10000
	var b strings.Builder
	paths := make([]string, depth)
	for i := range paths {
		b.WriteString("/d")
		paths[i] = b.String()
		_, err := c.Create(paths[i], nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	_, st, err := c.Get(paths[depth-1])
	require.NoError(t, err)
	require.Zero(t, st.NumChildren)
	n, err := srv.Server().FSM().AllChildrenNumber("/d")
	require.NoError(t, err)
	require.EqualValues(t, depth-1, n)
	require.NoError(t, srv.Server().FSM().Check())
	for i := depth - 1; i >= 0; i-- {
		require.NoError(t, c.Delete(paths[i], -1))
	}
	requireHealthy(t, srv)
}
