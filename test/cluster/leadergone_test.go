package cluster_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// The server's log messages when it lowers and restores its Raft heartbeat
// timeout (server/leadergone.go).
const (
	loweredMsg  = "the leader's cluster port refuses connections"
	restoredMsg = "a leader is known again: Raft heartbeat timeout restored"
)

// logCounter is a slog.Handler that counts the messages it is given.
type logCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (l *logCounter) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *logCounter) WithGroup(string) slog.Handler            { return l }
func (l *logCounter) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}

// count returns how many messages so far start with prefix.
func (l *logCounter) count(prefix string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if strings.HasPrefix(m, prefix) {
			n++
		}
	}
	return n
}

// TestClusterFollowersElectSoonerWhenTheLeaderProcessIsGone: hashicorp/raft
// followers notice a lost leader only when their heartbeat timer fires
// (one to two heartbeat timeouts after the last contact). A follower whose
// Raft connection from the leader ends, and whose dial to the leader's
// cluster port is refused (no process listens there), lowers its heartbeat
// timeout to the leader lease until a leader is known again (each
// follower does, since a node that still knows the old leader refuses its
// vote). A partitioned leader refuses nothing: that is left to the timer.
func TestClusterFollowersElectSoonerWhenTheLeaderProcessIsGone(t *testing.T) {
	logs := &logCounter{}
	c := zktest.StartCluster(t, 3, zktest.WithLogger(slog.New(logs)))
	l := c.Leader()

	c.Partition(l)
	eventually(t, "a leader on the majority side", func() bool {
		return c.Node((l+1)%3).Server().IsLeader() || c.Node((l+2)%3).Server().IsLeader()
	})
	require.Zero(t, logs.count(loweredMsg), "a partition lowered a heartbeat timeout")
	c.Heal()

	l = c.Leader()
	c.Kill(l)
	// Each follower lowers its timeout if it still knows the dead leader
	// when it finds the port refusing; with zktest's short timers one of
	// them may have moved on to the next leader by then.
	eventually(t, "a follower lowers its heartbeat timeout", func() bool { return logs.count(loweredMsg) >= 1 })
	c.Leader()
	eventually(t, "every lowered timeout is restored under the new leader", func() bool {
		return logs.count(restoredMsg) == logs.count(loweredMsg)
	})
	c.Restart(l)
	c.Leader()
}
