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
//   - logLocationFile records, at the first start, where the Raft log is:
//     "." for the data dir itself (so the data dir may move), or the log
//     dir's absolute path (dataLogDir). A later start whose configuration
//     puts the log elsewhere (another directory, not another name of the
//     same one) is refused, unless the log was moved there (the new place
//     holds a log, the recorded one not):
//     without it the server would start from an empty log (dataLogDir
//     removed: an empty tree, every acknowledged write gone from view) or
//     from another data dir's log.
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
	logLoc, err := logLocation(c)
	if err != nil {
		return err
	}
	mark := filepath.Join(c.DataDir, logLocationFile)
	recorded, err := os.ReadFile(mark)
	record := errors.Is(err, os.ErrNotExist)
	switch {
	case err == nil:
		was := strings.TrimSpace(string(recorded))
		oldDir, newDir := resolveLogLocation(c, was), resolveLogLocation(c, logLoc)
		if was == logLoc || sameDir(oldDir, newDir) {
			break // the same place, however it is named
		}
		// The log was moved where the configuration now says (as the
		// error below tells), or the configuration lost it.
		if !holdsLog(newDir) || holdsLog(oldDir) {
			return fmt.Errorf("the Raft log of data dir %s is in %s (recorded in %s), but this configuration puts it in %s: "+
				"set dataLogDir back, or move the log there with the server stopped", c.DataDir, oldDir, mark, newDir)
		}
		record = true
	case !record:
		return err
	}
	seeded := filepath.Join(c.DataDir, seedFile)
	if fileExists(seeded) && holdsLog(c.logDir()) {
		return fmt.Errorf("data dir %s was seeded by restore or import-zk, but %s already holds a Raft log, "+
			"which would be replayed over the seeded state: point dataLogDir at an empty dir", c.DataDir, c.logDir())
	}
	if record { // no mark yet, or the log moved: record where it is
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

// inDataDir is how logLocationFile records a log kept in the data dir
// itself: relatively, so that a data dir moved or mounted elsewhere keeps
// matching.
const inDataDir = "."

// logLocation is how logLocationFile records c's log location: inDataDir,
// or the log dir's absolute path.
func logLocation(c *Config) (string, error) {
	if !c.separateLogDir() {
		return inDataDir, nil
	}
	return filepath.Abs(c.LogDir)
}

// resolveLogLocation is the dir a recorded location names.
func resolveLogLocation(c *Config, loc string) string {
	if loc == inDataDir {
		return c.DataDir
	}
	return loc
}

// sameDir reports whether a and b name one existing directory (through a
// symlink, a relative path, a move of the data dir).
func sameDir(a, b string) bool {
	x, errA := os.Stat(a)
	y, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(x, y)
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
	if err := writeSynced(tmp, data); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// writeSynced writes data to a new file at path and syncs it.
func writeSynced(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
