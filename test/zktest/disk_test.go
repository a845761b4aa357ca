package zktest_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

var openACL = zk.WorldACL(zk.PermAll)

// A slow disk delays every write's acknowledgement by at least its
// delay; a fast disk again does not.
func TestSlowDiskDelaysWrites(t *testing.T) {
	srv := zktest.Start(t)
	conn, _ := connect(t, srv)
	const delay = 100 * time.Millisecond
	srv.SlowDisk(delay)
	start := time.Now()
	_, err := conn.Create("/slow", nil, 0, openACL)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), delay, "the write did not wait for the slow disk")
	srv.SlowDisk(0)
	_, err = conn.Create("/fast", nil, 0, openACL)
	require.NoError(t, err)
}

// A full disk stops the server at its next write, which is not
// acknowledged; freed and restarted, it has everything it acknowledged.
func TestFailDiskStopsTheServer(t *testing.T) {
	srv := zktest.Start(t)
	conn, _ := connect(t, srv)
	_, err := conn.Create("/kept", nil, 0, openACL)
	require.NoError(t, err)
	srv.FailDisk(syscall.ENOSPC)
	_, err = conn.Create("/lost", nil, 0, openACL)
	require.Error(t, err, "a write the disk refused was acknowledged")
	require.ErrorIs(t, srv.Err(), syscall.ENOSPC)

	srv.FailDisk(nil)
	srv.Restart()
	require.NoError(t, srv.Err())
	conn2, _ := connect(t, srv)
	ok, _, err := conn2.Exists("/kept")
	require.NoError(t, err)
	require.True(t, ok, "an acknowledged write was lost")
	ok, _, err = conn2.Exists("/lost")
	require.NoError(t, err)
	require.False(t, ok, "the refused write was applied")
	_, err = conn2.Create("/after", nil, 0, openACL)
	require.NoError(t, err)
}

// The leader's disk fills up: the leader stops, the other two elect a
// leader and take writes, and the old leader, freed and restarted,
// catches up.
func TestClusterFailDiskOnTheLeader(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	conn, _, err := zk.Connect(c.Servers(), 4*time.Second, zk.WithLogInfo(false))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	l := c.Leader()
	c.FailDisk(l, errors.New("no space left on device"))
	var written []string
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; len(written) < 20; i++ {
		require.True(t, time.Now().Before(deadline), "no writes after the leader's disk failed")
		p, err := conn.Create(fmt.Sprintf("/w-%d", i), nil, 0, openACL)
		if err == nil {
			written = append(written, p)
		}
	}
	require.Error(t, c.Node(l).Err(), "the leader did not stop")
	require.NotEqual(t, l, c.Leader())

	c.FailDisk(l, nil)
	c.Restart(l)
	node, _ := connect(t, c.Node(l))
	last := written[len(written)-1]
	deadline = time.Now().Add(20 * time.Second)
	for {
		_, err := node.Sync(last)
		ok, _, _ := node.Exists(last)
		if err == nil && ok {
			break
		}
		require.True(t, time.Now().Before(deadline), "the restarted node never caught up")
		time.Sleep(10 * time.Millisecond)
	}
}
