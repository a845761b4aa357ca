package server

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func dataDirServer(t *testing.T, dir, store string, noSync bool) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Port, cfg.MaxClientCnxns = 0, 0
	cfg.DataDir, cfg.LogStore, cfg.NoSync = dir, store, noSync
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := New(cfg)
	require.NoError(t, err)
	return s
}

// TestDataDirLogStores writes through each log store, restarts on the same
// data dir with the store left to auto-detection, and reads the write back.
func TestDataDirLogStores(t *testing.T) {
	cases := []struct {
		store  string
		noSync bool
		file   string // what the store leaves in the data dir
	}{
		{LogStoreWAL, false, walDir},
		{LogStoreWAL, true, walDir},
		{LogStoreBolt, false, boltFile},
		{LogStoreAuto, true, walDir}, // a new dir gets raft-wal
	}
	for _, tc := range cases {
		t.Run(tc.store+map[bool]string{true: "-nosync"}[tc.noSync], func(t *testing.T) {
			dir := t.TempDir()
			s := dataDirServer(t, dir, tc.store, tc.noSync)
			for i, p := range []string{"/a", "/a/b"} {
				res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate, Path: p,
					Data: []byte{byte('0' + i)}, ACL: wire.OpenACLUnsafe}}})
				require.NoError(t, err)
				require.Equal(t, wire.OK, res.Err)
			}
			require.NoError(t, s.Close())
			_, err := os.Stat(filepath.Join(dir, tc.file))
			require.NoError(t, err, "the data dir holds %s", tc.file)

			s = dataDirServer(t, dir, LogStoreAuto, tc.noSync)
			defer func() { _ = s.Close() }()
			data, _, err := s.FSM().Get("/a/b")
			require.NoError(t, err)
			require.Equal(t, []byte("1"), data)
			if tc.file == boltFile {
				_, err := os.Stat(filepath.Join(dir, walDir))
				require.True(t, os.IsNotExist(err), "auto keeps an existing raft.db, makes no wal: %v", err)
			}
		})
	}
}

func TestUnknownLogStore(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir, cfg.LogStore = t.TempDir(), "leveldb"
	require.ErrorContains(t, cfg.Validate(), `unknown log store "leveldb"`)
}

// Both log stores keep an entry's AppendedAt (the leader's time, which the
// FSM takes node times from), so a replay after a restart applies an entry
// with the times it had.
func TestLogStoresKeepAppendedAt(t *testing.T) {
	for _, store := range []string{LogStoreWAL, LogStoreBolt} {
		t.Run(store, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir, cfg.LogStore, cfg.NoSync = t.TempDir(), store, true
			logs, _, closer, err := openLogStore(&cfg, nil)
			require.NoError(t, err)
			defer closer.Close()
			at := time.UnixMilli(1_700_000_123_456).Add(789 * time.Microsecond)
			require.NoError(t, logs.StoreLogs([]*raft.Log{{Index: 1, Term: 1, Type: raft.LogCommand, Data: []byte("x"), AppendedAt: at}}))
			var got raft.Log
			require.NoError(t, logs.GetLog(1, &got))
			require.Equal(t, at.UnixMilli(), got.AppendedAt.UnixMilli())
		})
	}
}
