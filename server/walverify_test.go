package server

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/hashicorp/raft-wal/types"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

// walBatch is one committed batch of a segment file: its frames start at
// start, its commit frame at commit.
type walBatch struct{ start, commit int64 }

// walBatches parses a segment file's frames up to the first zero header
// (independently of segmentScan) and returns its batches.
func walBatches(t *testing.T, path string) []walBatch {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var out []walBatch
	start, off := int64(0), int64(walFileHeaderLen)
	for off+walFrameHeaderLen <= int64(len(b)) && b[off] != 0 {
		typ, n := b[off], int64(binary.LittleEndian.Uint32(b[off+4:off+8]))
		if typ == walFrameCommit {
			out = append(out, walBatch{start, off})
			off += walFrameHeaderLen
			start = off
			continue
		}
		off += walFrameHeaderLen + n + int64(walPad(int(n)))
	}
	return out
}

// walSegments returns the data dir's segment files, oldest first.
func walSegments(t *testing.T, dataDir string) []string {
	t.Helper()
	segs, err := filepath.Glob(filepath.Join(dataDir, walDir, "*.wal"))
	require.NoError(t, err)
	sort.Strings(segs)
	require.NotEmpty(t, segs)
	return segs
}

// writeValues starts a server on cfg, creates /v-0 ... /v-(n-1), each
// with data "value-i" and one write (one batch) at a time, and stops it.
func writeValues(t *testing.T, cfg Config, n int, size int) {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	for i := range n {
		data := append([]byte(fmt.Sprintf("value-%d-", i)), bytes.Repeat([]byte{'x'}, size)...)
		res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate,
			Path: fmt.Sprintf("/v-%d", i), Data: data, ACL: wire.OpenACLUnsafe}}})
		require.NoError(t, err)
		require.Equal(t, wire.OK, res.Err)
	}
	require.NoError(t, s.Close())
}

// flipByte flips one byte of a file.
func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	require.NoError(t, err)
	defer f.Close()
	var b [1]byte
	_, err = f.ReadAt(b[:], off)
	require.NoError(t, err)
	b[0] ^= 0x20
	_, err = f.WriteAt(b[:], off)
	require.NoError(t, err)
}

// valueOffset returns where "value-i-" starts in a segment file.
func valueOffset(t *testing.T, path string, i int) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	at := bytes.Index(b, []byte(fmt.Sprintf("value-%d-", i)))
	require.GreaterOrEqual(t, at, 0, "value-%d not in %s", i, path)
	return int64(at)
}

// requireValues starts a server on cfg (stopped when the test ends) and
// checks that it holds /v-0 ... /v-(n-1).
func requireValues(t *testing.T, cfg Config, n int) *Server {
	t.Helper()
	s, err := New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	for i := range n {
		_, ok := s.FSM().Exists(fmt.Sprintf("/v-%d", i))
		require.True(t, ok, "/v-%d", i)
	}
	return s
}

func requireDamaged(t *testing.T, cfg Config, want string) {
	t.Helper()
	s, err := New(cfg)
	if err == nil {
		_ = s.Close()
	}
	require.Error(t, err, "a server started on a damaged log")
	require.ErrorContains(t, err, "is damaged: ")
	require.ErrorContains(t, err, want)
	require.ErrorContains(t, err, "restore the data dir from a backup")
}

// A byte flipped in a batch that later batches follow was replayed as
// written (the znode served other data): now the server refuses to start
// and names the batch.
func TestDamagedLogBatchRefusesToStart(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	writeValues(t, cfg, 20, 32)
	seg := walSegments(t, cfg.DataDir)[0]
	flipByte(t, seg, valueOffset(t, seg, 5)+8)
	requireDamaged(t, cfg, "does not match its checksum")
}

// The tail's last batch is the one a crash can tear: raft-wal drops it
// (its write was never acknowledged) and the server starts with the rest.
func TestTornLastBatchStarts(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	writeValues(t, cfg, 10, 32)
	seg := walSegments(t, cfg.DataDir)[0]
	batches := walBatches(t, seg)
	last := batches[len(batches)-1]
	require.Greater(t, valueOffset(t, seg, 9), last.start, "the last batch holds the last create")
	flipByte(t, seg, valueOffset(t, seg, 9)+8)

	s := requireValues(t, cfg, 9)
	_, ok := s.FSM().Exists("/v-9")
	require.False(t, ok, "the torn batch was applied")
}

