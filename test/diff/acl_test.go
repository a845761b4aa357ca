package diff_test

import (
	"crypto/sha1"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// digestID is ZooKeeper's digest id of "user:password", computed here
// independently of both servers.
func digestID(user, password string) wire.Id {
	sum := sha1.Sum([]byte(user + ":" + password))
	return wire.Id{Scheme: "digest", ID: user + ":" + base64.StdEncoding.EncodeToString(sum[:])}
}

func acl(perms wire.Perm, scheme, id string) wire.ACL {
	return wire.ACL{Perms: perms, ID: wire.Id{Scheme: scheme, ID: id}}
}

var (
	alice = digestID("alice", "secret")
	bob   = digestID("bob", "pw")
)

// TestACLValidation: which ACL lists create and setACL accept (fixupACL):
// schemes, ids, perms, duplicates, and the auth scheme's expansion.
func TestACLValidation(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		anon, a, ab := r.conn("anon"), r.conn("alice"), r.conn("alice+bob")
		r.auth(a, "digest", "alice:secret")
		r.auth(ab, "digest", "alice:secret")
		r.auth(ab, "digest", "bob:pw")
		r.create(anon, "/v", "", wire.ModePersistent)
		cases := [][]wire.ACL{
			{},
			{acl(wire.PermAll, "world", "anyone"), acl(wire.PermAll, "world", "anyone")},
			{acl(wire.PermRead, "world", "anyone"), acl(wire.PermAll, "world", "anyone")},
			{acl(0, "world", "anyone")},
			{acl(wire.PermAll|64, "world", "anyone")},
			{acl(-1, "world", "anyone")},
			{acl(wire.PermAll, "world", "someone")},
			{acl(wire.PermAll, "world", "")},
			{acl(wire.PermAll, "World", "anyone")},
			{acl(wire.PermAll, "digest", "alice")},
			{acl(wire.PermAll, "digest", "alice:hash")},
			{acl(wire.PermAll, "digest", "alice:hash:more")},
			{acl(wire.PermAll, "digest", "alice:hash:")},
			{acl(wire.PermAll, "digest", ":hash")},
			{acl(wire.PermAll, "digest", "alice:")},
			{acl(wire.PermAll, "digest", "")},
			{acl(wire.PermAll, "ip", "127.0.0.1")},
			{acl(wire.PermAll, "ip", "127.0.0.0/8")},
			{acl(wire.PermAll, "ip", "10.0.0.0/8")},
			{acl(wire.PermAll, "ip", "1.2.3.4/32")},
			{acl(wire.PermAll, "ip", "1.2.3.4/33")},
			{acl(wire.PermAll, "ip", "1.2.3.4/-1")},
			{acl(wire.PermAll, "ip", "1.2.3.4/")},
			{acl(wire.PermAll, "ip", "1.2.3.4/x")},
			{acl(wire.PermAll, "ip", "1.2.3")},
			{acl(wire.PermAll, "ip", "300.1.1.1")},
			{acl(wire.PermAll, "ip", "localhost")},
			{acl(wire.PermAll, "ip", "")},
			{acl(wire.PermAll, "sasl", "user")},
			{acl(wire.PermAll, "super", "x")},
			{acl(wire.PermAll, "nosuch", "x")},
			{acl(wire.PermAll, "", "")},
			{acl(wire.PermAll, "world", "anyone"), acl(wire.PermAll, "nosuch", "x")},
			{acl(wire.PermAll, "auth", "")},
			{acl(wire.PermAll, "auth", "whatever")},
			{acl(wire.PermRead, "auth", ""), acl(wire.PermAll, "world", "anyone")},
		}
		for i, l := range cases {
			for _, c := range []*conn{anon, a, ab} {
				path := fmt.Sprintf("/v/%s-%02d", c.name, i)
				if res := r.createACL(c, path, l); res.code == wire.OK {
					r.getACL(c, path)
					r.setACL(c, path, l, -1)
				}
			}
		}
		r.note("setACL validates the same way")
		r.setACL(anon, "/v", nil, -1)
		r.setACL(anon, "/v", []wire.ACL{acl(wire.PermAll, "auth", "")}, -1)
		r.setACL(anon, "/v", []wire.ACL{acl(wire.PermAll, "digest", "nocolon")}, -1)
		r.setACL(a, "/v", []wire.ACL{acl(wire.PermAll, "auth", ""), acl(wire.PermRead, "world", "anyone")}, -1)
		r.getACL(a, "/v")
	})
}

