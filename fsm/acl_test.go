package fsm

import (
	"slices"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func TestCheckACL(t *testing.T) {
	alice := wire.Id{Scheme: "digest", ID: "alice:hash"}
	ip := wire.Id{Scheme: "ip", ID: "10.1.2.3"}
	cases := []struct {
		name string
		acl  []wire.ACL
		perm wire.Perm
		auth []wire.Id
		want bool
	}{
		{"world anyone", wire.OpenACLUnsafe, wire.PermWrite, nil, true},
		{"read-only world", wire.ReadACLUnsafe, wire.PermWrite, nil, false},
		{"empty acl", nil, wire.PermAdmin, nil, true},
		{"digest match", []wire.ACL{{Perms: wire.PermRead, ID: alice}}, wire.PermRead, []wire.Id{ip, alice}, true},
		{"digest perm missing", []wire.ACL{{Perms: wire.PermRead, ID: alice}}, wire.PermWrite, []wire.Id{alice}, false},
		{"digest other user", []wire.ACL{{Perms: wire.PermAll, ID: alice}}, wire.PermRead, []wire.Id{{Scheme: "digest", ID: "bob:h"}}, false},
		{"ip exact", []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "10.1.2.3"}}}, wire.PermRead, []wire.Id{ip}, true},
		{"ip cidr", []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "10.1.0.0/16"}}}, wire.PermRead, []wire.Id{ip}, true},
		{"ip outside cidr", []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "ip", ID: "10.2.0.0/16"}}}, wire.PermRead, []wire.Id{ip}, false},
		{"super", []wire.ACL{{Perms: wire.PermRead, ID: alice}}, wire.PermAdmin, []wire.Id{SuperID}, true},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, CheckACL(tc.acl, tc.perm, tc.auth), tc.name)
	}
	require.Equal(t, []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "alice:x"}}},
		MaskDigests([]wire.ACL{{Perms: wire.PermAll, ID: alice}}))
}

// TestMaskDigestsLineTerminators: ZooKeeper masks with Java's
// replaceAll(":.*", ":x"), whose "." stops at a line terminator; every
// match is replaced (checked against ZooKeeper 3.8 by test/diff's
// TestAuthSchemeCorners).
func TestMaskDigestsLineTerminators(t *testing.T) {
	for id, want := range map[string]string{
		"alice:hash":            "alice:x",
		":hash":                 ":x",
		"nocolon":               "nocolon",
		"alice:ha\nsh":          "alice:x\nsh",
		"alice:a\nb::":          "alice:x\nb:x",
		"alice:a\r\nb":          "alice:x\r\nb",
		"alice:a\u2028b":        "alice:x\u2028b",
		"alice:a\u0085b\u2029c": "alice:x\u0085b\u2029c",
		"alice:a\u2027b\tc":     "alice:x",
	} {
		got := MaskDigests([]wire.ACL{{Perms: wire.PermRead, ID: wire.Id{Scheme: "digest", ID: id}}})
		require.Equal(t, want, got[0].ID.ID, "%q", id)
	}
	ip := []wire.ACL{{Perms: wire.PermRead, ID: wire.Id{Scheme: "ip", ID: "1.2.3.4:x"}}}
	require.Equal(t, ip, MaskDigests(ip))
}

