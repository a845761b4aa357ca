package server

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// A client that connects to a new cluster between its first election and
// the leader's publication of /zookeeper/config is answered only once the
// node it reached has applied the membership: it never reads the empty
// node of a fresh state, on a follower or on the leader (a ZooKeeper
// server serves clients once it has synced with its leader, which gives
// it the membership).
func TestHandshakeWaitsForTheFirstMembership(t *testing.T) {
	var held atomic.Int32
	release := make(chan struct{})
	var releaseOnce sync.Once
	open := func() { releaseOnce.Do(func() { close(release) }) }
	servers, _ := startHeldClusterWith(t, func(cfg *Config) {
		cfg.hooks = &testHooks{beforeEnsureConfig: func() {
			held.Add(1)
			<-release
		}}
	})
	t.Cleanup(open) // after the cluster's, so it runs first: a failed test lets the nodes close
	l := clusterLeader(t, servers)
	fol := servers[(l+1)%len(servers)]
	require.Eventually(t, func() bool { return held.Load() > 0 && fol.Leader() != "" }, 10*time.Second,
		time.Millisecond, "the leader is about to publish and the follower knows it")
	data, _, err := fol.fsm.Get(fsm.ConfigPath)
	require.NoError(t, err)
	require.Empty(t, data, "the membership was published before the hook held it")

	type answer struct {
		node    string
		session int64
		members int
	}
	answers := make(chan answer, 2)
	for _, srv := range []*Server{fol, servers[l]} {
		nc, br := dialRaw(t, srv.Addr().String())
		send(t, nc, &wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)})
		go func() {
			// Not the test's goroutine: errors travel as a zero session.
			var cr wire.ConnectResponse
			if f, err := wire.ReadFrame(br, nil, 1<<20); err == nil {
				_ = cr.Decode(wire.NewDecoder(f))
			}
			data, _, _ := srv.fsm.Get(fsm.ConfigPath)
			answers <- answer{srv.cfg.ID, cr.SessionID, strings.Count(string(data), "server.")}
		}()
	}
	select {
	case a := <-answers:
		t.Fatalf("node %s answered a handshake (session %x) before /zookeeper/config was published", a.node, a.session)
	case <-time.After(200 * time.Millisecond):
	}
	open()
	for range 2 {
		select {
		case a := <-answers:
			require.NotZero(t, a.session, "node %s refused the handshake", a.node)
			require.Equal(t, 3, a.members, "node %s answered before it applied the membership", a.node)
		case <-time.After(10 * time.Second):
			t.Fatal("a handshake was not answered once the membership was published")
		}
	}
}
