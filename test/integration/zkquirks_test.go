package integration_test

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// ZooKeeper behaviours found by the differential suite (test/diff), pinned
// here so that they are checked without the oracle too.

// TestEmptyPathReadsTheRoot: ZooKeeper's tree holds the root under "" as
// well as "/", so reads of "" answer for the root, and getAllChildrenNumber
// of "" counts every path starting with "/": the root too.
func TestEmptyPathReadsTheRoot(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/a", nil, wire.ModePersistent)
	var root, empty wire.GetChildrenResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetChildren, &wire.PathWatchRequest{Path: "/"}, &root))
	require.Equal(t, wire.OK, c.call(wire.OpGetChildren, &wire.PathWatchRequest{Path: ""}, &empty))
	require.Equal(t, root, empty)
	require.Equal(t, wire.OK, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: ""}, &wire.GetDataResponse{}))
	require.Equal(t, wire.OK, c.call(wire.OpExists, &wire.PathWatchRequest{Path: ""}, &wire.StatResponse{}))
	require.Equal(t, wire.OK, c.call(wire.OpGetACL, &wire.PathRequest{Path: ""}, &wire.GetACLResponse{}))
	var all, slash wire.GetAllChildrenNumberResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: ""}, &all))
	require.Equal(t, wire.OK, c.call(wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: "/"}, &slash))
	require.Equal(t, slash.TotalNumber+1, all.TotalNumber)
}

// TestReadsDoNotValidatePaths: only exists refuses a NUL; other reads of a
// malformed path find no node.
func TestReadsDoNotValidatePaths(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	for _, p := range []string{"/a\x00", "/a/", "//", "/."} {
		require.Equal(t, wire.ErrNoNode, c.call(wire.OpGetData, &wire.PathWatchRequest{Path: p}, nil), "%q", p)
		require.Equal(t, wire.ErrNoNode, c.call(wire.OpGetChildren2, &wire.PathWatchRequest{Path: p}, nil), "%q", p)
	}
	require.Equal(t, wire.ErrBadArguments, c.call(wire.OpExists, &wire.PathWatchRequest{Path: "/a\x00"}, nil))
	require.Equal(t, wire.ErrNoNode, c.call(wire.OpExists, &wire.PathWatchRequest{Path: "/a/"}, nil))
}

// TestAddWatchUnknownMode: ZooKeeper answers MarshallingError and arms
// nothing.
func TestAddWatchUnknownMode(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	for _, mode := range []wire.AddWatchMode{2, -1} {
		require.Equal(t, wire.ErrMarshallingError, c.call(wire.OpAddWatch, &wire.AddWatchRequest{Path: "/w", Mode: mode}, nil))
	}
	require.Equal(t, wire.ErrNoWatcher, c.call(wire.OpCheckWatches, &wire.WatchesRequest{Path: "/w", Type: wire.WatcherAny}, nil))
	c.create("/w", nil, wire.ModePersistent)
	require.Empty(t, c.barrier())
}

// TestGetEphemeralsPrefixNotTrimmed: a blank or "/" prefix (once trimmed)
// selects every ephemeral; any other prefix is matched as sent.
func TestGetEphemeralsPrefixNotTrimmed(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	c.create("/e", nil, wire.ModeEphemeral)
	get := func(prefix string) []string {
		var resp wire.GetEphemeralsResponse
		require.Equal(t, wire.OK, c.call(wire.OpGetEphemerals, &wire.PathRequest{Path: prefix}, &resp))
		return resp.Ephemerals
	}
	for _, p := range []string{"", " ", " / ", "\t/", "/", "/e"} {
		require.Equal(t, []string{"/e"}, get(p), "%q", p)
	}
	for _, p := range []string{"/e ", " /e"} {
		require.Empty(t, get(p), "%q", p)
	}
}

// TestDuplicateACLEntriesRemoved: as ZooKeeper's fixupACL, before the
// "auth" entries are expanded.
func TestDuplicateACLEntriesRemoved(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	read := wire.ACL{Perms: wire.PermRead, ID: wire.AnyoneID}
	acl := []wire.ACL{wire.OpenACLUnsafe[0], read, wire.OpenACLUnsafe[0], read}
	require.Equal(t, wire.OK, c.call(wire.OpCreate, &wire.CreateRequest{Path: "/d", ACL: acl}, &wire.CreateResponse{}))
	var got wire.GetACLResponse
	require.Equal(t, wire.OK, c.call(wire.OpGetACL, &wire.PathRequest{Path: "/d"}, &got))
	require.Equal(t, []wire.ACL{wire.OpenACLUnsafe[0], read}, got.ACL)
	require.Equal(t, wire.OK, c.call(wire.OpSetACL, &wire.SetACLRequest{Path: "/d", ACL: acl, Version: -1}, &wire.StatResponse{}))
	require.Equal(t, wire.OK, c.call(wire.OpGetACL, &wire.PathRequest{Path: "/d"}, &got))
	require.Equal(t, []wire.ACL{wire.OpenACLUnsafe[0], read}, got.ACL)
}

// TestMultiCreateWithContainerFlags: inside a multi, ZooKeeper types a
// create by its flags: mode CONTAINER answers as a createContainer
// (a create2 result with Stat).
func TestMultiCreateWithContainerFlags(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connectRaw(t, srv)
	var resp wire.MultiResponse
	require.Equal(t, wire.OK, c.call(wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: "/c", ACL: wire.OpenACLUnsafe, Flags: wire.ModeContainer}}}}, &resp))
	require.Len(t, resp.Results, 1)
	require.Equal(t, wire.OpCreate2, resp.Results[0].Op)
	require.Equal(t, "/c", resp.Results[0].Resp.(*wire.Create2Response).Path)
}
