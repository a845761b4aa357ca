package integration_test

import (
	"crypto/sha1"
	"encoding/base64"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// Section 3: what go-zookeeper cannot send, over raw frames.

// rawCreate creates path with mode and returns the created path.
func (c *rawConn) create(path string, data []byte, mode wire.CreateMode) string {
	c.t.Helper()
	var resp wire.CreateResponse
	code := c.call(wire.OpCreate, &wire.CreateRequest{Path: path, Data: data, ACL: wire.OpenACLUnsafe, Flags: mode}, &resp)
	require.Equal(c.t, wire.OK, code, "create %s", path)
	return resp.Path
}

func (c *rawConn) setData(path string, data []byte) {
	c.t.Helper()
	code := c.call(wire.OpSetData, &wire.SetDataRequest{Path: path, Data: data, Version: -1}, &wire.StatResponse{})
	require.Equal(c.t, wire.OK, code, "setData %s", path)
}

func (c *rawConn) delete(path string) {
	c.t.Helper()
	require.Equal(c.t, wire.OK, c.call(wire.OpDelete, &wire.DeleteRequest{Path: path, Version: -1}, nil), "delete %s", path)
}

func (c *rawConn) addWatch(path string, mode wire.AddWatchMode) {
	c.t.Helper()
	var resp wire.ErrorResponse
	require.Equal(c.t, wire.OK, c.call(wire.OpAddWatch, &wire.AddWatchRequest{Path: path, Mode: mode}, &resp))
	require.Equal(c.t, wire.OK, resp.Err)
}

// digestOf is ZooKeeper's digest of "user:password", computed here
// independently of the server: base64(sha1("user:password")).
func digestOf(userPassword string) string {
	sum := sha1.Sum([]byte(userPassword))
	return base64.StdEncoding.EncodeToString(sum[:])
}

func ev(typ wire.EventType, path string) wire.WatcherEvent {
	return wire.WatcherEvent{Type: typ, State: wire.StateSyncConnected, Path: path}
}

func TestPersistentWatchSurvivesFiring(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, c := connectRaw(t, srv), connectRaw(t, srv)
	w.addWatch("/p", wire.AddWatchPersistent)

	c.create("/p", nil, wire.ModePersistent)
	c.setData("/p", []byte("1"))
	c.setData("/p", []byte("2"))
	c.create("/p/c", nil, wire.ModePersistent)
	c.setData("/p/c", []byte("x")) // not the watched node: nothing
	c.create("/p/c/d", nil, wire.ModePersistent)
	c.delete("/p/c/d")
	c.delete("/p/c")
	c.delete("/p")
	c.create("/p", nil, wire.ModePersistent)
	c.create("/elsewhere", nil, wire.ModePersistent)

	require.Equal(t, []wire.WatcherEvent{
		ev(wire.EventNodeCreated, "/p"),
		ev(wire.EventNodeDataChanged, "/p"),
		ev(wire.EventNodeDataChanged, "/p"),
		ev(wire.EventNodeChildrenChanged, "/p"),
		ev(wire.EventNodeChildrenChanged, "/p"),
		ev(wire.EventNodeDeleted, "/p"),
		ev(wire.EventNodeCreated, "/p"),
	}, w.barrier())
}

func TestPersistentRecursiveWatchFiresForDescendants(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, c := connectRaw(t, srv), connectRaw(t, srv)
	w.addWatch("/r", wire.AddWatchPersistentRecursive)

	c.create("/r", nil, wire.ModePersistent)
	c.create("/r/a", nil, wire.ModePersistent)
	c.create("/r/a/b", nil, wire.ModePersistent)
	c.setData("/r/a/b", []byte("x"))
	c.delete("/r/a/b")
	c.setData("/r", []byte("y"))
	c.create("/rr", nil, wire.ModePersistent) // a sibling sharing the prefix
	c.create("/other", nil, wire.ModePersistent)
	c.delete("/r/a")
	c.setData("/r", []byte("z"))

	require.Equal(t, []wire.WatcherEvent{
		ev(wire.EventNodeCreated, "/r"),
		ev(wire.EventNodeCreated, "/r/a"),
		ev(wire.EventNodeCreated, "/r/a/b"),
		ev(wire.EventNodeDataChanged, "/r/a/b"),
		ev(wire.EventNodeDeleted, "/r/a/b"),
		ev(wire.EventNodeDataChanged, "/r"),
		ev(wire.EventNodeDeleted, "/r/a"),
		ev(wire.EventNodeDataChanged, "/r"),
	}, w.barrier(), "recursive watches never fire NodeChildrenChanged")
}

// TestNotificationHeader: a notification is a reply header with xid -1,
// err 0 and (as ZooKeeper 3.9) the zxid of the triggering transaction,
// followed by a WatcherEvent in state SyncConnected.
func TestNotificationHeader(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w, c := connectRaw(t, srv), connectRaw(t, srv)
	w.addWatch("/n", wire.AddWatchPersistent)
	var created wire.Create2Response
	require.Equal(t, wire.OK, c.call(wire.OpCreate2, &wire.CreateRequest{Path: "/n", ACL: wire.OpenACLUnsafe}, &created))
	h, d := w.next()
	require.Equal(t, wire.XidNotification, h.Xid)
	require.Equal(t, wire.OK, h.Err)
	require.Equal(t, created.Stat.Czxid, h.Zxid)
	require.Equal(t, ev(wire.EventNodeCreated, "/n"), decodeEvent(t, d))
}

func TestRemoveAndCheckWatches(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	writer := connectRaw(t, srv)
	writer.create("/w", nil, wire.ModePersistent)

	getData := func(c *rawConn, p string) {
		require.Equal(t, wire.OK, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: p, Watch: true}, &wire.GetDataResponse{}))
	}
	getChildren := func(c *rawConn, p string) {
		require.Equal(t, wire.OK, c.call(wire.OpGetChildren, &wire.PathWatchRequest{Path: p, Watch: true}, &wire.GetChildrenResponse{}))
	}
	exists := func(c *rawConn, p string) {
		c.call(wire.OpExists, &wire.PathWatchRequest{Path: p, Watch: true}, &wire.StatResponse{})
	}
	cases := []struct {
		name    string
		arm     func(c *rawConn, p string)
		remove  wire.WatcherType
		want    wire.Code
		gone    []wire.WatcherType // checkWatches answers NoWatcher for these afterwards
		remains []wire.WatcherType // and OK for these
	}{
		{"children", getChildren, wire.WatcherChildren, wire.OK,
			[]wire.WatcherType{wire.WatcherChildren, wire.WatcherAny}, nil},
		{"data from getData", getData, wire.WatcherData, wire.OK,
			[]wire.WatcherType{wire.WatcherData, wire.WatcherAny}, nil},
		{"data from exists", exists, wire.WatcherData, wire.OK,
			[]wire.WatcherType{wire.WatcherData, wire.WatcherAny}, nil},
		{"any removes data and child", func(c *rawConn, p string) { getData(c, p); getChildren(c, p) },
			wire.WatcherAny, wire.OK, []wire.WatcherType{wire.WatcherData, wire.WatcherChildren, wire.WatcherAny}, nil},
		{"persistent", func(c *rawConn, p string) { c.addWatch(p, wire.AddWatchPersistent) },
			wire.WatcherPersistent, wire.OK, []wire.WatcherType{wire.WatcherPersistent, wire.WatcherAny}, nil},
		{"persistent recursive", func(c *rawConn, p string) { c.addWatch(p, wire.AddWatchPersistentRecursive) },
			wire.WatcherPersistentRecursive, wire.OK,
			[]wire.WatcherType{wire.WatcherPersistentRecursive, wire.WatcherAny}, nil},
		{"any removes persistent", func(c *rawConn, p string) { c.addWatch(p, wire.AddWatchPersistent) },
			wire.WatcherAny, wire.OK, []wire.WatcherType{wire.WatcherPersistent, wire.WatcherAny}, nil},
		{"data does not remove a child watch", getChildren, wire.WatcherData, wire.ErrNoWatcher,
			[]wire.WatcherType{wire.WatcherData}, []wire.WatcherType{wire.WatcherChildren, wire.WatcherAny}},
		{"children does not remove a data watch", getData, wire.WatcherChildren, wire.ErrNoWatcher,
			[]wire.WatcherType{wire.WatcherChildren}, []wire.WatcherType{wire.WatcherData, wire.WatcherAny}},
		{"no watch at all", func(*rawConn, string) {}, wire.WatcherAny, wire.ErrNoWatcher,
			[]wire.WatcherType{wire.WatcherData, wire.WatcherChildren, wire.WatcherAny}, nil},
	}
	for _, tc := range cases {
		w := connectRaw(t, srv)
		tc.arm(w, "/w")
		code := w.call(wire.OpRemoveWatches, &wire.WatchesRequest{Path: "/w", Type: tc.remove}, nil)
		require.Equal(t, tc.want, code, "%s: removeWatches", tc.name)
		for _, typ := range tc.gone {
			require.Equal(t, wire.ErrNoWatcher, w.call(wire.OpCheckWatches, &wire.WatchesRequest{Path: "/w", Type: typ}, nil),
				"%s: checkWatches %v", tc.name, typ)
		}
		for _, typ := range tc.remains {
			require.Equal(t, wire.OK, w.call(wire.OpCheckWatches, &wire.WatchesRequest{Path: "/w", Type: typ}, nil),
				"%s: checkWatches %v", tc.name, typ)
		}
		if len(tc.remains) == 0 {
			// Nothing is left: changes fire nothing.
			writer.setData("/w", []byte(tc.name))
			writer.create("/w/x", nil, wire.ModePersistent)
			writer.delete("/w/x")
			require.Empty(t, w.barrier(), tc.name)
		}
	}
}

