package main

import (
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestClusterAddPublishesClientAddress: paddock cluster add takes the
// member's address as a zoo.cfg server line's value, and its election
// port and client address go into /zookeeper/config, where clients that
// follow it (Curator's EnsembleTracker) find it; it took only the cluster
// address, so an added member had no client address there.
func TestClusterAddPublishesClientAddress(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	h := httptest.NewServer(c.Node((c.Leader() + 1) % 3).Server().AdminHandler())
	defer h.Close()
	admin := strings.TrimPrefix(h.URL, "http://")
	out, err := runRoot(t, "cluster", "add-observer", "7", "127.0.0.1:3911:3912;127.0.0.1:3913", "--admin", admin)
	require.NoError(t, err, out)
	out, err = runRoot(t, "cluster", "add-observer", "8", "127.0.0.1:3921", "--admin", admin)
	require.NoError(t, err, out, "a cluster address alone, as before")
	require.Eventually(t, func() bool {
		data, _, err := c.Node(c.Leader()).Server().FSM().Get("/zookeeper/config")
		return err == nil && strings.Contains(string(data), "server.7=127.0.0.1:3911:3912:observer;127.0.0.1:3913\n") &&
			strings.Contains(string(data), "server.8=127.0.0.1:3921:0:observer\n")
	}, 10*time.Second, 5*time.Millisecond)
	_, err = runRoot(t, "cluster", "add", "9", "127.0.0.1:3931:x", "--admin", admin)
	require.Error(t, err, "a malformed line is refused before anything is sent")
}

// A cluster command whose --admin address answers nothing says what to
// check (it printed Go's dial error alone).
func TestClusterCommandExplainsAnUnreachableAdmin(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing listens there now
	for _, args := range [][]string{{"cluster", "list"}, {"cluster", "remove", "3"}} {
		_, err := runRoot(t, append(args, "--admin", addr)...)
		require.ErrorContains(t, err, "no admin endpoint answers at "+addr+": start the node with --admin-addr", "%v", args)
	}
}

// A server line's observer role given to paddock cluster add, which adds
// a voter, is refused before anything is sent (it added a voter, which
// changes the quorum, although the line said observer).
func TestClusterAddRefusesAnObserverLine(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close()) // nothing may be asked
	_, err = runRoot(t, "cluster", "add", "9", "127.0.0.1:3931:3932:observer;3933", "--admin", addr)
	require.ErrorContains(t, err, "add-observer")
}
