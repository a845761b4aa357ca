package server

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	wal "github.com/hashicorp/raft-wal"
	walfs "github.com/hashicorp/raft-wal/fs"
	"github.com/hashicorp/raft-wal/metadb"
	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
	"go.etcd.io/bbolt"
)

// Log store kinds (Config.LogStore).
const (
	// LogStoreAuto uses the store a data dir already holds, and LogStoreWAL
	// for a new one.
	LogStoreAuto = ""
	// LogStoreWAL is hashicorp/raft-wal: append-only, preallocated segment
	// files, one fsync per Raft batch, compacted segments deleted. It is
	// the default since it measured faster than bolt (README, Performance).
	LogStoreWAL = "wal"
	// LogStoreBolt is raft-boltdb/v2 on bbolt (raft.db): a B+tree that
	// fsyncs twice per batch and maps the whole file into memory.
	LogStoreBolt = "bolt"
)

const (
	// boltFile is the raft-boltdb log and stable store in a data dir.
	boltFile = "raft.db"
	// walDir is raft-wal's directory in a data dir.
	walDir = "wal"
	// DefaultWALSegmentSize is the size of one raft-wal segment file: the
	// disk a data dir needs at least, and the granularity of compaction.
	DefaultWALSegmentSize = 64 << 20
	// LogCacheSize is how many of the newest Raft log entries a data dir's
	// log store keeps in memory, so the leader replicates them to
	// followers without reading them back from disk.
	LogCacheSize = 1024
)

// logStoreKind resolves LogStoreAuto for a data dir: an existing raft.db
// keeps bolt, so upgrading never strands a log. (Config.Validate has
// rejected any other value.)
func logStoreKind(cfg *Config) string {
	if cfg.LogStore != LogStoreAuto {
		return cfg.LogStore
	}
	if _, err := os.Stat(filepath.Join(cfg.logDir(), boltFile)); err == nil {
		return LogStoreBolt
	}
	return LogStoreWAL
}

// openLogStore opens the Raft log and stable store in cfg.logDir(): the
// data dir, or the log dir (zoo.cfg dataLogDir). errs (if not nil) records
// the errors of file operations the store runs in the background.
func openLogStore(cfg *Config, errs *fileErrors) (raft.LogStore, raft.StableStore, io.Closer, error) {
	if err := checkLogDir(cfg); err != nil {
		return nil, nil, nil, err
	}
	if err := checkDataDirMarks(cfg); err != nil {
		return nil, nil, nil, err
	}
	if err := os.MkdirAll(cfg.logDir(), 0o750); err != nil {
		return nil, nil, nil, err
	}
	if logStoreKind(cfg) == LogStoreBolt {
		// The free list is rebuilt on open instead of written on every
		// commit: one fewer page to sync per Raft batch.
		bolt, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(cfg.logDir(), boltFile), NoSync: cfg.NoSync,
			BoltOptions: &bbolt.Options{Timeout: 10 * time.Second, NoFreelistSync: true, FreelistType: bbolt.FreelistMapType}})
		if err != nil {
			return nil, nil, nil, fmt.Errorf("open raft log: %w", err)
		}
		return bolt, bolt, bolt, nil
	}
	dir := filepath.Join(cfg.logDir(), walDir)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, nil, err
	}
	size := cfg.WALSegmentSize
	if size <= 0 {
		size = DefaultWALSegmentSize
	}
	vfs := walVFS{VFS: walfs.New(), noSync: cfg.NoSync, errs: errs}
	if cfg.hooks != nil {
		vfs.createHook = cfg.hooks.createSegment
	}
	// raft-wal's Close leaves the meta store (a bbolt file) open and
	// locked; closing it ourselves lets a server reopen its data dir.
	meta := &metadb.BoltMetaDB{}
	state, err := meta.Load(dir)
	if err == nil {
		err = verifyWAL(dir, state)
	}
	if err != nil {
		_ = meta.Close()
		return nil, nil, nil, fmt.Errorf("open raft log: %w", err)
	}
	w, err := wal.Open(dir, wal.WithSegmentSize(size), wal.WithSegmentFiler(segment.NewFiler(dir, vfs)),
		wal.WithMetaStore(meta), wal.WithLogger(raftLogger(cfg, "wal")))
	if err != nil {
		_ = meta.Close()
		return nil, nil, nil, fmt.Errorf("open raft log: %w", err)
	}
	return w, w, walCloser{w, meta}, nil
}

// walCloser closes the WAL, then its meta store.
type walCloser struct {
	w    *wal.WAL
	meta *metadb.BoltMetaDB
}

func (c walCloser) Close() error {
	return errors.Join(c.w.Close(), c.meta.Close())
}

// walVFS is raft-wal's file system with fsync optionally skipped
// (Config.NoSync); raft-wal itself always syncs. It records the errors of
// segment creation, which raft-wal runs in the background and only logs
// ("rotate error"), so that the failed append that follows can name the
// cause (failStopLog).
type walVFS struct {
	types.VFS
	noSync bool
	errs   *fileErrors
	// createHook (tests only) fails a segment's creation with its error.
	createHook func(name string) error
}

func (v walVFS) Create(dir, name string, size uint64) (types.WritableFile, error) {
	var (
		f   types.WritableFile
		err error
	)
	if v.createHook != nil {
		err = v.createHook(name)
	}
	if err == nil {
		f, err = v.VFS.Create(dir, name, size)
	}
	if err != nil && v.errs != nil {
		v.errs.record(fmt.Errorf("create segment %s: %w", name, err))
	}
	return v.wrap(f, err)
}

func (v walVFS) OpenWriter(dir, name string) (types.WritableFile, error) {
	f, err := v.VFS.OpenWriter(dir, name)
	return v.wrap(f, err)
}

func (v walVFS) wrap(f types.WritableFile, err error) (types.WritableFile, error) {
	if err != nil || !v.noSync {
		return f, err
	}
	return noSyncFile{f}, nil
}

// noSyncFile is a segment file whose Sync does nothing.
type noSyncFile struct{ types.WritableFile }

func (noSyncFile) Sync() error { return nil }
