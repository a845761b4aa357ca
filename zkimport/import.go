package zkimport

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paddockzk/paddock/fsm"
)

// Options configures Import.
type Options struct {
	// Dir is ZooKeeper's dataDir: the directory holding version-2/ (or
	// version-2 itself) with the snapshot.<zxid> files.
	Dir string
	// LogDir is ZooKeeper's dataLogDir, where the log.<zxid> files are, if
	// it differs from Dir.
	LogDir string
	// MaxField bounds any single string or buffer in the files; 0 means
	// DefaultMaxField.
	MaxField int
	// Secret is the cluster secret to install (it keys session
	// passwords); nil means 32 random bytes.
	Secret []byte
	// Now is the clock used to start the session-id counter; nil means
	// time.Now.
	Now func() time.Time
	// AcceptCorruptTail imports the transactions before an entry with a bad
	// checksum or an impossible length in the last log file, with a
	// warning. By default that is an error, as ZooKeeper refuses to load
	// such a log (a torn, zero-filled or truncated tail is not corruption:
	// both end the log there).
	AcceptCorruptTail bool
}

// Report says what Import read and did.
type Report struct {
	// Snapshot is the snapshot file used and SnapshotZxid its zxid.
	Snapshot     string
	SnapshotZxid int64
	// SkippedSnapshots lists newer snapshots that could not be used, with
	// the reason.
	SkippedSnapshots []string
	// LogFiles are the transaction logs read, Txns the transactions
	// replayed (those after the snapshot's zxid).
	LogFiles []string
	Txns     int
	// ZooKeeperZxid is the last zxid of the ZooKeeper state; LastZxid is
	// the imported state's zxid in Paddock (see the package doc).
	ZooKeeperZxid int64
	LastZxid      int64
	// Counts of the imported state.
	Nodes, Sessions, Ephemerals int
	// Warnings lists everything imported differently from how ZooKeeper
	// holds it, or not at all.
	Warnings []string
}

// Import reads ZooKeeper's newest valid snapshot in opts.Dir, replays the
// transaction logs after it and returns the resulting state as a Paddock
// fsm (see the package doc for what is kept and how zxids are mapped). Seed
// a data dir with it with server.SeedDataDir.
func Import(opts Options) (*fsm.FSM, *Report, error) {
	maxField := opts.MaxField
	if maxField <= 0 {
		maxField = DefaultMaxField
	}
	snapDir := versionDir(opts.Dir)
	logDir := snapDir
	if opts.LogDir != "" {
		logDir = versionDir(opts.LogDir)
	}
	rep := &Report{}
	t, err := loadNewestSnapshot(snapDir, maxField, rep)
	if err != nil {
		return nil, nil, err
	}
	if err := replayLogs(t, logDir, maxField, opts.AcceptCorruptTail, rep); err != nil {
		return nil, nil, err
	}
	rep.ZooKeeperZxid = t.lastZxid
	if err := t.dropUnimportable(); err != nil {
		return nil, nil, err
	}
	f, err := t.toFSM(opts, rep)
	if err != nil {
		return nil, nil, err
	}
	rep.Warnings = append(rep.Warnings, t.warnings...)
	return f, rep, nil
}

// versionDir returns dir/version-2 when it exists (ZooKeeper keeps its
// files there), else dir.
func versionDir(dir string) string {
	if fi, err := os.Stat(filepath.Join(dir, "version-2")); err == nil && fi.IsDir() {
		return filepath.Join(dir, "version-2")
	}
	return dir
}

type zkFile struct {
	path string
	zxid int64
	ext  string // after "<prefix>.<zxid>.", for snapshots: "gz", "snappy"
}

// listFiles returns the files named prefix.<hex zxid>[.ext] in dir, sorted
// by zxid (Util.getZxidFromName and sortDataDir).
func listFiles(dir, prefix string) ([]zkFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []zkFile
	for _, e := range entries {
		parts := strings.Split(e.Name(), ".")
		if e.IsDir() || len(parts) < 2 || parts[0] != prefix {
			continue
		}
		z, err := strconv.ParseUint(parts[1], 16, 64)
		if err != nil {
			continue
		}
		f := zkFile{path: filepath.Join(dir, e.Name()), zxid: int64(z)}
		if len(parts) > 2 {
			f.ext = parts[len(parts)-1]
		}
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b zkFile) int { return cmp.Compare(a.zxid, b.zxid) })
	return out, nil
}

