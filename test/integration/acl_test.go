package integration_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

func TestACLDigestAndAuthScheme(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	owner, other := connect(t, srv), connect(t, srv)
	require.NoError(t, owner.AddAuth("digest", []byte("alice:secret")))
	// "auth" expands to the creator's digest identity.
	_, err := owner.Create("/mine", []byte("x"), 0, zk.AuthACL(zk.PermAll))
	require.NoError(t, err)
	acl, _, err := owner.GetACL("/mine")
	require.NoError(t, err)
	require.Equal(t, zk.DigestACL(zk.PermAll, "alice", "secret"), acl)

	_, _, err = other.Get("/mine")
	require.ErrorIs(t, err, zk.ErrNoAuth)
	_, err = other.Set("/mine", []byte("y"), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	_, err = other.Create("/mine/c", nil, 0, zk.WorldACL(zk.PermAll))
	require.ErrorIs(t, err, zk.ErrNoAuth)
	_, err = owner.Create("/mine/c", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.ErrorIs(t, other.Delete("/mine/c", -1), zk.ErrNoAuth, "delete needs DELETE on the parent")
	require.NoError(t, owner.Delete("/mine/c", -1))
}

func TestACLReadOnlyAndMasking(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	owner, reader := connect(t, srv), connect(t, srv)
	acl := append(zk.DigestACL(zk.PermAll, "alice", "secret"), zk.WorldACL(zk.PermRead)...)
	_, err := owner.Create("/pub", []byte("v"), 0, acl)
	require.NoError(t, err)
	data, _, err := reader.Get("/pub")
	require.NoError(t, err)
	require.Equal(t, []byte("v"), data)
	got, _, err := reader.GetACL("/pub")
	require.NoError(t, err)
	require.Equal(t, "alice:x", got[0].ID, "digests are masked without ADMIN")
	_, err = reader.Set("/pub", nil, -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	// An exists watch on a node the watcher cannot read is not notified.
	secret := connect(t, srv)
	require.NoError(t, owner.AddAuth("digest", []byte("alice:secret")))
	_, err = owner.Create("/hidden", nil, 0, zk.DigestACL(zk.PermAll, "alice", "secret"))
	require.NoError(t, err)
	_, _, ch, err := secret.ExistsW("/hidden")
	require.ErrorIs(t, err, zk.ErrNoAuth, "exists on an unreadable node")
	require.Nil(t, ch)
	_, _, ch, err = secret.ExistsW("/hidden-later")
	require.NoError(t, err)
	_, err = owner.Create("/hidden-later", nil, 0, zk.DigestACL(zk.PermAll, "alice", "secret"))
	require.NoError(t, err)
	select {
	case e := <-ch:
		t.Fatalf("a watcher without READ was notified: %+v", e)
	case <-time.After(200 * time.Millisecond):
	}
}

func TestACLIPScheme(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	_, err := c.Create("/local", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.0/8"}})
	require.NoError(t, err)
	_, _, err = c.Get("/local")
	require.NoError(t, err, "127.0.0.1 is inside 127.0.0.0/8")
	_, err = c.Create("/remote", nil, 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "10.0.0.0/8"}})
	require.NoError(t, err)
	_, _, err = c.Get("/remote")
	require.ErrorIs(t, err, zk.ErrNoAuth)
}

func TestACLSuperDigestAndSkipACL(t *testing.T) {
	t.Parallel()
	super := "super:" + server.DigestOf("super:test")
	srv := zktest.Start(t, zktest.WithSuperDigest(super))
	owner := connect(t, srv)
	require.NoError(t, owner.AddAuth("digest", []byte("alice:secret")))
	_, err := owner.Create("/locked", []byte("x"), 0, zk.DigestACL(zk.PermAll, "alice", "secret"))
	require.NoError(t, err)
	admin := connect(t, srv)
	require.NoError(t, admin.AddAuth("digest", []byte("super:test")))
	_, err = admin.Set("/locked", []byte("by super"), -1)
	require.NoError(t, err, "the super user bypasses ACLs")

	open := zktest.Start(t, zktest.WithSkipACL())
	a := connect(t, open)
	_, err = a.Create("/x", nil, 0, zk.WorldACL(zk.PermRead))
	require.NoError(t, err)
	_, err = a.Set("/x", []byte("y"), -1)
	require.NoError(t, err, "skipACL lets a read-only ACL be written")
}