// TestX509ACLScheme: Paddock always accepts x509 ids in ACLs (its TLS
// listener turns client certificates into x509 identities); a ZooKeeper
// without the x509 authentication provider configured, as the oracle,
// refuses them.
func TestX509ACLScheme(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.doDiffer(c, "x509 provider", wire.ErrInvalidACL, wire.OK, wire.OpCreate2,
			&wire.CreateRequest{Path: r.p("/x509"), ACL: []wire.ACL{acl(wire.PermAll, "x509", "CN=app")}})
	})
}

// TestACLEnforcement: what each permission allows, for each scheme.
func TestACLEnforcement(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		anon, a, b, su := r.conn("anon"), r.conn("alice"), r.conn("bob"), r.conn("super")
		r.auth(a, "digest", "alice:secret")
		r.auth(b, "digest", "bob:pw")
		r.auth(su, "digest", superAuth)
		for _, c := range []*conn{anon, a, b, su} {
			r.do(c, wire.OpWhoAmI, nil)
		}
		r.create(anon, "/e", "", wire.ModePersistent)

		r.note("digest: only alice")
		r.createACL(anon, "/e/alice", []wire.ACL{{Perms: wire.PermAll, ID: alice}})
		for _, c := range []*conn{anon, b, a, su} {
			r.get(c, "/e/alice", false)
			r.children(c, "/e/alice", false)
			r.do(c, wire.OpGetChildren, &wire.PathWatchRequest{Path: r.p("/e/alice")})
			r.do(c, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: r.p("/e/alice")})
			r.getACL(c, "/e/alice")
			r.setData(c, "/e/alice", c.name, -1)
			r.create(c, "/e/alice/"+c.name, "", wire.ModePersistent)
			r.multi(c, r.mCheck("/e/alice", -1))
			r.multiRead(c, r.mGetData("/e/alice"), r.mGetChildren("/e/alice"))
			r.exists(c, "/e/alice/missing", false)
		}
		r.note("super: everything, whatever the ACL")
		r.setACL(su, "/e/alice", []wire.ACL{{Perms: wire.PermRead, ID: bob}}, -1)
		r.get(b, "/e/alice", false)
		r.get(a, "/e/alice", false)
		r.del(a, "/e/alice/alice", -1)
		r.del(su, "/e/alice/alice", -1)
		r.del(su, "/e/alice/super", -1)

		r.note("getACL: READ or ADMIN; digests masked without ADMIN")
		mixed := []wire.ACL{{Perms: wire.PermAll, ID: alice}, acl(wire.PermRead, "world", "anyone"), {Perms: wire.PermAdmin, ID: bob}}
		r.createACL(a, "/e/mixed", mixed)
		r.createACL(a, "/e/adminonly", []wire.ACL{acl(wire.PermAdmin, "world", "anyone"), {Perms: wire.PermRead, ID: alice}})
		for _, c := range []*conn{anon, a, b, su} {
			r.getACL(c, "/e/mixed")
			r.getACL(c, "/e/adminonly")
			r.get(c, "/e/adminonly", false)
		}

		r.note("auth scheme: expands to every digest identity of the caller")
		ab := r.conn("alice+bob")
		r.auth(ab, "digest", "alice:secret")
		r.auth(ab, "digest", "bob:pw")
		r.auth(ab, "digest", "alice:secret")
		r.auth(ab, "ip", "")
		r.do(ab, wire.OpWhoAmI, nil)
		r.createACL(ab, "/e/both", []wire.ACL{acl(wire.PermRead|wire.PermWrite, "auth", "")})
		r.getACL(ab, "/e/both")
		r.get(b, "/e/both", false)
		r.setData(a, "/e/both", "a", -1)
		r.createACL(su, "/e/su", []wire.ACL{acl(wire.PermAll, "auth", "")})
		r.getACL(su, "/e/su")
		r.createACL(anon, "/e/anon", []wire.ACL{acl(wire.PermAll, "auth", "")})

		r.note("ip")
		for _, id := range []string{"127.0.0.1", "127.0.0.0/8", "10.0.0.0/8", "127.0.0.2", "0.0.0.0/0"} {
			p := "/e/ip-" + id
			if id == "127.0.0.0/8" || id == "10.0.0.0/8" || id == "0.0.0.0/0" {
				p = "/e/ip-net" + id[:len(id)-2]
			}
			r.createACL(anon, p, []wire.ACL{acl(wire.PermAll, "ip", id)})
			r.get(anon, p, false)
			r.setData(a, p, "", -1)
		}

		r.note("each permission alone")
		perms := []wire.Perm{wire.PermRead, wire.PermWrite, wire.PermCreate, wire.PermDelete, wire.PermAdmin}
		for _, perm := range perms {
			p := "/e/only-" + perm.String()
			r.createACL(su, p, []wire.ACL{acl(perm, "world", "anyone")})
			r.create(su, p+"/kid", "", wire.ModePersistent)
			r.get(anon, p, false)
			r.do(anon, wire.OpGetChildren, &wire.PathWatchRequest{Path: r.p(p)})
			r.children(anon, p, false)
			r.do(anon, wire.OpGetAllChildrenNumber, &wire.PathRequest{Path: r.p(p)})
			r.getACL(anon, p)
			r.multi(anon, r.mCheck(p, -1))
			r.multi(anon, r.mCheck(p, 7))
			r.multiRead(anon, r.mGetData(p), r.mGetChildren(p))
			r.setData(anon, p, "w", -1)
			r.setData(anon, p, "w", 9)
			r.create(anon, p+"/new", "", wire.ModePersistent)
			r.create(anon, p+"/kid", "", wire.ModePersistent)
			r.del(anon, p+"/kid", 5)
			r.del(anon, p+"/kid", -1)
			r.del(anon, p+"/missing", -1)
			r.exists(anon, p+"/missing", false)
			r.setACL(anon, p, []wire.ACL{acl(perm, "world", "anyone")}, 3)
			r.setACL(anon, p, []wire.ACL{acl(perm, "world", "anyone")}, -1)
			r.getACL(su, p)
		}
	})
}