// loadNewestSnapshot parses the newest snapshot that is complete and
// intact, as FileSnap.deserialize does, falling back to older ones.
func loadNewestSnapshot(dir string, maxField int, rep *Report) (*tree, error) {
	files, err := listFiles(dir, "snapshot")
	if err != nil {
		return nil, fmt.Errorf("zkimport: %w", err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("zkimport: no snapshot.<zxid> files in %s (is it ZooKeeper's dataDir?)", dir)
	}
	for i := len(files) - 1; i >= 0; i-- {
		f := files[i]
		s, err := readSnapshotFile(f, maxField)
		if err != nil {
			rep.SkippedSnapshots = append(rep.SkippedSnapshots, fmt.Sprintf("%s: %v", f.path, err))
			continue
		}
		rep.Snapshot, rep.SnapshotZxid = f.path, f.zxid
		if s.trailer != "" {
			s.tree.warnf("%s: %s", f.path, s.trailer)
		}
		s.tree.lastZxid = f.zxid
		return s.tree, nil
	}
	return nil, fmt.Errorf("zkimport: no valid snapshot in %s:\n  %s", dir, strings.Join(rep.SkippedSnapshots, "\n  "))
}

func readSnapshotFile(f zkFile, maxField int) (*snap, error) {
	if f.ext == "snappy" {
		return nil, errors.New("snappy-compressed snapshots are not supported (let ZooKeeper write an uncompressed or gz one)")
	}
	fh, err := os.Open(f.path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var in io.Reader = fh
	if f.ext == "gz" {
		gz, err := gzip.NewReader(fh)
		if err != nil {
			return nil, err
		}
		defer gz.Close()
		in = gz
	} else if err := checkSnapshotTail(fh); err != nil {
		return nil, err
	}
	return readSnapshot(in, maxField)
}

// checkSnapshotTail is SnapStream.isValidCheckedStream: a complete
// snapshot ends with the seal's string "/" (length 1, then '/').
func checkSnapshotTail(fh *os.File) error {
	fi, err := fh.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < 10 {
		return fmt.Errorf("%w: too short to be a snapshot (%d bytes)", ErrFormat, fi.Size())
	}
	tail := make([]byte, 5)
	if _, err := fh.ReadAt(tail, fi.Size()-5); err != nil {
		return err
	}
	if !bytes.Equal(tail, []byte{0, 0, 0, 1, '/'}) {
		return fmt.Errorf("%w: incomplete snapshot (no end marker)", ErrFormat)
	}
	return nil
}

// replayLogs applies the transactions after the snapshot: from the log
// file that starts at or before the snapshot's zxid and every later one
// (FileTxnLog.getLogFiles), skipping entries up to the snapshot's zxid.
func replayLogs(t *tree, dir string, maxField int, accept bool, rep *Report) error {
	files, err := listFiles(dir, "log")
	if err != nil {
		return fmt.Errorf("zkimport: transaction logs: %w", err)
	}
	if len(files) == 0 {
		t.warnf("no log.<zxid> files in %s: only the snapshot is imported (is --log-dir ZooKeeper's dataLogDir?)", dir)
	}
	first := 0
	for i, f := range files {
		if f.zxid <= t.lastZxid {
			first = i
		}
	}
	files = files[first:]
	snapZxid := t.lastZxid
	started := false
	prev := snapZxid
	for i, f := range files {
		rep.LogFiles = append(rep.LogFiles, f.path)
		fh, err := os.Open(f.path)
		if err != nil {
			return fmt.Errorf("zkimport: %w", err)
		}
		tail, err := readLog(fh, maxField, func(x *txn) error {
			if !started {
				if x.hdr.zxid <= snapZxid {
					return nil
				}
				started = true
			}
			switch {
			case x.hdr.zxid <= prev:
				t.warnf("%s: zxid %#x follows %#x (out of order); applied as ZooKeeper does", f.path, x.hdr.zxid, prev)
			case x.hdr.zxid>>32 == prev>>32 && x.hdr.zxid != prev+1:
				t.warnf("%s: zxids %#x to %#x are missing (deleted log files?)", f.path, prev+1, x.hdr.zxid-1)
			}
			prev = max(prev, x.hdr.zxid)
			rep.Txns++
			return t.apply(x)
		})
		_ = fh.Close()
		if err != nil {
			return fmt.Errorf("zkimport: %s: %w", f.path, err)
		}
		switch tail.end {
		case endEOF:
		case endPartial:
			t.warnf("%s: %s at offset %d: the rest of the file is ignored, as ZooKeeper does", f.path, tail.end, tail.offset)
		default:
			if i < len(files)-1 {
				return fmt.Errorf("zkimport: %s: %s at offset %d, and later log files follow: the log is corrupt", f.path, tail.end, tail.offset)
			}
			if !accept {
				return fmt.Errorf("zkimport: %s: %s at offset %d: ZooKeeper refuses to load this log too "+
					"(paddock import-zk --accept-corrupt-tail imports the transactions before it)", f.path, tail.end, tail.offset)
			}
			t.warnf("%s: %s at offset %d: treated as the end of the log (--accept-corrupt-tail)", f.path, tail.end, tail.offset)
		}
	}
	return nil
}

// dropUnimportable removes what a ZooKeeper server would drop on loading
// (ephemerals whose session is not in the session table) and what Paddock
// cannot represent (sessions with a negative id, which ZooKeeper servers
// with myid 128 to 254 hand out: Paddock reads a negative ephemeralOwner as
// a container or TTL encoding), deleting ephemerals at the last zxid as
// ZooKeeper's loadData does.
func (t *tree) dropUnimportable() error {
	for p, n := range t.nodes {
		if kindOf(n.stat.owner) == ownerUnsupported {
			return fmt.Errorf("zkimport: node %q has ephemeralOwner %#x, an extended node type Paddock does not know", p, uint64(n.stat.owner))
		}
	}
	owners := make([]int64, 0, len(t.ephemerals))
	for id := range t.ephemerals {
		owners = append(owners, id)
	}
	slices.Sort(owners)
	for _, id := range owners {
		if _, ok := t.sessions[id]; !ok {
			t.warnf("session 0x%x is not in the session table: its %d ephemeral(s) are deleted, as ZooKeeper does on startup", uint64(id), len(t.ephemerals[id]))
			t.killSession(id, t.lastZxid)
		}
	}
	ids := make([]int64, 0, len(t.sessions))
	for id := range t.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if id <= 0 {
			t.warnf("session 0x%x has a negative id (ZooKeeper myid >= 128), which Paddock cannot represent: it is dropped with its %d ephemeral(s), as if expired", uint64(id), len(t.ephemerals[id]))
			t.killSession(id, t.lastZxid)
			delete(t.sessions, id)
		}
	}
	return nil
}

// builtinChildren is how many children of path every tree has without
// having created them: /zookeeper under /, quota and config under
// /zookeeper.
func builtinChildren(path string) int {
	switch path {
	case fsm.RootPath:
		return 1
	case fsm.ZooKeeperPath:
		return 2
	}
	return 0
}

// configSubtree reports whether path is /zookeeper/config or under it.
func configSubtree(path string) bool {
	return path == fsm.ConfigPath || strings.HasPrefix(path, fsm.ConfigPath+"/")
}

// toFSM maps zxids and builds the Paddock state.
func (t *tree) toFSM(opts Options, rep *Report) (*fsm.FSM, error) {
	var zxids []int64
	if t.lastZxid > 0 {
		zxids = append(zxids, t.lastZxid)
	}
	for p, n := range t.nodes {
		if configSubtree(p) {
			continue
		}
		for _, z := range []int64{n.stat.czxid, n.stat.mzxid, n.stat.pzxid} {
			if z > 0 {
				zxids = append(zxids, z)
			}
		}
	}
	slices.Sort(zxids)
	zxids = slices.Compact(zxids)
	rank := make(map[int64]int64, len(zxids))
	for i, z := range zxids {
		rank[z] = int64(i + 1)
	}
	mapZxid := func(z int64) int64 {
		if z <= 0 {
			return 0
		}
		return rank[z]
	}
	st := &fsm.State{LastZxid: max(int64(len(zxids)), 1), Secret: opts.Secret}
	if st.Secret == nil {
		st.Secret = make([]byte, 32)
		if _, err := rand.Read(st.Secret); err != nil {
			return nil, fmt.Errorf("zkimport: cluster secret: %w", err)
		}
	}
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	// New session ids start as fsm's first createSession would start them:
	// the time in the bits where ZooKeeper also puts it, server id 0 in
	// the top byte. That is above every id a ZooKeeper server with myid 0
	// handed out before now (bumped past any imported one just in case of
	// clock skew), and ids of servers with myid 1 to 127 have their myid in
	// the top byte, so no id ZooKeeper ever used, live or closed, recurs.
	st.NextSession = int64(uint64(now().UnixMilli()<<24) >> 8)
	for id, timeout := range t.sessions {
		st.Sessions = append(st.Sessions, fsm.SessionInfo{ID: id, Timeout: timeout})
		if id>>56 == 0 && id >= st.NextSession {
			st.NextSession = id + 1
		}
	}
	for p, n := range t.nodes {
		if configSubtree(p) {
			if p != fsm.ConfigPath {
				t.warnf("%q is under %s, which Paddock manages itself: not imported", p, fsm.ConfigPath)
			}
			continue
		}
		s := n.stat
		ns := fsm.NodeState{Path: p, Data: n.data, ACL: n.acl}
		ns.Stat.Czxid, ns.Stat.Mzxid, ns.Stat.Pzxid = mapZxid(s.czxid), mapZxid(s.mzxid), mapZxid(s.pzxid)
		ns.Stat.Ctime, ns.Stat.Mtime = s.ctime, s.mtime
		ns.Stat.Version, ns.Stat.Aversion = s.version, s.aversion
		// ZooKeeper stores the number of child creates (the sequential
		// suffix) and shows clients 2*that-numChildren, i.e. creates plus
		// deletes (DataNode.copyStat, in Java's wrapping int arithmetic).
		// Paddock keeps both counts, its cversion without subtracting the
		// built-in children of / and /zookeeper, which were never created.
		ns.Seq = s.cversion
		ns.Stat.Cversion = 2*s.cversion - int32(len(n.children)-builtinChildren(p))
		ns.Stat.EphemeralOwner = s.owner
		st.Nodes = append(st.Nodes, ns)
		if kindOf(s.owner) == ownerSession {
			rep.Ephemerals++
		}
	}
	f, err := fsm.BuildState(st)
	if err != nil {
		return nil, fmt.Errorf("zkimport: %w", err)
	}
	rep.LastZxid = st.LastZxid
	rep.Nodes = f.Stats().Nodes
	rep.Sessions = len(st.Sessions)
	return f, nil
}