func TestGetEphemerals(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c, other := connectRaw(t, srv), connectRaw(t, srv)
	c.create("/e1", nil, wire.ModeEphemeral)
	c.create("/dir", nil, wire.ModePersistent)
	c.create("/dir/e2", nil, wire.ModeEphemeral)
	c.create("/dir/s-", nil, wire.ModeEphemeralSequential)
	c.create("/dir/p", nil, wire.ModePersistent)
	other.create("/e3", nil, wire.ModeEphemeral)

	get := func(c *rawConn, prefix string) []string {
		var resp wire.GetEphemeralsResponse
		require.Equal(t, wire.OK, c.call(wire.OpGetEphemerals, &wire.PathRequest{Path: prefix}, &resp))
		return resp.Ephemerals
	}
	all := []string{"/dir/e2", "/dir/s-0000000001", "/e1"}
	require.ElementsMatch(t, all, get(c, "/"))
	require.ElementsMatch(t, all, get(c, ""))
	require.ElementsMatch(t, []string{"/dir/e2", "/dir/s-0000000001"}, get(c, "/dir"))
	require.Empty(t, get(c, "/nothing"))
	require.Equal(t, []string{"/e3"}, get(other, "/"), "only the caller's own session")
}

func TestGetAllChildrenNumber(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	for _, p := range []string{"/g", "/g/a", "/g/b", "/g/a/c", "/h"} {
		c.create(p, nil, wire.ModePersistent)
	}
	count := func(p string) (int32, wire.Code) {
		var resp wire.GetAllChildrenNumberResponse
		code := c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: p}, &resp)
		return resp.TotalNumber, code
	}
	for p, want := range map[string]int32{"/g": 3, "/g/a": 1, "/g/b": 0, "/": int32(len(srv.Tree()) + 3)} {
		n, code := count(p)
		require.Equal(t, wire.OK, code, p)
		require.Equal(t, want, n, p)
	}
	_, code := count("/missing")
	require.Equal(t, wire.ErrNoNode, code)
}