// TestExistsNeedsRead: exists on an existing node the caller may not read.
// ZooKeeper 3.8.0 answers it (and arms the watch); 3.8.4 and 3.9.2 made it
// NoAuth without a watch. Paddock follows the fixed behaviour. The change
// itself is notified to neither (see TestNotificationsNeedRead).
func TestExistsNeedsRead(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner, anon := r.conn("owner"), r.conn("anon")
		r.create(owner, "/x", "", wire.ModePersistent)
		r.createACL(owner, "/x/hidden", []wire.ACL{acl(wire.PermWrite, "world", "anyone")})
		r.doDiffer(anon, "exists needs READ since 3.8.4", wire.OK, wire.ErrNoAuth, wire.OpExists,
			&wire.PathWatchRequest{Path: r.p("/x/hidden"), Watch: true})
		r.setData(owner, "/x/hidden", "changed", -1)
		r.events(anon)
		r.exists(anon, "/x/hidden/missing", true)
		r.create(owner, "/x/hidden/missing", "", wire.ModePersistent)
		r.events(anon)
	})
}

// TestNotificationsNeedRead: a watcher without READ on the changed node is
// not notified, whatever its watch (CVE-2024-23944, fixed upstream in
// 3.8.4/3.9.2). Debian's 3.8.0 (3.8.0-11+deb12u2) carries that fix, so
// the oracle and Paddock agree.
func TestNotificationsNeedRead(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner, w := r.conn("owner"), r.conn("w")
		r.auth(owner, "digest", "alice:secret")
		secret := []wire.ACL{{Perms: wire.PermAll, ID: alice}}
		r.create(owner, "/n", "", wire.ModePersistent)
		r.addWatch(w, "/n", wire.AddWatchPersistentRecursive)
		r.exists(w, "/n/hidden", true)
		r.children(w, "/n", true)
		r.createACL(owner, "/n/hidden", secret)
		r.events(w)
		r.setData(owner, "/n/hidden", "x", -1)
		r.create(owner, "/n/hidden/kid", "", wire.ModePersistent)
		r.events(w)
		r.setData(owner, "/n", "visible", -1)
		r.events(w)
		r.del(owner, "/n/hidden/kid", -1)
		r.del(owner, "/n/hidden", -1)
		r.events(w)
		r.note("a one-shot watch armed while readable, fired after the ACL changed")
		r.create(owner, "/n/later", "", wire.ModePersistent)
		r.get(w, "/n/later", true)
		r.setACL(owner, "/n/later", secret, -1)
		r.setData(owner, "/n/later", "x", -1)
		r.events(w)
	})
}

// TestAuthPackets: the answers to auth packets with each scheme.
func TestAuthPackets(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		for _, tc := range []struct{ scheme, cred string }{
			{"digest", "alice:secret"}, {"digest", "nocolon"}, {"digest", ""}, {"digest", "a:b:c"},
			{"ip", ""}, {"ip", "10.1.2.3"}, {"world", "anyone"}, {"super", "x"}, {"sasl", "x"}, {"x509", "x"}, {"nosuch", "x"}, {"", ""},
		} {
			c := r.conn(tc.scheme + ":" + tc.cred)
			r.auth(c, tc.scheme, tc.cred)
			r.do(c, wire.OpWhoAmI, nil)
			r.note("still open: %v", c.alive())
		}
	})
}