// A changed frame header or a zeroed stretch inside the tail segment made
// raft-wal end the log there, dropping every acknowledged batch behind
// it; the intact batches that follow give the damage away.
func TestDamagedFrameHeaderInTheTailRefusesToStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		harm func(t *testing.T, path string, b walBatch)
	}{
		{"unknown frame type", func(t *testing.T, path string, b walBatch) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.WriteAt([]byte{0x7f}, b.start)
			require.NoError(t, err)
		}},
		{"zeroed batch", func(t *testing.T, path string, b walBatch) {
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			require.NoError(t, err)
			defer f.Close()
			_, err = f.WriteAt(make([]byte, b.commit+walFrameHeaderLen-b.start), b.start)
			require.NoError(t, err)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := durableConfig(t.TempDir(), "")
			writeValues(t, cfg, 20, 32)
			seg := walSegments(t, cfg.DataDir)[0]
			batches := walBatches(t, seg)
			require.Greater(t, len(batches), 10)
			tc.harm(t, seg, batches[len(batches)/2])
			requireDamaged(t, cfg, "an intact batch follows")
		})
	}
}

// A sealed segment must verify to its end, its last batch included.
func TestDamagedSealedSegmentRefusesToStart(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	cfg.WALSegmentSize = 64 << 10
	writeValues(t, cfg, 40, 4<<10) // several segments
	segs := walSegments(t, cfg.DataDir)
	require.Greater(t, len(segs), 2)
	sealed := segs[0]
	batches := walBatches(t, sealed)
	last := batches[len(batches)-1]
	flipByte(t, sealed, (last.start+last.commit)/2)
	requireDamaged(t, cfg, "does not match its checksum")
}

// A tail segment cut short inside its committed data lost acknowledged
// writes that raft-wal would not miss: the server refuses to start.
func TestTruncatedTailSegmentRefusesToStart(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	writeValues(t, cfg, 20, 32)
	seg := walSegments(t, cfg.DataDir)[0]
	require.NoError(t, os.Truncate(seg, valueOffset(t, seg, 15)))
	requireDamaged(t, cfg, "truncated")
}

// An intact log with several sealed segments starts and holds every write.
func TestIntactSegmentsVerify(t *testing.T) {
	cfg := durableConfig(t.TempDir(), "")
	cfg.WALSegmentSize = 64 << 10
	writeValues(t, cfg, 40, 4<<10)
	requireValues(t, cfg, 40)
}

// FuzzVerifySegment feeds arbitrary bytes to the segment check, as a
// damaged file would: it returns an answer, never panics, and reads no
// frame larger than raft-wal's largest.
func FuzzVerifySegment(f *testing.F) {
	seed := make([]byte, walFileHeaderLen)
	frame := func(typ byte, n uint32, payload []byte) []byte {
		h := make([]byte, walFrameHeaderLen)
		h[0] = typ
		binary.LittleEndian.PutUint32(h[4:], n)
		return append(h, payload...)
	}
	f.Add(seed)
	f.Add(append(append(append([]byte{}, seed...), frame(walFrameEntry, 8, []byte("abcdefgh"))...), frame(walFrameCommit, 0, nil)...))
	f.Add(append(append([]byte{}, seed...), frame(walFrameIndex, 4, []byte{1, 0, 0, 0, 0, 0, 0, 0})...))
	f.Add(append(append([]byte{}, seed...), frame(walFrameEntry, 1<<30, nil)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "seg.wal")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, info := range []types.SegmentInfo{
			{BaseIndex: 1, SizeLimit: uint32(len(data))},
			{BaseIndex: 1, SizeLimit: 1 << 20, IndexStart: 64, MaxIndex: 3},
		} {
			for _, tail := range []bool{true, false} {
				_ = verifySegment(path, info, tail)
			}
		}
	})
}
