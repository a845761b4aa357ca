package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// TestLogDirHoldsRaftLog: with a log dir (zoo.cfg dataLogDir) the Raft log
// lives there and the snapshots in the data dir, for each log store; a
// restart finds both. Dropping the log dir afterwards is refused rather
// than starting without the log.
func TestLogDirHoldsRaftLog(t *testing.T) {
	for _, store := range []string{LogStoreWAL, LogStoreBolt} {
		t.Run(store, func(t *testing.T) {
			data, logs := t.TempDir(), filepath.Join(t.TempDir(), "txnlog")
			cfg := DefaultConfig()
			cfg.Port, cfg.NoSync, cfg.LogStore = 0, true, store
			cfg.DataDir, cfg.LogDir = data, logs
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			s, err := New(cfg)
			require.NoError(t, err)
			res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/a",
				Data: []byte("x"), ACL: wire.OpenACLUnsafe}}})
			require.NoError(t, err)
			require.Equal(t, wire.OK, res.Err)
			require.NoError(t, s.Close())
			file := map[string]string{LogStoreWAL: walDir, LogStoreBolt: boltFile}[store]
			_, err = os.Stat(filepath.Join(logs, file))
			require.NoError(t, err, "the log dir holds the log")
			_, err = os.Stat(filepath.Join(data, file))
			require.True(t, os.IsNotExist(err), "the data dir holds no log: %v", err)

			cfg.LogStore = LogStoreAuto
			s, err = New(cfg)
			require.NoError(t, err)
			data2, _, err := s.FSM().Get("/a")
			require.NoError(t, err)
			require.Equal(t, []byte("x"), data2)
			require.NoError(t, s.Close())

			// The other way round: a log left in the data dir, a log dir added.
			moved := cfg
			moved.DataDir, moved.LogDir = logs, t.TempDir()
			_, err = New(moved)
			require.ErrorContains(t, err, "the Raft log is in the data dir")
		})
	}
}
