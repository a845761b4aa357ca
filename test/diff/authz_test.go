package diff_test

import (
	"fmt"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// reattach opens a new connection to c's session, as a client does after
// a lost connection (recorded like conn, under name; on the next server
// where there are several).
func (r *run) reattach(c *conn, name string) *conn {
	r.t.Helper()
	k, err := dialSession(r, name, r.nextAddr(), c.sid, c.passwd)
	if err != nil {
		r.t.Fatalf("re-attaching %s to %s's session: %v", name, c.name, err)
	}
	r.conns = append(r.conns, k)
	return k
}

// TestACLUncheckedOps: the requests ZooKeeper answers whatever the
// node's ACL (sync, addWatch, getEphemerals, checkWatches, removeWatches,
// setWatches, whoAmI), on a node only alice may touch, and what the
// watches they set deliver.
func TestACLUncheckedOps(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner, anon := r.conn("owner"), r.conn("anon")
		r.auth(owner, "digest", "alice:secret")
		secret := []wire.ACL{{Perms: wire.PermAll, ID: alice}}
		r.create(owner, "/u", "", wire.ModePersistent)
		r.createACL(owner, "/u/s", secret)
		r.do(owner, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/u/s/e"), ACL: secret, Flags: wire.ModeEphemeral})
		for _, c := range []*conn{anon, owner} {
			r.do(c, wire.OpSync, &wire.PathRequest{Path: r.p("/u/s")})
			r.do(c, wire.OpSync, &wire.PathRequest{Path: r.p("/u/s/missing")})
			r.do(c, wire.OpGetEphemerals, &wire.PathRequest{Path: r.p("/u/s")})
			r.do(c, wire.OpWhoAmI, nil)
		}
		r.addWatch(anon, "/u/s", wire.AddWatchPersistent)
		r.addWatch(anon, "/u/s/e", wire.AddWatchPersistentRecursive)
		r.do(anon, wire.OpCheckWatches, &wire.WatchesRequest{Path: r.p("/u/s"), Type: wire.WatcherAny})
		r.setData(owner, "/u/s", "x", -1)
		r.setData(owner, "/u/s/e", "x", -1)
		r.events(anon)
		r.do(anon, wire.OpRemoveWatches, &wire.WatchesRequest{Path: r.p("/u/s"), Type: wire.WatcherAny})
		r.events(anon)

		r.note("setWatches on unreadable nodes, relative to zxid 0")
		w := r.conn("w")
		r.do(w, wire.OpSetWatches, &wire.SetWatches{RelativeZxid: 0,
			DataWatches: []string{r.p("/u/s")}, ExistWatches: []string{r.p("/u/s/new")}, ChildWatches: []string{r.p("/u/s")}})
		r.events(w)
		r.createACL(owner, "/u/s/new", secret)
		r.events(w)
	})
}

// TestMultiNoAuth: a multi whose op lacks its permission fails as a whole
// with NoAuth at that op, whatever the op's type and position, and later
// ops see the ACLs of nodes earlier ops created.
func TestMultiNoAuth(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner, anon, w := r.conn("owner"), r.conn("anon"), r.conn("w")
		r.create(owner, "/m", "", wire.ModePersistent)
		r.create(owner, "/m/ok", "", wire.ModePersistent)
		for _, n := range []struct {
			rel  string
			perm wire.Perm
		}{{"/m/nc", wire.PermCreate}, {"/m/nd", wire.PermDelete}, {"/m/nw", wire.PermWrite}, {"/m/nr", wire.PermRead}} {
			r.create(owner, n.rel, "", wire.ModePersistent)
			r.create(owner, n.rel+"/k", "", wire.ModePersistent)
			r.setACL(owner, n.rel, []wire.ACL{{Perms: wire.PermAll &^ n.perm, ID: wire.AnyoneID}}, 0)
		}
		r.addWatch(w, "/m", wire.AddWatchPersistentRecursive)

		ok := r.mSetData("/m/ok", "x", -1)
		for _, bad := range []wire.MultiOp{
			r.mCreate(wire.OpCreate, "/m/nc/x", "", wire.ModePersistent),
			r.mCreate(wire.OpCreate2, "/m/nc/x", "", wire.ModePersistent),
			r.mCreate(wire.OpCreateContainer, "/m/nc/x", "", wire.ModeContainer),
			{Op: wire.OpCreateTTL, Req: &wire.CreateTTLRequest{Path: r.p("/m/nc/x"), ACL: openACL, Flags: wire.ModePersistentWithTTL, TTL: 5000}},
			r.mCreate(wire.OpCreate, "/m/nc/k", "", wire.ModePersistent),
			r.mDelete("/m/nd/k", -1),
			r.mDelete("/m/nd/missing", -1),
			r.mDelete("/m/nd/k", 7),
			r.mSetData("/m/nw", "x", -1),
			r.mSetData("/m/nw", "x", 7),
			r.mCheck("/m/nr", -1),
			r.mCheck("/m/nr", 7),
		} {
			r.multi(anon, bad)
			r.multi(anon, ok, bad, ok)
			r.multi(anon, bad, r.mCheck("/m/missing", 0))
		}
		r.note("a failing create's InvalidACL comes before the parent's NoAuth")
		r.multi(anon, ok, wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: r.p("/m/nc/y"),
			ACL: []wire.ACL{acl(wire.PermAll, "auth", "")}}})
		r.note("later ops see the ACLs earlier ops gave")
		r.multi(anon, wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: r.p("/m/ok/p"),
			ACL: []wire.ACL{acl(wire.PermRead, "world", "anyone")}}}, r.mCreate(wire.OpCreate, "/m/ok/p/c", "", wire.ModePersistent))
		r.multi(anon, wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: r.p("/m/ok/p"),
			ACL: []wire.ACL{acl(wire.PermWrite, "world", "anyone")}}}, r.mSetData("/m/ok/p", "x", -1), r.mCheck("/m/ok/p", 1))
		r.multi(anon, wire.MultiOp{Op: wire.OpCreate, Req: &wire.CreateRequest{Path: r.p("/m/ok/q"),
			ACL: []wire.ACL{acl(wire.PermCreate, "world", "anyone")}}}, r.mCreate(wire.OpCreate, "/m/ok/q/c", "", wire.ModePersistent),
			r.mDelete("/m/ok/q/c", -1))
		r.multiRead(anon, r.mGetData("/m/nr"), r.mGetChildren("/m/nr"), r.mGetData("/m/nw"), r.mGetData("/m/missing"))
		r.events(w)
		r.children(owner, "/m/ok", false)
		r.get(owner, "/m/ok", false)
	})
}