func TestWhoAmIAndDigestAuth(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	var who wire.WhoAmIResponse
	require.Equal(t, wire.OK, c.call(wire.OpWhoAmI, nil, &who))
	require.Contains(t, who.ClientInfo, wire.ClientInfo{AuthScheme: "ip", User: "127.0.0.1"})

	// auth travels with xid -4 and is answered with xid -4.
	c.write(requestFrame(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("alice:secret")}))
	h, _ := c.reply(wire.XidAuth)
	require.Equal(t, wire.OK, h.Err)

	who = wire.WhoAmIResponse{}
	require.Equal(t, wire.OK, c.call(wire.OpWhoAmI, nil, &who))
	require.ElementsMatch(t, []wire.ClientInfo{{AuthScheme: "ip", User: "127.0.0.1"}, {AuthScheme: "digest", User: "alice"}},
		who.ClientInfo, "whoAmI shows the digest user name, not its password hash")

	// The "auth" ACL scheme now expands to the digest identity.
	var resp wire.CreateResponse
	require.Equal(t, wire.OK, c.call(wire.OpCreate, &wire.CreateRequest{Path: "/mine", ACL: wire.CreatorAllACL}, &resp))
	var acl wire.GetACLResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetACL, &wire.PathRequest{Path: "/mine"}, &acl))
	require.Equal(t, []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "alice:" + digestOf("alice:secret")}}}, acl.ACL)
}

