package server

import (
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// durableConfig is a data dir (and log dir, if logs is not empty) config.
func durableConfig(data, logs string) Config {
	cfg := DefaultConfig()
	cfg.Port, cfg.NoSync = 0, true
	cfg.DataDir, cfg.LogDir = data, logs
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return cfg
}

// createNodes starts a server from cfg, creates paths, and stops it.
func createNodes(t *testing.T, cfg Config, paths ...string) *fsm.FSM {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	for _, p := range paths {
		res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: p, ACL: wire.OpenACLUnsafe}}})
		require.NoError(t, err)
		require.Equal(t, wire.OK, res.Err)
	}
	require.NoError(t, s.Close())
	return s.FSM()
}

// Dropping dataLogDir from a configuration is refused: the server used to
// start from the data dir alone, an empty tree, every write gone from view.
func TestDataDirRefusesALogDirDropped(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	createNodes(t, durableConfig(data, logs), "/k1", "/k2")
	_, err := New(durableConfig(data, ""))
	require.ErrorContains(t, err, "but this configuration puts it in")
	_, err = New(durableConfig(data, t.TempDir()))
	require.ErrorContains(t, err, "but this configuration puts it in", "nor another, empty, log dir")
	s, err := New(durableConfig(data, logs))
	require.NoError(t, err)
	defer s.Close()
	_, _, err = s.FSM().Get("/k2")
	require.NoError(t, err)
}

// A restore whose log dir still holds the old log is refused: the log used
// to be replayed over the restored snapshot, bringing back the writes made
// after the backup. With an empty log dir the restored state is served.
func TestSeededDataDirRefusesAnOldLog(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	backup := createNodes(t, durableConfig(data, logs), "/before")
	createNodes(t, durableConfig(data, logs), "/after")

	restored := filepath.Join(t.TempDir(), "d2")
	require.NoError(t, SeedDataDir(restored, backup, nil))
	_, err := New(durableConfig(restored, logs))
	require.ErrorContains(t, err, "would be replayed over the seeded state")

	s, err := New(durableConfig(restored, t.TempDir()))
	require.NoError(t, err)
	defer s.Close()
	_, _, err = s.FSM().Get("/before")
	require.NoError(t, err)
	_, _, err = s.FSM().Get("/after")
	require.ErrorIs(t, err, wire.ErrNoNode)
	require.NoFileExists(t, filepath.Join(restored, seedFile), "the first start clears the seed mark")
}

// A restore interrupted before its snapshot was complete leaves a dir the
// server refuses (it used to start from it with an empty tree), and that a
// new restore starts over in (it used to refuse it as not empty).
func TestInterruptedSeed(t *testing.T) {
	state := createNodes(t, durableConfig(t.TempDir(), ""), "/n")
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, seedIncompleteFile), nil, 0o640))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, snapshotsDir, "1-5-123.tmp"), 0o750))
	_, err := New(durableConfig(dir, ""))
	require.ErrorContains(t, err, "interrupted restore")

	require.NoError(t, SeedDataDir(dir, state, nil))
	s, err := New(durableConfig(dir, ""))
	require.NoError(t, err)
	defer s.Close()
	_, _, err = s.FSM().Get("/n")
	require.NoError(t, err)
}

// A data dir moved elsewhere keeps its log (recorded relatively), and a
// log dir moved with the configuration following it is accepted and
// recorded anew.
func TestDataDirAndLogDirMoved(t *testing.T) {
	base := t.TempDir()
	data := filepath.Join(base, "d")
	createNodes(t, durableConfig(data, ""), "/a")
	moved := filepath.Join(base, "moved")
	require.NoError(t, os.Rename(data, moved))
	createNodes(t, durableConfig(moved, ""), "/b")

	data2, logs := filepath.Join(base, "d2"), filepath.Join(base, "l")
	createNodes(t, durableConfig(data2, logs), "/c")
	logs2 := filepath.Join(base, "l2")
	require.NoError(t, os.Rename(logs, logs2))
	f := createNodes(t, durableConfig(data2, logs2), "/d")
	_, _, err := f.Get("/c")
	require.NoError(t, err)
	_, err = New(durableConfig(data2, logs))
	require.ErrorContains(t, err, "but this configuration puts it in", "the old place is empty now")
}

