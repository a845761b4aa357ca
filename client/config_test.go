package client

import (
	"fmt"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// superDigest is the super user "super", password "test" (as the oracle's).
const superDigest = "super:D/InIHSb7yEEbrWz8b9l71RjZJU="

// GetConfig reads /zookeeper/config whatever the chroot, as the Java
// client's getConfig; a standalone server's configuration is empty.
func TestGetConfigStandalone(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		ctx := testCtx(t)
		plain := connectTest(t, addrs)
		want, wantStat, err := plain.Get(ctx, "/zookeeper/config")
		require.NoError(t, err)

		c := connectTest(t, addrs, WithChroot("/no-such-chroot"))
		data, st, err := c.GetConfig(ctx)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(data))
		assert.Equal(t, wantStat, st)
		_, ok := ConfigVersion(data)
		assert.False(t, ok, "a standalone server's configuration has no version")

		data, st, ch, err := c.GetConfigW(ctx)
		require.NoError(t, err)
		assert.Equal(t, string(want), string(data))
		assert.Equal(t, wantStat, st)
		expectNoEvent(t, ch)
		require.NoError(t, c.Close())
		ev := recv(t, ch)
		assert.ErrorIs(t, ev.Err, ErrClosed)
		assert.Equal(t, "/zookeeper/config", ev.Path)
	})
}

// Without reconfigEnabled (ZooKeeper's default) reconfig is refused.
func TestReconfigDisabled(t *testing.T) {
	forEachServer(t, func(t *testing.T, addrs []string) {
		ctx := testCtx(t)
		c := connectTest(t, addrs, WithAuth("digest", []byte("super:test")))
		_, _, err := c.IncrementalReconfig(ctx, nil, []string{"3"}, AnyConfig)
		assert.ErrorIs(t, err, ErrReconfigDisabled)
		_, _, err = c.IncrementalReconfig(ctx, []string{"server.5=127.0.0.1:1234:1235;1236"}, nil, 5)
		assert.ErrorIs(t, err, ErrReconfigDisabled)
		_, _, err = c.Reconfig(ctx, []string{"server.1=127.0.0.1:1234:1235;1236"}, AnyConfig)
		assert.ErrorIs(t, err, ErrReconfigDisabled)
		_, _, err = c.Reconfig(ctx, nil, AnyConfig)
		assert.ErrorIs(t, err, ErrBadArguments, "no members: refused before sending")
	})
}

// A standalone server with reconfigEnabled cannot reconfigure: ZooKeeper's
// answer, UNIMPLEMENTED.
func TestReconfigEnabledStandalone(t *testing.T) {
	srv := zktest.Start(t, zktest.WithReconfig())
	c := connectTest(t, srv.Servers())
	_, _, err := c.IncrementalReconfig(testCtx(t), nil, []string{"3"}, AnyConfig)
	assert.ErrorIs(t, err, ErrUnimplemented)
}

func TestReconfigCluster(t *testing.T) {
	cl := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest(superDigest))
	leader := cl.Leader()
	victim, via := (leader+1)%3, (leader+2)%3
	addrs := []string{cl.Servers()[via]}
	ctx := testCtx(t)

	// A watcher under the chroot "/zookeeper": its getConfig watch reports
	// /zookeeper/config, its getData watch on "/config" (the same znode)
	// reports "/config".
	w := connectTest(t, addrs, WithChroot("/zookeeper"))
	var cfg []byte
	waitFor(t, "the membership published", func() error {
		var err error
		if cfg, _, err = w.GetConfig(ctx); err == nil && strings.Count(string(cfg), "server.") != 3 {
			err = fmt.Errorf("config %q", cfg)
		}
		return err
	})
	_, _, cfgWatch, err := w.GetConfigW(ctx)
	require.NoError(t, err)
	_, _, dataWatch, err := w.GetW(ctx, "/config")
	require.NoError(t, err)
	version, ok := ConfigVersion(cfg)
	require.True(t, ok, "config %q", cfg)

	// WRITE on /zookeeper/config is the super user's only.
	_, _, err = w.IncrementalReconfig(ctx, nil, []string{fmt.Sprint(victim + 1)}, AnyConfig)
	require.ErrorIs(t, err, ErrNoAuth)

	admin := connectTest(t, addrs, WithAuth("digest", []byte("super:test")))
	_, _, err = admin.IncrementalReconfig(ctx, nil, []string{fmt.Sprint(victim + 1)}, version+1)
	require.ErrorIs(t, err, ErrBadVersion, "a fromConfig that is not current")
	data, st, err := admin.IncrementalReconfig(ctx, nil, []string{fmt.Sprint(victim + 1)}, version)
	require.NoError(t, err)
	assert.NotContains(t, string(data), fmt.Sprintf("server.%d=", victim+1))
	assert.Equal(t, 2, strings.Count(string(data), "server."))
	got, gotStat, err := admin.GetConfig(ctx)
	require.NoError(t, err)
	assert.Equal(t, string(got), string(data), "the reply is the new configuration")
	assert.Equal(t, gotStat, st)
	newVersion, ok := ConfigVersion(data)
	require.True(t, ok)
	// Paddock's configuration version stays 0 (hashicorp/raft's
	// GetConfiguration reports no index), so a stale version cannot be
	// told from the current one here.

	ev := recv(t, cfgWatch)
	assert.Equal(t, EventNodeDataChanged, ev.Type)
	assert.Equal(t, "/zookeeper/config", ev.Path)
	ev = recv(t, dataWatch)
	assert.Equal(t, EventNodeDataChanged, ev.Type)
	assert.Equal(t, "/config", ev.Path)

	// A non-incremental reconfig to the current members changes nothing.
	var members []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "server.") {
			members = append(members, l)
		}
	}
	data2, _, err := admin.Reconfig(ctx, members, newVersion)
	require.NoError(t, err)
	assert.Equal(t, members, strings.Split(string(data2), "\n")[:2])
	_, _, err = admin.Reconfig(ctx, []string{"server.x=nonsense"}, AnyConfig)
	require.ErrorIs(t, err, ErrBadArguments)
}

func TestConfigVersion(t *testing.T) {
	v, ok := ConfigVersion([]byte("server.1=127.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=10000002f"))
	assert.True(t, ok)
	assert.Equal(t, int64(0x10000002f), v)
	_, ok = ConfigVersion(nil)
	assert.False(t, ok)
	_, ok = ConfigVersion([]byte("version=zz"))
	assert.False(t, ok)
}