// TestDigestAuthWithoutColon: ZooKeeper's digest provider accepts any
// credentials; without a ':' the whole text is the user name.
func TestDigestAuthWithoutColon(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.write(requestFrame(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("nocolon")}))
	h, _ := c.reply(wire.XidAuth)
	require.Equal(t, wire.OK, h.Err)
	var who wire.WhoAmIResponse
	require.Equal(t, wire.OK, c.call(wire.OpWhoAmI, nil, &who))
	require.Contains(t, who.ClientInfo, wire.ClientInfo{AuthScheme: "digest", User: "nocolon"})
	require.Equal(t, wire.OK, c.call(wire.OpCreate, &wire.CreateRequest{Path: "/mine", ACL: wire.CreatorAllACL}, &wire.CreateResponse{}))
	var acl wire.GetACLResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetACL, &wire.PathRequest{Path: "/mine"}, &acl))
	require.Equal(t, []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "nocolon:" + digestOf("nocolon")}}}, acl.ACL)
}

func TestAuthBadSchemeFailsAndCloses(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.write(requestFrame(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "nosuchscheme", Auth: []byte("x")}))
	hs := c.expectClosedWithReplies()
	require.Len(t, hs, 1)
	require.Equal(t, wire.XidAuth, hs[0].Xid)
	require.Equal(t, wire.ErrAuthFailed, hs[0].Err)
	requireHealthy(t, srv)
}

func TestUnimplementedOpcodesAnswerThenClose(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	cases := []struct {
		name string
		op   wire.OpCode
		body wire.Record
	}{
		{"unknown opcode", wire.OpCode(999), nil},
		{"notification pseudo-op", wire.OpNotification, nil},
	}
	for _, tc := range cases {
		c := connectRaw(t, srv)
		xid := c.send(tc.op, tc.body)
		hs := c.expectClosedWithReplies()
		require.Len(t, hs, 1, tc.name)
		require.Equal(t, xid, hs[0].Xid, tc.name)
		require.Equal(t, wire.ErrUnimplemented, hs[0].Err, tc.name)
	}
	requireHealthy(t, srv)
}

// TestSASLWithoutSASL: as ZooKeeper with no SASL configured, a sasl
// request is answered OK with a null token and the connection stays.
func TestSASLWithoutSASL(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	h, d := c.reply(c.send(wire.OpSASL, &wire.SASLRequest{Token: []byte("token")}))
	require.Equal(t, wire.OK, h.Err)
	var resp wire.SASLRequest
	require.NoError(t, resp.Decode(d))
	require.NoError(t, d.Finish())
	require.Nil(t, resp.Token, "a null token")
	c.create("/after-sasl", nil, wire.ModeEphemeral)
}

// TestServerInternalOpcodesRefused: createSession (-10) and
// deleteContainer (20) are server-internal. ZooKeeper answers a client
// that sends them with an error (MarshallingError, BadArguments); Paddock
// answers Unimplemented and closes. Either way nothing happens.
func TestServerInternalOpcodesRefused(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	owner := connectRaw(t, srv)
	var created wire.Create2Response
	require.Equal(t, wire.OK, owner.call(wire.OpCreateContainer, &wire.CreateRequest{Path: "/c", ACL: wire.OpenACLUnsafe,
		Flags: wire.ModeContainer}, &created))
	for _, tc := range []struct {
		op   wire.OpCode
		body wire.Record
	}{
		{wire.OpCreateSession, nil},
		{wire.OpDeleteContainer, &wire.PathRequest{Path: "/c"}},
	} {
		c := connectRaw(t, srv)
		h, _ := c.reply(c.send(tc.op, tc.body))
		require.NotEqual(t, wire.OK, h.Err, "%v", tc.op)
	}
	require.Len(t, srv.Tree(), 1, "the empty container is still there")
	require.Len(t, srv.Sessions(), 3)
	requireHealthy(t, srv)
}

