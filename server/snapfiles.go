package server

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// snapshotTmpSuffix ends the name of a snapshot raft.FileSnapshotStore is
// still writing; it renames the directory when the snapshot is complete.
const snapshotTmpSuffix = ".tmp"

// removeUnfinishedSnapshots deletes the directories of snapshots whose
// writing never finished in dir (a data dir's snapshot store): the
// process died while it wrote them. FileSnapshotStore skips such a
// directory on start but never removes it, so every crash during a
// snapshot left one behind, as large as the tree. Call it with the log
// store open: then no other server uses the data dir. It returns the
// names it removed.
func removeUnfinishedSnapshots(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		if !e.IsDir() || !strings.HasSuffix(e.Name(), snapshotTmpSuffix) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return removed, err
		}
		removed = append(removed, e.Name())
	}
	return removed, nil
}
