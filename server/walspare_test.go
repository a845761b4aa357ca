package server

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/stretchr/testify/require"
)

func openTestWAL(t *testing.T, dir string, noSync bool) (raft.LogStore, walCloser) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir, cfg.NoSync, cfg.WALSegmentSize = dir, noSync, 1<<20
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	ls, _, closer, err := openLogStore(&cfg)
	require.NoError(t, err)
	return ls, closer.(walCloser)
}

func waitSpare(t *testing.T, s *walSpare) {
	t.Helper()
	require.Eventually(t, s.isReady, 20*time.Second, time.Millisecond, "no spare segment prepared")
}

func entry(i uint64) *raft.Log {
	return &raft.Log{Index: i, Term: 1, Type: raft.LogCommand, Data: bytes.Repeat([]byte{byte(i)}, 4000)}
}

// TestWALSpareSegments: no spare is written while the first segment is
// less than half full; past that one is prepared, raft-wal's next segment
// is made from it, and so on. The log reads back whole after a reopen,
// and closing removes the spare.
func TestWALSpareSegments(t *testing.T) {
	dir := t.TempDir()
	ls, c := openTestWAL(t, dir, false)
	require.NotNil(t, c.spare)
	next := uint64(1)
	store := func() { // 10 entries of 4 KB
		t.Helper()
		var batch []*raft.Log
		for range 10 {
			batch = append(batch, entry(next))
			next++
		}
		require.NoError(t, ls.StoreLogs(batch))
	}
	for range 5 { // 200 KB of a 1 MiB segment
		store()
	}
	require.NoFileExists(t, filepath.Join(dir, walDir, walSpareName), "a small log writes no spare")
	for round := int64(1); round <= 3; round++ {
		for range 14 { // 560 KB: past the middle of the segment
			store()
		}
		waitSpare(t, c.spare)
		// raft-wal rotates when a batch finds the segment full.
		for i := 0; c.spare.used.Load() < round; i++ {
			require.Less(t, i, 40, "round %d: no segment made from the spare", round)
			store()
		}
		require.False(t, c.spare.isReady(), "the spare was taken")
	}
	segs, err := filepath.Glob(filepath.Join(dir, walDir, "*.wal"))
	require.NoError(t, err)
	require.Len(t, segs, 4, "the first segment and three from spares")
	for range 15 {
		store()
	}
	waitSpare(t, c.spare)
	require.FileExists(t, filepath.Join(dir, walDir, walSpareName))
	require.NoError(t, c.Close())
	require.NoFileExists(t, filepath.Join(dir, walDir, walSpareName), "close removes the spare")

	ls, c = openTestWAL(t, dir, false)
	defer func() { require.NoError(t, c.Close()) }()
	for i := uint64(1); i < next; i++ {
		var l raft.Log
		require.NoError(t, ls.GetLog(i, &l), "entry %d", i)
		require.Equal(t, entry(i).Data, l.Data, "entry %d", i)
	}
}

// TestWALSpareStale: a spare left by an earlier process is never used (it
// may be incomplete): open removes it, and a new one is all zeros.
func TestWALSpareStale(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, walDir), 0o750))
	stale := filepath.Join(dir, walDir, walSpareName)
	require.NoError(t, os.WriteFile(stale, bytes.Repeat([]byte{0xff}, 4096), 0o644))
	_, c := openTestWAL(t, dir, false)
	defer func() { require.NoError(t, c.Close()) }()
	require.NoFileExists(t, stale, "a stale spare is removed on open")
	c.spare.prepare()
	waitSpare(t, c.spare)
	b, err := os.ReadFile(stale)
	require.NoError(t, err)
	require.Len(t, b, 1<<20)
	require.Equal(t, -1, bytes.IndexFunc(b, func(r rune) bool { return r != 0 }), "the spare is all zeros")
}

// TestWALSpareNoSync: without fsync there is no spare, and no file for it.
func TestWALSpareNoSync(t *testing.T) {
	dir := t.TempDir()
	_, c := openTestWAL(t, dir, true)
	require.Nil(t, c.spare)
	require.NoFileExists(t, filepath.Join(dir, walDir, walSpareName))
	require.NoError(t, c.Close())
}

// TestWALSpareExisting: taking a spare for a name that exists fails, as
// raft-wal's own Create does, and leaves both files alone.
func TestWALSpareExisting(t *testing.T) {
	dir := t.TempDir()
	s, err := newWALSpare(dir, 4096, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.close()) }()
	s.prepare()
	waitSpare(t, s)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.wal"), []byte("keep"), 0o644))
	_, ok, err := s.take(dir, "x.wal", 4096)
	require.True(t, ok)
	require.ErrorIs(t, err, os.ErrExist)
	b, _ := os.ReadFile(filepath.Join(dir, "x.wal"))
	require.Equal(t, "keep", string(b))
	require.True(t, s.isReady())
	_, ok, err = s.take(dir, "y.wal", 8192)
	require.False(t, ok, "a spare of another size is not used")
	require.NoError(t, err)
}

// TestWALFirstSegmentZeroed: with no spare ready (a new data dir), Create
// writes the segment's zeros itself; the file is whole, synced with
// fdatasync, and Create fails on an existing name as raft-wal's does.
func TestWALFirstSegmentZeroed(t *testing.T) {
	dir := t.TempDir()
	s, err := newWALSpare(dir, 1<<20, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer func() { require.NoError(t, s.close()) }()
	v := walVFS{VFS: walfs.New(), spare: s}
	f, err := v.Create(dir, "a.wal", 1<<20)
	require.NoError(t, err)
	seg, ok := f.(*segmentFile)
	require.True(t, ok, "%T", f)
	_, ok = seg.WritableFile.(*spareFile)
	require.True(t, ok, "a zero-filled file, synced with fdatasync: %T", seg.WritableFile)
	_, err = f.WriteAt([]byte("data"), 0)
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.NoError(t, f.Close())
	b, err := os.ReadFile(filepath.Join(dir, "a.wal"))
	require.NoError(t, err)
	require.Len(t, b, 1<<20)
	require.Equal(t, "data", string(b[:4]))
	require.Equal(t, -1, bytes.IndexFunc(b[4:], func(r rune) bool { return r != 0 }), "the rest is zeros")

	_, err = v.Create(dir, "a.wal", 1<<20)
	require.ErrorIs(t, err, os.ErrExist)
	require.False(t, s.isReady(), "a small file starts no spare")
}