// TestCreateKindsNeedCreate: createContainer and createTTL need CREATE on
// the parent, as create does, and validate the ACL first.
func TestCreateKindsNeedCreate(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner, anon := r.conn("owner"), r.conn("anon")
		r.create(owner, "/k", "", wire.ModePersistent)
		r.createACL(owner, "/k/nc", []wire.ACL{acl(wire.PermAll&^wire.PermCreate, "world", "anyone")})
		r.createACL(owner, "/k/oc", []wire.ACL{acl(wire.PermCreate, "world", "anyone")})
		for _, parent := range []string{"/k/nc", "/k/oc"} {
			for _, l := range [][]wire.ACL{openACL, {acl(wire.PermAll, "auth", "")}, {}} {
				r.do(anon, wire.OpCreateContainer, &wire.CreateRequest{Path: r.p(parent + "/c"), ACL: l, Flags: wire.ModeContainer})
				r.do(anon, wire.OpCreateTTL, &wire.CreateTTLRequest{Path: r.p(parent + "/t"), ACL: l, Flags: wire.ModePersistentWithTTL, TTL: 60000})
				r.do(anon, wire.OpCreate, &wire.CreateRequest{Path: r.p(parent + "/p"), ACL: l, Flags: wire.ModePersistentSequential})
			}
		}
		r.children(owner, "/k/oc", false)
	})
}

// TestSetACLVersions: setACL checks and bumps the aversion (also when the
// list is unchanged) and no other Stat field; getACL returns the node's
// Stat; errors come in ZooKeeper's order (InvalidACL, NoNode, NoAuth,
// BadVersion); the root and /zookeeper are checked like any node.
func TestSetACLVersions(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c, anon := r.conn("c"), r.conn("anon")
		r.create(c, "/a", "d", wire.ModePersistent)
		r.create(c, "/a/kid", "", wire.ModePersistent)
		r.getACL(c, "/a")
		r.setACL(c, "/a", openACL, 0)
		r.setACL(c, "/a", openACL, 0)
		r.setACL(c, "/a", openACL, 1)
		r.setACL(c, "/a", openACL, -1)
		r.setACL(c, "/a", openACL, 2)
		r.getACL(c, "/a")
		r.children(c, "/a", false)
		r.setACL(c, "/a", []wire.ACL{acl(wire.PermRead, "world", "anyone")}, 3)
		r.setACL(anon, "/a", openACL, 4)
		r.setACL(anon, "/a", openACL, 99)
		r.setACL(anon, "/a", nil, 99)
		r.setACL(anon, "/a/missing", openACL, 99)
		r.getACL(anon, "/a")
		for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota"} {
			res := anon.call(wire.OpSetACL, &wire.SetACLRequest{Path: p, ACL: openACL, Version: 987654})
			r.note("anon: setACL %s version=987654 -> %s", p, codeName(res.code))
			res = anon.call(wire.OpSetACL, &wire.SetACLRequest{Path: p, ACL: nil, Version: 987654})
			r.note("anon: setACL %s acl=null version=987654 -> %s", p, codeName(res.code))
		}
	})
}

