package server

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// snapshotWithHistory writes paths in two rounds with a snapshot after
// each, so the data dir holds two snapshots and a log compacted past the
// older one, and returns the snapshot directories, newest last.
func snapshotWithHistory(t *testing.T, cfg Config) []string {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	for round := range 2 {
		for i := range 20 {
			res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate,
				Path: fmt.Sprintf("/r%d-%d", round, i), ACL: wire.OpenACLUnsafe}}})
			require.NoError(t, err)
			require.Equal(t, wire.OK, res.Err)
		}
		require.NoError(t, s.Snapshot())
	}
	require.NoError(t, s.Close())
	dirs, err := filepath.Glob(filepath.Join(cfg.DataDir, "snapshots", "*"))
	require.NoError(t, err)
	sort.Strings(dirs)
	return dirs
}

// damageNewestSnapshot flips a byte in the middle of the newest
// snapshot's state and returns its directory.
func damageNewestSnapshot(t *testing.T, dirs []string) string {
	t.Helper()
	require.Len(t, dirs, 2)
	state := filepath.Join(dirs[1], "state.bin")
	b, err := os.ReadFile(state)
	require.NoError(t, err)
	b[len(b)/2] ^= 0xff
	require.NoError(t, os.WriteFile(state, b, 0o644))
	return dirs[1]
}

// A damaged newest snapshot whose predecessor the log no longer continues
// (compacted past it) is a clear error naming the snapshot: the server
// used to panic in Raft ("log not found") after falling back to the older
// snapshot, which would have lost the writes in between.
func TestDamagedSnapshotWithoutTheLogRefusesToStart(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	cfg.TrailingLogs = 1
	bad := damageNewestSnapshot(t, snapshotWithHistory(t, cfg))
	s, err := New(cfg)
	if err == nil {
		s.Close()
	}
	require.ErrorContains(t, err, "snapshot "+filepath.Base(bad)+" is damaged (CRC mismatch)")
	require.ErrorContains(t, err, "restore the data dir from a backup")
}

// When the log still holds every entry after the older snapshot, the
// server starts from it and replays the log: nothing is lost.
func TestDamagedSnapshotFallsBackWhenTheLogHoldsTheRest(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	damageNewestSnapshot(t, snapshotWithHistory(t, cfg))
	s, err := New(cfg)
	require.NoError(t, err)
	defer s.Close()
	for _, p := range []string{"/r0-0", "/r0-19", "/r1-0", "/r1-19"} {
		_, ok := s.FSM().Exists(p)
		require.True(t, ok, p)
	}
}
