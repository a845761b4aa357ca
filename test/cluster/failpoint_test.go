package cluster_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/internal/failpoint"
	"github.com/stretchr/testify/require"
)

// TestProcessCrashAtEachFailpoint crashes a standalone server with a data
// dir at each failpoint of its write path (internal/failpoint, a binary
// built with -tags failpoints; reliability plan 9.1) under a writer that
// keeps creating sequential nodes, restarts it without the failpoint, and
// checks that it serves every write it acknowledged. A kill -9 lands
// anywhere; these land exactly between a log write and Raft learning of
// it, between a commit and its apply, between an apply and its answer,
// and inside a snapshot's write.
func TestProcessCrashAtEachFailpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	bin := buildPaddock(t, "failpoints")
	for _, arm := range []string{
		failpoint.BeforeStoreLogs + "=exit@150",
		failpoint.AfterStoreLogs + "=exit@150",
		failpoint.BeforeApply + "=exit@150",
		failpoint.AfterApply + "=exit@150",
		failpoint.BeforeSnapshotPersist + "=exit@2",
		failpoint.BeforeSnapshotClose + "=exit@2",
	} {
		name, _, _ := strings.Cut(arm, "=")
		t.Run(name, func(t *testing.T) {
			p := &procServer{t: t, bin: bin, dir: t.TempDir(), env: []string{failpoint.Env + "=" + arm}}
			p.addr = fmt.Sprintf("127.0.0.1:%d", freePorts(t, 1)[0])
			p.start()
			t.Cleanup(p.kill)
			p.waitServing()
			createLoad(t, []string{p.addr})

			w := startWriter(t, []string{p.addr})
			code := 0
			eventually(t, "the server crashes at "+name, func() bool {
				c, ok := p.exited()
				code = c
				return ok
			})
			require.Equal(t, failpoint.ExitCode, code, "the server's exit status")
			requireLogSays(t, filepath.Join(p.dir, "server.log"), "failpoint "+name+": exiting")
			before := w.count()
			p.env = nil
			p.start()
			p.waitServing()
			eventually(t, "writes after the restart", func() bool { return w.count() >= before+50 })
			acked := w.halt()
			requireAllPresent(t, []string{p.addr}, acked)
			t.Logf("crashed at %s after %d acknowledged writes; %d acknowledged in all, none lost", arm, before, len(acked))
		})
	}
}

// TestProcessClusterLeaderCrashesAtItsLogWriter crashes a 3-node
// cluster's leader on its own log writer, which stores a batch while Raft
// already replicates it (README "Running a cluster"): just before it
// stores one (the followers may hold, and commit, entries the leader
// never stored) and just after (stored, not yet counted). The others elect
// a leader and go on; the old one, restarted without the failpoint, comes
// back as a follower; every acknowledged write is on every node.
func TestProcessClusterLeaderCrashesAtItsLogWriter(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	bin := buildPaddock(t, "failpoints")
	for _, name := range []string{failpoint.LeaderLogWriting, failpoint.LeaderLogStored} {
		t.Run(name, func(t *testing.T) {
			// Every node is armed; only a leader reaches these points, and
			// the test ends long before a new leader would.
			c := startProcClusterOf(t, 3, bin, []string{failpoint.Env + "=" + name + "=exit@300"})
			createLoad(t, c.clients)
			old := c.leader()

			w := startWriter(t, c.clients)
			eventually(t, "the leader crashes at "+name, func() bool {
				code, ok := c.exited(old)
				if ok {
					require.Equal(t, failpoint.ExitCode, code, "the leader's exit status")
				}
				return ok
			})
			requireLogSays(t, filepath.Join(c.dirs[old], "server.log"), "failpoint "+name+": exiting")
			before := w.count()
			eventually(t, "writes after the crash", func() bool { return w.count() >= before+50 })
			acked := w.halt()
			c.env = nil
			c.start(old)
			c.waitServing(old)
			requireAllPresent(t, c.clients, acked)
			requireAllPresent(t, []string{c.clients[old]}, acked)
			eventually(t, "the old leader follows", func() bool { return c.mode(old) == "follower" })
			t.Logf("leader crashed at %s after %d acknowledged writes; %d in all, none lost", name, before, len(acked))
		})
	}
}

// requireLogSays fails unless the file holds want.
func requireLogSays(t *testing.T, path, want string) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(data), want)
}