// TestAuthFailedSession: a rejected auth packet closes the connection but
// not the session; identities belong to a connection, so a connection
// re-attached to the session has only its ip identity until it sends
// its credentials again.
func TestAuthFailedSession(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		c := r.conn("c")
		r.auth(c, "digest", "alice:secret")
		r.create(c, "/f", "", wire.ModePersistent)
		r.createACL(c, "/f/alice", []wire.ACL{{Perms: wire.PermAll, ID: alice}})
		r.do(c, wire.OpCreate2, &wire.CreateRequest{Path: r.p("/f/e"), ACL: openACL, Flags: wire.ModeEphemeral})
		r.auth(c, "nosuch", "x")
		r.note("c still open: %v", c.stillOpen())
		r.get(c, "/f/alice", false)

		k := r.reattach(c, "c-again")
		r.do(k, wire.OpWhoAmI, nil)
		r.exists(k, "/f/e", false)
		r.get(k, "/f/alice", false)
		r.auth(k, "digest", "alice:secret")
		r.get(k, "/f/alice", false)

		r.note("re-attaching while connected: the new connection has no credentials")
		k2 := r.reattach(k, "c-third")
		r.do(k2, wire.OpWhoAmI, nil)
		r.get(k2, "/f/alice", false)
		r.auth(k2, "ip", "")
		r.do(k2, wire.OpWhoAmI, nil)
	})
}

// TestAuthSchemeCorners: the auth scheme with only an ip identity, its
// expansion next to equal explicit entries, a digest id holding a
// plaintext password, and how getACL masks unusual digest ids for
// callers without ADMIN.
func TestAuthSchemeCorners(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		ipOnly, a, anon := r.conn("ip-only"), r.conn("alice"), r.conn("anon")
		r.auth(ipOnly, "ip", "")
		r.auth(a, "digest", "alice:secret")
		r.create(a, "/c", "", wire.ModePersistent)
		r.createACL(ipOnly, "/c/ip", []wire.ACL{acl(wire.PermAll, "auth", "")})
		r.createACL(a, "/c/dup", []wire.ACL{acl(wire.PermRead, "auth", ""), {Perms: wire.PermRead, ID: alice}})
		r.getACL(a, "/c/dup")
		r.createACL(a, "/c/two", []wire.ACL{acl(wire.PermRead, "auth", ""), acl(wire.PermWrite, "auth", "x")})
		r.getACL(a, "/c/two")
		r.setData(a, "/c/two", "w", -1)
		r.createACL(a, "/c/plain", []wire.ACL{acl(wire.PermAll, "digest", "alice:secret"), acl(wire.PermRead, "world", "anyone")})
		r.getACL(anon, "/c/plain")
		r.getACL(a, "/c/plain")
		r.setData(a, "/c/plain", "w", -1)
		// ZooKeeper masks with id.replaceAll(":.*", ":x"): Java's "." stops
		// at a line terminator, and every match is replaced.
		for i, id := range []string{":hash", "alice:ha\nsh", "alice:ha=sh", "alice::", "alice:a\nb::",
			"alice:a\u2028b", "alice:a\u0085b\u2029c", "alice:a\r\nb", "alice:\n", "alice:a\u2027b\tc"} {
			p := "/c/odd" + string(rune('a'+i))
			if r.createACL(a, p, []wire.ACL{acl(wire.PermAll, "digest", id), acl(wire.PermRead, "world", "anyone")}).code == wire.OK {
				r.getACL(anon, p)
			}
		}
	})
}

// TestDigestAuthNotUTF8: ZooKeeper's DigestAuthenticationProvider makes a
// Java String of the credentials (new String(authData), UTF-8, malformed
// input replaced by U+FFFD as OpenJDK's decoder does) before it hashes
// "user:password" and takes the user name, so credentials that are not
// UTF-8 give the identity of their decoded text: in whoAmI, in the auth
// scheme's expansion, and in the ACLs that identity may use.
func TestDigestAuthNotUTF8(t *testing.T) {
	t.Parallel()
	both(t, func(r *run) {
		owner := r.conn("owner")
		r.create(owner, "/d", "", wire.ModePersistent)
		for i, cred := range []string{
			"u\xff:pw", "u:p\xff", "\x80:pw", "u:\xe2\x82", "u\xe2\x82:x", "u:\xe2\x82x",
			"u:\xc0\xaf", "u:\xe0\x80\xaf", "u:\xed\xa0\x80", "u:\xed\xa0\x80\xed\xb0\x80",
			"u:\xf4\x90\x80\x80", "u:\xf0\x9f\x98", "u:\xf0\x9f\x98x", "u:\xf8\x88\x80\x80\x80",
			"u:\xf0\x80\x80", "u\xfe\xff", "\xe2\x82\xac:\xc3\xbc", "u:\xf0\x9f\x98\x80",
		} {
			c := r.conn(fmt.Sprintf("c%02d", i))
			r.auth(c, "digest", cred)
			r.do(c, wire.OpWhoAmI, nil)
			p := fmt.Sprintf("/d/n%02d", i)
			r.createACL(c, p, []wire.ACL{acl(wire.PermAll, "auth", "")})
			r.getACL(c, p)
			r.get(c, p, false)
			r.get(owner, p, false)
		}
	})
}
