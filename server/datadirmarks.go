package server

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Marker files a data dir keeps beside its state, so that a server never
// starts from a snapshot and a Raft log that do not belong together, nor
// from nothing when its log is elsewhere:
//
//   - logLocationFile records, at the first start, the absolute path of
//     the dir holding the Raft log (the data dir itself unless dataLogDir
//     or --log-dir moved it). A later start whose configuration puts the
//     log elsewhere is refused: without it the server would start from an
//     empty log (dataLogDir removed: an empty tree, every acknowledged
//     write gone from view) or from another data dir's log.
//   - seedFile marks a data dir that restore or import-zk seeded and that
//     no server has started from yet. That start is refused if the log
//     location already holds a log: it would be replayed over the seeded
//     snapshot (an old dataLogDir kept across a restore brings back the
//     writes the restore was meant to undo).
//   - seedIncompleteFile marks a seed in progress. A data dir still holding
//     it was seeded partly (the restore was killed, or failed): the server
//     refuses it, and a new restore into it starts over.
const (
	logLocationFile    = "paddock-log-dir"
	seedFile           = "paddock-seeded"
	seedIncompleteFile = "paddock-seeding"
)

// checkDataDirMarks applies the rules above before the Raft log is
// opened, then records the log's location and clears a seed mark.
func checkDataDirMarks(c *Config) error {
	if c.DataDir == "" {
		return nil
	}
	if fileExists(filepath.Join(c.DataDir, seedIncompleteFile)) {
		return fmt.Errorf("data dir %s holds an interrupted restore or import (%s): run it again into an empty dir, or into this one",
			c.DataDir, seedIncompleteFile)
	}
	logLoc, err := filepath.Abs(c.logDir())
	if err != nil {
		return err
	}
	mark := filepath.Join(c.DataDir, logLocationFile)
	recorded, err := os.ReadFile(mark)
	switch {
	case err == nil:
		if was := strings.TrimSpace(string(recorded)); was != logLoc {
			return fmt.Errorf("the Raft log of data dir %s is in %s (%s), but this configuration puts it in %s: "+
				"set dataLogDir (--log-dir) to %s, or, with the log moved there, write the new path into %s",
				c.DataDir, was, mark, logLoc, was, mark)
		}
	case !errors.Is(err, os.ErrNotExist):
		return err
	}
	seeded := filepath.Join(c.DataDir, seedFile)
	if fileExists(seeded) && holdsLog(logLoc) {
		return fmt.Errorf("data dir %s was seeded by restore or import-zk, but %s already holds a Raft log, "+
			"which would be replayed over the seeded state: point dataLogDir (--log-dir) at an empty dir", c.DataDir, logLoc)
	}
	if err != nil { // no mark yet: record where the log is
		if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
			return err
		}
		if err := writeFileAtomic(mark, []byte(logLoc+"\n")); err != nil {
			return fmt.Errorf("record the log dir: %w", err)
		}
	}
	if err := os.Remove(seeded); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// holdsLog reports whether dir holds a Raft log.
func holdsLog(dir string) bool {
	return fileExists(filepath.Join(dir, walDir)) || fileExists(filepath.Join(dir, boltFile))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// writeFileAtomic writes data to path through a temporary file renamed
// into place, then syncs the directory.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}