func TestApplyChecksACLs(t *testing.T) {
	h := newHarness(t)
	s := h.session()
	alice := wire.Id{Scheme: "digest", ID: "alice:hash"}
	aliceOnly := []wire.ACL{{Perms: wire.PermAll, ID: alice}}
	readOnly := wire.ReadACLUnsafe
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpCreate, Path: "/priv", ACL: aliceOnly}).Err)
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpCreate, Path: "/priv/c", ACL: aliceOnly}).Err)
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpCreate, Path: "/ro", ACL: readOnly}).Err)
	anon := []wire.Id{{Scheme: "ip", ID: "127.0.0.1"}}
	as := func(auth []wire.Id, op Op) wire.Code {
		r := h.apply(&Command{Type: CmdOps, Session: s, Auth: auth, Ops: []Op{op}})
		return r.Err
	}
	open := wire.OpenACLUnsafe
	// Precedence: parent missing before auth; auth before node missing/version.
	require.Equal(t, wire.ErrNoNode, as(anon, Op{Type: wire.OpCreate, Path: "/nope/x", ACL: open}))
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpCreate, Path: "/priv/x", ACL: open}))
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpCreate, Path: "/priv/c", ACL: open}), "NoAuth before NodeExists")
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpDelete, Path: "/priv/missing", Version: -1}), "DELETE on the parent first")
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpSetData, Path: "/priv", Version: 7}), "NoAuth before BadVersion")
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpSetACL, Path: "/ro", ACL: open, Version: -1}))
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpCheck, Path: "/priv", Version: -1}))
	require.Equal(t, wire.ErrNoAuth, as(anon, Op{Type: wire.OpSetData, Path: "/ro", Version: -1}))
	require.Equal(t, wire.OK, as([]wire.Id{alice}, Op{Type: wire.OpSetData, Path: "/priv", Version: -1}))
	require.Equal(t, wire.OK, as([]wire.Id{SuperID}, Op{Type: wire.OpSetACL, Path: "/ro", ACL: open, Version: -1}))
	// Inside a multi the failing op reports NoAuth and nothing applies.
	r := h.apply(&Command{Type: CmdOps, Session: s, Auth: anon, Multi: true, Ops: []Op{
		createOp("/m1"), {Type: wire.OpDelete, Path: "/priv/c", Version: -1}}})
	require.Equal(t, wire.ErrNoAuth, r.Ops[1].Err)
	_, ok := h.f.Exists("/m1")
	require.False(t, ok)
}

// TestValidateACL: which ids ZooKeeper's fixupACL accepts with its default
// providers (world, digest, ip) plus x509, which Paddock's TLS listener
// authenticates.
func TestValidateACL(t *testing.T) {
	id := func(scheme, id string) []wire.ACL {
		return []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: scheme, ID: id}}}
	}
	cases := []struct {
		acl  []wire.ACL
		want wire.Code
	}{
		{nil, wire.ErrInvalidACL},
		{id("world", "anyone"), wire.OK},
		{[]wire.ACL{{Perms: 0, ID: wire.AnyoneID}}, wire.OK}, // perms are not checked
		{id("world", "someone"), wire.ErrInvalidACL},
		{id("digest", "alice:hash"), wire.OK},
		{id("digest", "alice:hash:"), wire.OK}, // Java's split drops trailing empty fields
		{id("digest", "alice:hash::"), wire.OK},
		{id("digest", ":hash"), wire.OK},
		{id("digest", "alice:"), wire.ErrInvalidACL},
		{id("digest", "alice"), wire.ErrInvalidACL},
		{id("digest", "a:b:c"), wire.ErrInvalidACL},
		{id("digest", ""), wire.ErrInvalidACL},
		{id("ip", "10.0.0.0/8"), wire.OK},
		{id("ip", "1.2.3.4/33"), wire.ErrInvalidACL},
		{id("x509", "CN=app"), wire.OK},
		{id("x509", ""), wire.ErrInvalidACL},
		{id("sasl", "user"), wire.ErrInvalidACL},
		{id("super", "x"), wire.ErrInvalidACL},
		{id("auth", ""), wire.ErrInvalidACL},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, ValidateACL(tc.acl), "%+v", tc.acl)
	}
}

// TestACLInterning checks that interning tells apart lists whose fields
// only differ in where one string ends and the next begins, nil from
// empty, and that looking up a known list allocates nothing.
func TestACLInterning(t *testing.T) {
	tab := newACLTable()
	lists := [][]wire.ACL{
		nil,
		{},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "worl", ID: "danyone"}}},
		{{Perms: wire.PermRead, ID: wire.Id{Scheme: "world", ID: "anyone"}}},
		{{Perms: wire.PermAll, ID: wire.Id{Scheme: "world", ID: "anyone"}},
			{Perms: wire.PermRead, ID: wire.Id{Scheme: "digest", ID: "u:x"}}},
	}
	refs := map[uint32]bool{}
	for _, l := range lists {
		r := tab.ref(l)
		require.False(t, refs[r], "list %v shares a reference", l)
		refs[r] = true
		require.Equal(t, l, tab.get(r))
		require.Equal(t, r, tab.ref(slices.Clone(l)), "an equal list gets the same reference")
	}
	known := lists[5]
	require.Zero(t, testing.AllocsPerRun(100, func() { tab.ref(known) }))
}