func TestReconfigDisabled(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	code := c.call(wire.OpReconfig, &wire.ReconfigRequest{JoiningServers: "server.2=127.0.0.1:2888:3888", CurConfigID: -1}, nil)
	require.Equal(t, wire.ErrReconfigDisabled, code)
	c.create("/still-open", nil, wire.ModePersistent) // the connection stays usable
}

func TestCloseSessionRepliesThenCloses(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/eph", nil, wire.ModeEphemeral)
	c.create("/kept", nil, wire.ModePersistent)
	xid := c.send(wire.OpCloseSession, nil)
	hs := c.expectClosedWithReplies()
	require.Len(t, hs, 1)
	require.Equal(t, xid, hs[0].Xid)
	require.Equal(t, wire.OK, hs[0].Err)
	require.Empty(t, srv.Sessions())
	tree := srv.Tree()
	require.Len(t, tree, 1)
	require.Equal(t, "/kept", tree[0].Path)

	// The session cannot be resumed.
	r := dialRaw(t, srv.Addr())
	resp, err := r.handshake(wire.ConnectRequest{TimeOut: 10000, SessionID: c.resp.SessionID, Passwd: c.resp.Passwd})
	require.NoError(t, err)
	require.Zero(t, resp.TimeOut)
}

func TestCreate2ContainerTTLRaw(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	cases := []struct {
		name      string
		op        wire.OpCode
		req       wire.Record
		wantPath  string
		wantOwner int64
	}{
		{"create2", wire.OpCreate2, &wire.CreateRequest{Path: "/c2", Data: []byte("abc"), ACL: wire.OpenACLUnsafe}, "/c2", 0},
		{"create2 ephemeral", wire.OpCreate2, &wire.CreateRequest{Path: "/c2e", ACL: wire.OpenACLUnsafe, Flags: wire.ModeEphemeral},
			"/c2e", c.resp.SessionID},
		{"createContainer", wire.OpCreateContainer, &wire.CreateRequest{Path: "/cc", ACL: wire.OpenACLUnsafe, Flags: wire.ModeContainer},
			"/cc", 0},
		{"createTTL", wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/ttl", ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistentWithTTL, TTL: 60000}, "/ttl", 0},
		{"createTTL sequential", wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/ttls-", ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistentSequentialWithTTL, TTL: 1}, "/ttls-0000000004", 0},
	}
	for _, tc := range cases {
		var resp wire.Create2Response
		require.Equal(t, wire.OK, c.call(tc.op, tc.req, &resp), tc.name)
		require.Equal(t, tc.wantPath, resp.Path, tc.name)
		require.Equal(t, tc.wantOwner, resp.Stat.EphemeralOwner, tc.name)
		var got wire.GetDataResponse
		require.Equal(t, wire.OK, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: resp.Path}, &got), tc.name)
		require.Equal(t, got.Stat, resp.Stat, "%s: create2's Stat is the node's", tc.name)
	}

	bad := []struct {
		name string
		op   wire.OpCode
		req  wire.Record
	}{
		{"createTTL zero ttl", wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/b2", ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistentWithTTL}},
		{"createTTL ttl too large", wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/b3", ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistentWithTTL, TTL: wire.MaxTTL + 1}},
		{"createTTL non-TTL mode", wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/b4", ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistent, TTL: 1000}},
		{"TTL mode with plain create", wire.OpCreate, &wire.CreateRequest{Path: "/b5", ACL: wire.OpenACLUnsafe,
			Flags: wire.ModePersistentWithTTL}},
		{"unknown create mode", wire.OpCreate, &wire.CreateRequest{Path: "/b6", ACL: wire.OpenACLUnsafe, Flags: 7}},
	}
	for _, tc := range bad {
		require.Equal(t, wire.ErrBadArguments, c.call(tc.op, tc.req, nil), tc.name)
	}
}

func TestMultiRead(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/m", []byte("data"), wire.ModePersistent)
	c.create("/m/a", nil, wire.ModePersistent)
	c.create("/m/b", nil, wire.ModePersistent)
	req := &wire.MultiRequest{Ops: []wire.MultiOp{
		{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: "/m"}},
		{Op: wire.OpGetChildren, Req: &wire.PathWatchRequest{Path: "/m"}},
		{Op: wire.OpGetData, Req: &wire.PathWatchRequest{Path: "/missing"}},
		{Op: wire.OpGetChildren, Req: &wire.PathWatchRequest{Path: "/m/a"}},
	}}
	var resp wire.MultiResponse
	require.Equal(t, wire.OK, c.call(wire.OpMultiRead, req, &resp))
	require.Len(t, resp.Results, 4)

	require.Equal(t, wire.OpGetData, resp.Results[0].Op)
	gd := resp.Results[0].Resp.(*wire.GetDataResponse)
	require.Equal(t, []byte("data"), gd.Data)
	require.EqualValues(t, 2, gd.Stat.NumChildren)

	require.Equal(t, wire.OpGetChildren, resp.Results[1].Op)
	require.ElementsMatch(t, []string{"a", "b"}, resp.Results[1].Resp.(*wire.GetChildrenResponse).Children)

	require.Equal(t, wire.OpError, resp.Results[2].Op, "a failed sub-read is an error result; the others succeed")
	require.Equal(t, wire.ErrNoNode, resp.Results[2].Err)

	require.Equal(t, wire.OpGetChildren, resp.Results[3].Op)
	require.Empty(t, resp.Results[3].Resp.(*wire.GetChildrenResponse).Children)
}

func TestConnectResponseMirrorsReadOnlyByte(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	for _, withByte := range []bool{false, true} {
		c := dialRaw(t, srv.Addr())
		req := wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, wire.PasswordSize), HasReadOnly: withByte}
		frame := encodeFrame(nil, &req)
		wantReq := wire.ConnectRequestSize
		if withByte {
			wantReq++
		}
		require.Len(t, frame, 4+wantReq)
		c.write(frame)
		resp, err := c.readFrame()
		require.NoError(t, err)
		// protocolVersion, timeOut, sessionId, passwd (4+16), [readOnly]
		want := 4 + 4 + 8 + 4 + wire.PasswordSize
		if withByte {
			want++
		}
		require.Len(t, resp, want, "readOnly byte present=%v", withByte)
		c.resp = wire.ConnectResponse{}
		require.NoError(t, c.resp.Decode(wire.NewDecoder(resp)))
		require.Equal(t, withByte, c.resp.HasReadOnly)
		require.False(t, c.resp.ReadOnly)
		c.create("/ro-"+map[bool]string{false: "no", true: "yes"}[withByte], nil, wire.ModeEphemeral)
	}
}

