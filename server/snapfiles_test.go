package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// A snapshot the process died writing (raft's NAME.tmp directory) is
// removed at the next start; complete snapshots stay, and the server
// starts from them.
func TestUnfinishedSnapshotsAreRemovedAtStart(t *testing.T) {
	dir := t.TempDir()
	cfg := durableConfig(dir, "")
	s, err := New(cfg)
	require.NoError(t, err)
	res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/n", ACL: wire.OpenACLUnsafe}}})
	require.NoError(t, err)
	require.Equal(t, wire.OK, res.Err)
	require.NoError(t, s.node.r.Snapshot().Error())
	require.NoError(t, s.Close())

	snaps := filepath.Join(dir, snapshotsDir)
	entries, err := os.ReadDir(snaps)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	complete := filepath.Join(snaps, entries[0].Name())
	require.False(t, strings.HasSuffix(complete, snapshotTmpSuffix))
	unfinished := filepath.Join(snaps, "2-9-1764900000000"+snapshotTmpSuffix)
	require.NoError(t, os.MkdirAll(unfinished, 0o750))
	require.NoError(t, os.WriteFile(filepath.Join(unfinished, "state.bin"), make([]byte, 1<<20), 0o640))

	s, err = New(cfg)
	require.NoError(t, err)
	defer s.Close()
	require.NoDirExists(t, unfinished, "the unfinished snapshot was left behind")
	require.DirExists(t, complete, "a complete snapshot was removed")
	_, ok := s.FSM().Exists("/n")
	require.True(t, ok)
}
