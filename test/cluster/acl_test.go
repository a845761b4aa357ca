package cluster_test

import (
	"fmt"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// ACLs set through a follower (the auth scheme expanded with the
// follower's connection identities) are enforced the same on every node,
// and survive snapshots and restarts; identities stay with a connection.
func TestClusterACLs(t *testing.T) {
	c := zktest.StartCluster(t, 3, zktest.WithDurableStorage(), zktest.WithSnapshotEvery(4),
		zktest.WithSuperDigest("super:"+server.DigestOf("super:test")))
	leader := c.Leader()
	follower := (leader + 1) % 3
	alice, _ := connect(t, []string{c.Servers()[follower]})
	require.NoError(t, alice.AddAuth("digest", []byte("alice:secret")))
	aliceID := "alice:" + server.DigestOf("alice:secret")
	_, err := alice.Create("/a", []byte("s"), 0, zk.AuthACL(zk.PermRead|zk.PermWrite|zk.PermAdmin))
	require.NoError(t, err)
	_, err = alice.Create("/b", nil, 0, append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.ACL{Perms: zk.PermRead, Scheme: "ip", ID: "127.0.0.0/8"}))
	require.NoError(t, err)
	_, err = alice.SetACL("/a", zk.AuthACL(zk.PermRead|zk.PermAdmin), 0)
	require.NoError(t, err)
	for i := 0; i < 10; i++ { // enough writes for several snapshots
		_, err = alice.Create(fmt.Sprintf("/pad-%d", i), nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	_, err = alice.Sync("/")
	require.NoError(t, err)
	wantACL := []zk.ACL{{Perms: zk.PermRead | zk.PermAdmin, Scheme: "digest", ID: aliceID}}

	check := func(i int) {
		t.Helper()
		anon, _ := connect(t, []string{c.Servers()[i]})
		_, _, err := anon.Get("/a")
		require.ErrorIs(t, err, zk.ErrNoAuth, "node %d", i)
		_, err = anon.Set("/a", nil, -1)
		require.ErrorIs(t, err, zk.ErrNoAuth, "node %d", i)
		_, _, err = anon.GetACL("/a")
		require.ErrorIs(t, err, zk.ErrNoAuth, "node %d", i)
		_, _, err = anon.Get("/b")
		require.NoError(t, err, "node %d: the ip entry", i)
		_, err = anon.Set("/b", nil, -1)
		require.ErrorIs(t, err, zk.ErrNoAuth, "node %d", i)
		got, _, err := anon.GetACL("/b")
		require.NoError(t, err, "node %d", i)
		require.Equal(t, "alice:x", got[0].ID, "node %d: masked without ADMIN", i)

		a, _ := connect(t, []string{c.Servers()[i]})
		require.NoError(t, a.AddAuth("digest", []byte("alice:secret")))
		data, _, err := a.Get("/a")
		require.NoError(t, err, "node %d", i)
		require.Equal(t, []byte("s"), data)
		_, err = a.Set("/a", nil, -1)
		require.ErrorIs(t, err, zk.ErrNoAuth, "node %d: WRITE was taken away", i)
		got, st, err := a.GetACL("/a")
		require.NoError(t, err, "node %d", i)
		require.Equal(t, wantACL, got, "node %d", i)
		require.Equal(t, int32(1), st.Aversion, "node %d", i)

		su, _ := connect(t, []string{c.Servers()[i]})
		require.NoError(t, su.AddAuth("digest", []byte("super:test")))
		_, err = su.Set("/a", []byte("s"), -1)
		require.NoError(t, err, "node %d: super", i)
	}
	for i := range 3 {
		f := c.Node(i).Server().FSM()
		eventually(t, fmt.Sprintf("node %d has /pad-9", i), func() bool { _, ok := f.Exists("/pad-9"); return ok })
		check(i)
	}
	for i := range 3 {
		c.Restart(i)
		eventually(t, fmt.Sprintf("node %d serves again", i), func() bool {
			_, ok := c.Node(i).Server().FSM().Exists("/pad-9")
			return ok
		})
		check(i)
	}
}
