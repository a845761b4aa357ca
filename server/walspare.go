package server

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft-wal/types"
)

// raft-wal preallocates each new segment with fallocate. On ext4 (and
// XFS) that leaves unwritten extents: every fsync that writes into a new
// block must also convert an extent and commit that metadata to the
// journal, and an fsync commits the file's new mtime too. A segment whose
// blocks were written with zeros beforehand, synced with fdatasync, needs
// only its data written and the disk's cache flushed. ZooKeeper pads its
// transaction log with zeros and syncs it with force(false) (fdatasync);
// PostgreSQL zero-fills its WAL segments. On the benchmark VM, 16-client
// fsync writes went from 20.3k/20.1k to 22.1k/23.5k create/set ops/s
// (three alternating runs), at one client no change.
//
// Every segment is therefore zero-filled. Writing 64 MiB of zeros when
// raft-wal asks for a segment stalls the log (~40 ms here), so walSpare
// prepares the next segment in the background: a file of zeros, synced,
// under a name raft-wal does not list (it only reads "*.wal"). It starts
// once the segment being written is half full, so a small log (a test's,
// a quiet cluster's) writes one segment only. Create renames the spare
// into place; without one ready (the first segment of a data dir) it
// zero-fills the new segment itself. A spare is trusted only by the
// process that wrote it: one left by a crash is deleted on open, since it
// may be incomplete. Segments raft-wal reopens after a restart keep its
// own files (fsync).

const (
	// walSpareName is the spare segment in the WAL directory.
	walSpareName = "next-segment.zero"
	// walSpareChunk is written per step while preparing a spare.
	walSpareChunk = 1 << 20
	// walSparePace is the pause after each chunk, so a spare's writeback
	// does not crowd out the log's own fsyncs: 64 MiB take ~1 s, while a
	// segment lasts several seconds even under full write load.
	walSparePace = 10 * time.Millisecond
	// walSpareSyncEvery bounds the dirty zeros between fsyncs of a spare.
	walSpareSyncEvery = 8 << 20
)

// walSpare keeps at most one zero-filled segment file ready in dir.
type walSpare struct {
	dir  string
	size uint64
	log  *slog.Logger

	mu        sync.Mutex
	ready     bool // the spare is complete and synced (by this process)
	preparing bool
	closed    bool
	wg        sync.WaitGroup
	stop      chan struct{}

	// used counts segments created from a spare (tests, metrics).
	used atomic.Int64
}

// newWALSpare deletes any spare left in dir by an earlier process.
func newWALSpare(dir string, size uint64, log *slog.Logger) (*walSpare, error) {
	if err := os.Remove(filepath.Join(dir, walSpareName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale WAL spare: %w", err)
	}
	return &walSpare{dir: dir, size: size, log: log, stop: make(chan struct{})}, nil
}

// watch wraps a segment file so that the first write past its middle
// starts preparing the next segment.
func (s *walSpare) watch(f types.WritableFile) types.WritableFile {
	return &segmentFile{WritableFile: f, half: int64(s.size / 2), spare: s}
}

// segmentFile is a segment being written (see walSpare.watch).
type segmentFile struct {
	types.WritableFile
	half    int64
	spare   *walSpare
	started atomic.Bool
}

func (f *segmentFile) WriteAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > f.half && !f.started.Swap(true) {
		f.spare.prepare()
	}
	return f.WritableFile.WriteAt(p, off)
}

// take renames the spare to name if one is ready and fits, and opens it.
// ok is false when there is none; the caller then creates the file itself.
func (s *walSpare) take(dir, name string, size uint64) (f types.WritableFile, ok bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ready || s.closed || dir != s.dir || size != s.size {
		return nil, false, nil
	}
	dst := filepath.Join(dir, name)
	// Create must fail on an existing file (raft-wal's FS uses O_EXCL);
	// rename would replace it.
	if _, err := os.Lstat(dst); err == nil {
		return nil, true, fmt.Errorf("create %s: %w", dst, fs.ErrExist)
	}
	if err := os.Rename(filepath.Join(dir, walSpareName), dst); err != nil {
		s.ready = false
		return nil, false, nil // fall back to a fresh file
	}
	s.ready = false
	file, err := os.OpenFile(dst, os.O_RDWR, 0o644)
	if err != nil {
		return nil, true, err
	}
	s.used.Add(1)
	return &spareFile{File: file, dir: dir}, true, nil
}

// isReady reports whether a spare is waiting to be taken.
func (s *walSpare) isReady() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ready
}

// prepare starts writing a new spare unless one is ready or underway.
func (s *walSpare) prepare() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prepareLocked()
}

func (s *walSpare) prepareLocked() {
	if s.ready || s.preparing || s.closed {
		return
	}
	s.preparing = true
	s.wg.Add(1)
	go s.write()
}

// write fills the spare with zeros and syncs it, then marks it ready.
func (s *walSpare) write() {
	defer s.wg.Done()
	err := s.fill(filepath.Join(s.dir, walSpareName))
	s.mu.Lock()
	defer s.mu.Unlock()
	s.preparing = false
	if err != nil {
		_ = os.Remove(filepath.Join(s.dir, walSpareName))
		if !s.closed {
			s.log.Warn("preparing a WAL segment failed; the next one is created plain", "err", err)
		}
		return
	}
	s.ready = !s.closed
}

var errSpareStopped = errors.New("stopped")

func (s *walSpare) fill(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	return writeZeros(f, s.size, func() error {
		select {
		case <-s.stop:
			return errSpareStopped
		case <-time.After(walSparePace):
			return nil
		}
	})
}

// writeZeros fills f with size bytes of zeros and syncs it, calling pace
// (if not nil) after each chunk.
func writeZeros(f *os.File, size uint64, pace func() error) error {
	zeros := make([]byte, walSpareChunk)
	var dirty uint64
	for off := uint64(0); off < size; {
		n := min(uint64(len(zeros)), size-off)
		if _, err := f.WriteAt(zeros[:n], int64(off)); err != nil {
			return err
		}
		off += n
		if dirty += n; dirty >= walSpareSyncEvery || off == size {
			if err := f.Sync(); err != nil {
				return err
			}
			dirty = 0
		}
		if pace != nil {
			if err := pace(); err != nil {
				return err
			}
		}
	}
	return nil
}

// createZeroed creates segment name in dir, zero-filled and synced, when
// no spare is ready. Like raft-wal's Create it fails if the file exists.
func createZeroed(dir, name string, size uint64) (types.WritableFile, error) {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := writeZeros(f, size, nil); err != nil {
		_ = f.Close()
		_ = os.Remove(path)
		return nil, err
	}
	return &spareFile{File: f, dir: dir}, nil
}

// close stops any preparation and removes the spare.
func (s *walSpare) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.stop)
	s.mu.Unlock()
	s.wg.Wait()
	err := os.Remove(filepath.Join(s.dir, walSpareName))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return err
}

// spareFile is a zero-filled segment. Sync is fdatasync: the file's size
// and blocks are fixed, so only its data needs writing. The first Sync
// also syncs the directory, so the file's name (a rename, or a creation)
// is durable before raft-wal relies on the segment, as raft-wal's own
// files do after creation.
type spareFile struct {
	*os.File
	dir    string
	synced atomic.Bool
}

func (f *spareFile) Sync() error {
	if err := datasync(f.File); err != nil {
		return err
	}
	if f.synced.Load() {
		return nil
	}
	d, err := os.Open(f.dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return err
	}
	f.synced.Store(true)
	return nil
}