// TestWatchReplyBeforeItsNotification: the reply that arms a watch always
// reaches the client before any notification of that watch. Clients
// register the watcher when the reply arrives; a notification overtaking
// it would be lost and the client would wait forever. A writer changes
// the node as fast as it can while the watcher re-arms, again and again.
func TestWatchReplyBeforeItsNotification(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	w := connectRaw(t, srv)
	w.create("/x", nil, wire.ModePersistent)
	x := connectRaw(t, srv)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { // keep 8 setData requests in flight, all the time
		defer close(done)
		frame := requestFrame(1, wire.OpSetData, &wire.SetDataRequest{Path: "/x", Data: []byte("v"), Version: -1})
		for range 8 {
			if _, err := x.nc.Write(frame); err != nil {
				return
			}
		}
		for {
			if _, err := x.readFrame(); err != nil {
				return
			}
			select {
			case <-stop:
				return
			default:
			}
			if _, err := x.nc.Write(frame); err != nil {
				return
			}
		}
	}()
	defer func() {
		close(stop)
		_ = x.nc.Close()
		<-done
	}()

	ops := []struct {
		op  wire.OpCode
		req wire.Record
	}{
		{wire.OpGetData, &wire.PathWatchRequest{Path: "/x", Watch: true}},
		{wire.OpExists, &wire.PathWatchRequest{Path: "/x", Watch: true}},
	}
	for i := range 300 {
		o := ops[i%len(ops)]
		xid := w.send(o.op, o.req)
		h, _ := w.next()
		require.Equal(t, xid, h.Xid, "round %d: a notification came before the reply that armed its watch", i)
		require.Equal(t, wire.OK, h.Err)
		h, d := w.next() // the watch fires once
		require.Equal(t, wire.XidNotification, h.Xid)
		require.Equal(t, ev(wire.EventNodeDataChanged, "/x"), decodeEvent(t, d))
	}
}
