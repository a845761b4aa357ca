package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStepDownHandsLeadershipOver: a leader that steps down before a
// planned shutdown leaves another node leading at once (paddock server
// does it on SIGTERM; a leader that just stopped left the others without
// one for an election timeout, writes stalled ~2 s in an operator's
// rolling restart). A follower or a standalone server has nothing to do.
func TestStepDownHandsLeadershipOver(t *testing.T) {
	servers, _ := startHeldCluster(t)
	l := clusterLeader(t, servers)
	follower := servers[(l+1)%3]
	require.Eventually(t, func() bool { return follower.Leader() != "" }, 10*time.Second, time.Millisecond)
	require.NoError(t, follower.StepDown())
	require.True(t, servers[l].isLeader(), "a follower's StepDown moves nothing")

	require.NoError(t, servers[l].StepDown())
	require.False(t, servers[l].isLeader())
	require.Eventually(t, func() bool {
		for i, s := range servers {
			if i != l && s.isLeader() {
				return true
			}
		}
		return false
	}, 5*time.Second, time.Millisecond, "another node leads")

	standalone, err := New(durableConfig(t.TempDir(), ""))
	require.NoError(t, err)
	defer standalone.Close()
	require.NoError(t, standalone.StepDown())
}