// One place named two ways is the same place: a data dir reached through a
// symlink, a recorded absolute path naming the data dir itself, a log dir
// named through a symlink and by its real path.
func TestLogLocationNamedTwoWays(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	createNodes(t, durableConfig(real, ""), "/k")
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(real, link))
	createNodes(t, durableConfig(link, ""), "/k2")

	require.NoError(t, os.WriteFile(filepath.Join(real, logLocationFile), []byte(real+"\n"), 0o640))
	createNodes(t, durableConfig(real, ""), "/k3")

	data, logs := filepath.Join(base, "d"), filepath.Join(base, "logs")
	createNodes(t, durableConfig(data, logs), "/k")
	loglink := filepath.Join(base, "loglink")
	require.NoError(t, os.Symlink(logs, loglink))
	f := createNodes(t, durableConfig(data, loglink), "/k2")
	_, _, err := f.Get("/k")
	require.NoError(t, err)
}

// A standalone server restored from a cluster's snapshot serves an empty
// /zookeeper/config, as a standalone ZooKeeper does: it served the old
// cluster's membership, which a client following /zookeeper/config
// (Curator's EnsembleTracker) would take as its new server list.
func TestStandaloneRestoreOfAClusterSnapshotClearsItsMembership(t *testing.T) {
	state := createNodes(t, durableConfig(t.TempDir(), ""), "/n")
	members := "server.1=10.0.0.1:2888:3888:participant;10.0.0.1:2181\nversion=1a63"
	state.ApplyCommand(uint64(state.LastZxid()+1), 1, &fsm.Command{Type: fsm.CmdSetConfig, Data: []byte(members)})
	data, _, err := state.Get(fsm.ConfigPath)
	require.NoError(t, err)
	require.Equal(t, members, string(data))

	dir := filepath.Join(t.TempDir(), "restored")
	require.NoError(t, SeedDataDir(dir, state, nil))
	s, err := New(durableConfig(dir, ""))
	require.NoError(t, err)
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		data, _, err := s.FSM().Get(fsm.ConfigPath)
		require.NoError(t, err)
		if len(data) == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "/zookeeper/config still holds %q", data)
		time.Sleep(10 * time.Millisecond)
	}
	_, _, err = s.FSM().Get("/n")
	require.NoError(t, err)
}

// A data dir holding a standalone server's state (restored or imported
// without --peer, or written by a standalone server) is refused by a
// cluster node: it led a one-member cluster of its own, which the other
// nodes of its zoo.cfg could never join. A cluster member's data dir is
// refused by a standalone server, which waited forever for the election.
func TestDataDirOfTheOtherKindIsRefused(t *testing.T) {
	state := createNodes(t, durableConfig(t.TempDir(), ""), "/n")
	freePort := func() string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		defer ln.Close()
		return ln.Addr().String()
	}
	peers := []Peer{{ID: "1", Addr: freePort()}, {ID: "2", Addr: freePort()}, {ID: "3", Addr: freePort()}}
	clusterNode := func(dir string) Config {
		cfg := durableConfig(dir, "")
		cfg.ID, cfg.Peers = "1", peers
		return cfg
	}

	restored := filepath.Join(t.TempDir(), "standalone-seed")
	require.NoError(t, SeedDataDir(restored, state, nil))
	_, err := New(clusterNode(restored))
	require.ErrorContains(t, err, "standalone server's state")
	require.ErrorContains(t, err, "--peer")

	standalone := t.TempDir()
	createNodes(t, durableConfig(standalone, ""), "/m")
	_, err = New(clusterNode(standalone))
	require.ErrorContains(t, err, "standalone server's state")

	member := filepath.Join(t.TempDir(), "cluster-seed")
	require.NoError(t, SeedDataDir(member, state, peers))
	_, err = New(durableConfig(member, ""))
	require.ErrorContains(t, err, "cluster member's state")
}
