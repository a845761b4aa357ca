package interop_test

import (
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/client"
)

// These tests run Apache Curator 5 (test/interop/curator/CuratorAgent.java)
// against an in-process Paddock server and, when ZK_ORACLE is set, against
// Apache ZooKeeper with the same assertions.

// CuratorFramework's builders: parents, protection, versions, multi,
// ACLs from an ACLProvider.
func TestCuratorBasics(t *testing.T) {
	forEachServer(t, func(t *testing.T, tg *target) {
		ctx := tg.ctx()
		a := tg.curator("a")
		base := tg.path("basics")

		// create().creatingParentsIfNeeded()
		p := base + "/x/y"
		a.expect(p, "create", p, "hello")
		if data, _, err := tg.admin.Get(ctx, p); err != nil || string(data) != "hello" {
			t.Fatalf("Get %s = %q, %v", p, data, err)
		}
		a.expect("0 1 0", "exists", base+"/x")
		a.expect("none", "exists", base+"/nope")

		// withProtection() EPHEMERAL_SEQUENTIAL: _c_<uuid>-job-<seq>.
		prot := a.do("protect", base+"/prot/job-", "d")
		name := prot[strings.LastIndex(prot, "/")+1:]
		if !regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-job-\d{10}$`).MatchString(name) {
			t.Errorf("protected name %q", name)
		}
		session := a.do("session")
		if _, st, err := tg.admin.Get(ctx, prot); err != nil || strconv.FormatInt(st.EphemeralOwner, 10) != session {
			t.Errorf("protected node %s: owner %v (session %s), %v", prot, st, session, err)
		}
		a.expect("prot,x", "children", base)

		// setData().withVersion, getData().storingStatIn
		a.expect("1", "set", p, "v2", "0")
		a.expect("v2 1", "get", p)
		if _, err := a.send("set", p, "v3", "0").result(); err == nil || !strings.Contains(err.Error(), "BadVersion") {
			t.Errorf("set with a stale version: %v", err)
		}

		// transaction().forOperations: committed, then failed with the
		// error of each op (ok before the failure, RUNTIMEINCONSISTENCY
		// after it), and nothing applied.
		a.expect("committed CREATE:"+base+"/t1 SET_DATA:"+p+" CHECK:"+base+"/x",
			"txn", "create:"+base+"/t1:one", "set:"+p+":v3:1", "check:"+base+"/x:0")
		a.expect("v3 2", "get", p)
		a.expect("failed NONODE 0 -101 -2",
			"txn", "create:"+base+"/t2:two", "delete:"+base+"/missing:-1", "set:"+p+":v4:2")
		a.expect("none", "exists", base+"/t2")
		a.expect("v3 2", "get", p)
		a.expect("failed BADVERSION 0 -103",
			"txn", "check:"+base+"/x:0", "set:"+p+":v4:7")

		// aclProvider: /secure paths (and the parents it makes) get
		// CREATOR_ALL_ACL for the agent's digest identity.
		sec := base + "/secure/s1"
		a.expect(sec, "create", sec, "secret")
		digest := "curator:" + digestOf("curator:secret")
		for _, q := range []string{base + "/secure", sec} {
			a.expect("digest:"+digest+":31", "acl", q)
			if _, _, err := tg.admin.Get(ctx, q); !errors.Is(err, client.ErrNoAuth) {
				t.Errorf("unauthenticated Get %s: %v, want NoAuth", q, err)
			}
		}
		a.expect("secret 0", "get", sec)

		// delete().deletingChildrenIfNeeded()
		a.expect("", "rmr", base)
		if _, ok, err := tg.admin.Exists(ctx, base); err != nil || ok {
			t.Fatalf("%s after rmr: exists %v, %v", base, ok, err)
		}
	})
}

func digestOf(userPassword string) string {
	h := sha1.Sum([]byte(userPassword))
	return base64.StdEncoding.EncodeToString(h[:])
}
