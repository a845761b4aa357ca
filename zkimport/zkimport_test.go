package zkimport

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

const e1 = int64(1) << 32 // epoch 1

var digestACL = []wire.ACL{{Perms: wire.PermAll, ID: wire.Id{Scheme: "digest", ID: "user:hash="}}}

func st(cz, mz, pz int64) stat {
	// Times as the tx* helpers stamp them, so that a snapshot and the
	// transactions that made it agree.
	return stat{czxid: cz, mzxid: mz, pzxid: pz, ctime: 1_700_000_000_000 + cz, mtime: 1_700_000_000_000 + mz}
}

// exampleSnapshot is a snapshot at e1|5 holding /app (with an ephemeral
// of session 0x11), a container and a TTL node.
func exampleSnapshot() *tsnap {
	s := &tsnap{sessions: [][2]int64{{0x11, 30000}}}
	s.addACL(1, wire.ReadACLUnsafe)
	s.addACL(2, digestACL)
	nodes := baseNodes()
	nodes[0].st = stat{cversion: 3, pzxid: e1 | 5}
	nodes[0].aclRef = -1
	nodes[1].aclRef, nodes[2].aclRef = -1, -1
	app := st(e1|1, e1|3, e1|2)
	app.version, app.cversion, app.aversion = 2, 1, 1
	eph := st(e1|2, e1|2, e1|2)
	eph.owner = 0x11
	c := st(e1|4, e1|4, e1|4)
	c.owner = wire.ContainerOwner
	tt := st(e1|5, e1|5, e1|5)
	tt.owner = wire.TTLOwner(5000)
	s.nodes = append(nodes,
		tnode{path: "/app", data: []byte("hello"), aclRef: 2, st: app},
		tnode{path: "/app/eph", data: []byte("e"), aclRef: -1, st: eph},
		tnode{path: "/c", aclRef: -1, st: c},
		tnode{path: "/t", data: []byte{}, aclRef: -1, st: tt},
	)
	return s
}

func TestReadSnapshot(t *testing.T) {
	for _, digest := range []bool{false, true} {
		s := exampleSnapshot()
		s.digest = digest
		sn, err := readSnapshot(bytes.NewReader(s.bytes()), 0)
		require.NoError(t, err)
		require.Empty(t, sn.trailer)
		if digest {
			require.Equal(t, int64(0x42), sn.digestZxid)
		}
		tr := sn.tree
		require.Equal(t, map[int64]int32{0x11: 30000}, tr.sessions)
		require.Len(t, tr.nodes, 8)
		app := tr.nodes["/app"]
		require.Equal(t, "hello", string(app.data))
		require.Equal(t, digestACL, app.acl)
		require.Equal(t, int32(2), app.stat.version)
		require.Equal(t, map[string]struct{}{"eph": {}}, app.children)
		require.Equal(t, wire.OpenACLUnsafe, tr.nodes["/"].acl)
		require.Equal(t, wire.ReadACLUnsafe, tr.nodes["/zookeeper/config"].acl)
		require.Len(t, tr.nodes["/"].children, 4)
		require.Equal(t, map[int64]map[string]struct{}{0x11: {"/app/eph": {}}}, tr.ephemerals)
		require.Nil(t, tr.nodes["/c"].data)
		require.NotNil(t, tr.nodes["/t"].data)
	}
}

func TestReadSnapshotIgnoresUnreadableTrailer(t *testing.T) {
	b := append(exampleSnapshot().bytes(), 1, 2, 3)
	sn, err := readSnapshot(bytes.NewReader(b), 0)
	require.NoError(t, err)
	require.Contains(t, sn.trailer, "ignored")
}

func TestReadSnapshotRejectsBadInput(t *testing.T) {
	good := exampleSnapshot().bytes()
	// Every truncation is an error, never a panic or a partial tree.
	for n := 0; n < len(good)-1; n++ {
		_, err := readSnapshot(bytes.NewReader(good[:n]), 0)
		require.ErrorIs(t, err, ErrFormat, "prefix %d", n)
	}
	flip := func(off int) []byte {
		b := bytes.Clone(good)
		b[off] ^= 0x40
		return b
	}
	_, err := readSnapshot(bytes.NewReader(flip(0)), 0)
	require.ErrorContains(t, err, "not a snapshot")
	i := bytes.Index(good, []byte("hello"))
	_, err = readSnapshot(bytes.NewReader(flip(i)), 0)
	require.ErrorContains(t, err, "checksum mismatch")

	s := exampleSnapshot()
	s.nodes[4].aclRef = 9
	_, err = readSnapshot(bytes.NewReader(s.bytes()), 0)
	require.ErrorContains(t, err, "ACL 9")

	s = exampleSnapshot()
	s.nodes[4], s.nodes[5] = s.nodes[5], s.nodes[4] // child before parent
	_, err = readSnapshot(bytes.NewReader(s.bytes()), 0)
	require.ErrorContains(t, err, "before its parent")

	s = exampleSnapshot()
	s.nodes = append(s.nodes, s.nodes[4])
	_, err = readSnapshot(bytes.NewReader(s.bytes()), 0)
	require.ErrorContains(t, err, "twice")

	s = exampleSnapshot()
	s.nodes = s.nodes[1:2] // no root
	s.nodes[0].path = "/zookeeper"
	_, err = readSnapshot(bytes.NewReader(s.bytes()), 0)
	require.ErrorIs(t, err, ErrFormat)

	// A huge length in a short file: refused by the limit or by the end of
	// the input, without allocating it.
	s = exampleSnapshot()
	b := s.bytes()
	j := bytes.Index(b, []byte("hello")) - 4
	for _, n := range []int32{-2, 1 << 30, 60 << 20} {
		c := bytes.Clone(b)
		c[j], c[j+1], c[j+2], c[j+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
		_, err := readSnapshot(bytes.NewReader(c), 0)
		require.ErrorIs(t, err, ErrFormat, "length %d", n)
	}
	_, err = readSnapshot(bytes.NewReader(b), 4)
	require.ErrorContains(t, err, "exceeds the limit")
}

func TestReadLog(t *testing.T) {
	a := txCreate(0, e1|6, opCreate2, "/x", "1", false, 4)
	b := withDigest(txSetData(e1|7, "/x", "2", 1))
	good := logBytes(a, b)
	var got []int64
	collect := func(x *txn) error { got = append(got, x.hdr.zxid); return nil }

	tail, err := readLog(bytes.NewReader(good), 0, collect)
	require.NoError(t, err)
	require.Equal(t, endEOF, tail.end, "zero padding ends the log")
	require.Equal(t, []int64{e1 | 6, e1 | 7}, got)

	unpadded := good[:len(good)-64]
	got = nil
	tail, err = readLog(bytes.NewReader(unpadded), 0, collect)
	require.NoError(t, err)
	require.Equal(t, endEOF, tail.end)
	require.Len(t, got, 2)

	// Every cut inside the second entry is a partial tail after the first.
	second := len(unpadded) - (8 + 4 + len(b) + 1)
	for n := second + 1; n < len(unpadded); n++ {
		got = nil
		tail, err = readLog(bytes.NewReader(unpadded[:n]), 0, collect)
		require.NoError(t, err)
		require.Equal(t, endPartial, tail.end, "cut at %d", n)
		require.Equal(t, int64(second), tail.offset)
		require.Equal(t, []int64{e1 | 6}, got)
	}

	bad := bytes.Clone(good)
	bad[len(unpadded)-3] ^= 1 // inside the second record
	got = nil
	tail, err = readLog(bytes.NewReader(bad), 0, collect)
	require.NoError(t, err)
	require.Equal(t, endBadCRC, tail.end)
	require.Len(t, got, 1)

	noEOR := bytes.Clone(good)
	noEOR[len(unpadded)-1] = 'X'
	tail, err = readLog(bytes.NewReader(noEOR), 0, func(*txn) error { return nil })
	require.NoError(t, err)
	require.Equal(t, endPartial, tail.end)

	badLen := bytes.Clone(good)
	copy(badLen[second+8:], []byte{0x7f, 0xff, 0xff, 0xff})
	tail, err = readLog(bytes.NewReader(badLen), 0, func(*txn) error { return nil })
	require.NoError(t, err)
	require.Equal(t, endBadLength, tail.end)

	tail, err = readLog(bytes.NewReader(nil), 0, collect)
	require.NoError(t, err)
	require.Equal(t, endEOF, tail.end)

	_, err = readLog(bytes.NewReader(good[:10]), 0, collect)
	require.ErrorIs(t, err, ErrFormat)
	_, err = readLog(bytes.NewReader(exampleSnapshot().bytes()), 0, collect)
	require.ErrorContains(t, err, "not a transaction log")

	// A valid checksum over an undecodable record is corruption.
	_, err = readLog(bytes.NewReader(logBytes([]byte{1, 2, 3})), 0, collect)
	require.ErrorIs(t, err, ErrFormat)
	_, err = readLog(bytes.NewReader(logBytes(txMulti(0, e1|9, subtxn{opSetACL, nil}))), 0, collect)
	require.ErrorContains(t, err, "multi")
}

func TestDecodeTxnCreateV0(t *testing.T) {
	w := &jw{}
	hdr(w, 0, 9, opCreate)
	w.str("/old")
	w.buf([]byte("v0"))
	w.acls(wire.OpenACLUnsafe)
	w.bool(false)
	x, err := decodeTxn(w.b, 0)
	require.NoError(t, err)
	require.Equal(t, int32(-1), x.parentCVersion)
	require.Equal(t, "/old", x.path)
}

// replay decodes and applies txns (built with the tx* helpers) to the
// example snapshot's tree.
func replay(t *testing.T, txns ...[]byte) *tree {
	sn, err := readSnapshot(bytes.NewReader(exampleSnapshot().bytes()), 0)
	require.NoError(t, err)
	tr := sn.tree
	tr.lastZxid = e1 | 5
	for _, b := range txns {
		x, err := decodeTxn(b, 0)
		require.NoError(t, err)
		require.NoError(t, tr.apply(x))
	}
	return tr
}

func TestReplaySemantics(t *testing.T) {
	tr := replay(t,
		txCreateSession(0x22, e1|6, 8000),
		txCreate(0x22, e1|7, opCreate, "/app/e2", "x", true, 2),
		txCreate(0, e1|8, opCreate2, "/app/seq0000000002", "s", false, 3),
		txSetData(e1|9, "/app", "v3", 3),
		txSetACL(e1|10, "/app", wire.OpenACLUnsafe, 2),
		txCreateTTL(e1|11, "/app/ttl", 4, 60000),
		txCreateContainer(e1|12, "/cc", 4),
		txDelete(e1|13, "/c"),
		txError(e1|14, -110),
	)
	require.Equal(t, e1|14, tr.lastZxid)
	require.Equal(t, int32(8000), tr.sessions[0x22])
	app := tr.nodes["/app"]
	require.Equal(t, "v3", string(app.data))
	require.Equal(t, int32(3), app.stat.version, "setData takes the version from the txn")
	require.Equal(t, e1|9, app.stat.mzxid)
	require.Equal(t, 1_700_000_000_000+(e1|9), app.stat.mtime)
	require.Equal(t, int32(2), app.stat.aversion)
	require.Equal(t, wire.OpenACLUnsafe, app.acl)
	require.Equal(t, int32(4), app.stat.cversion)
	require.Equal(t, e1|11, app.stat.pzxid)
	require.Len(t, app.children, 4)
	e2 := tr.nodes["/app/e2"]
	require.Equal(t, int64(0x22), e2.stat.owner)
	require.Equal(t, stat{czxid: e1 | 7, mzxid: e1 | 7, pzxid: e1 | 7, ctime: 1_700_000_000_000 + (e1 | 7),
		mtime: 1_700_000_000_000 + (e1 | 7), owner: 0x22}, e2.stat)
	require.Equal(t, wire.TTLOwner(60000), tr.nodes["/app/ttl"].stat.owner)
	require.Equal(t, wire.ContainerOwner, tr.nodes["/cc"].stat.owner)
	require.Nil(t, tr.nodes["/c"])
	require.Equal(t, e1|13, tr.nodes["/"].stat.pzxid)

	// closeSession deletes the session's ephemerals at its zxid.
	tr = replay(t, txCloseSession(0x11, e1|6, "/app/eph"))
	require.Nil(t, tr.nodes["/app/eph"])
	require.Empty(t, tr.sessions)
	require.Empty(t, tr.ephemerals)
	require.Equal(t, e1|6, tr.nodes["/app"].stat.pzxid)
}

func TestReplayFuzzySnapshotOverlap(t *testing.T) {
	// The snapshot already holds /app/eph (created at e1|2 with parent
	// cversion 1): replaying its create fails with NODEEXISTS and leaves
	// the parent alone; a create (type 1) with a higher parentCVersion
	// moves the parent's cversion and pzxid, as setCversionPzxid does; a
	// delete of a missing node still moves the parent's pzxid.
	tr := replay(t, txCreate(0x11, e1|2, opCreate, "/app/eph", "e", true, 1))
	require.Equal(t, int32(1), tr.nodes["/app"].stat.cversion)
	require.Equal(t, e1|2, tr.nodes["/app"].stat.pzxid)

	tr = replay(t, txCreate(0x11, e1|6, opCreate, "/app/eph", "e", true, 5))
	require.Equal(t, int32(5), tr.nodes["/app"].stat.cversion)
	require.Equal(t, e1|6, tr.nodes["/app"].stat.pzxid)

	tr = replay(t, txCreate(0x11, e1|6, opCreate2, "/app/eph", "e", true, 5))
	require.Equal(t, int32(1), tr.nodes["/app"].stat.cversion, "only create (1) adjusts the parent")

	tr = replay(t, txDelete(e1|6, "/app/gone"), txDelete(e1|7, "/nope/gone"), txSetData(e1|8, "/nope", "x", 1))
	require.Equal(t, e1|6, tr.nodes["/app"].stat.pzxid)
	require.Equal(t, e1|8, tr.lastZxid)
}

func TestReplayMulti(t *testing.T) {
	tr := replay(t, txMulti(0, e1|6,
		subCheck("/app", 2),
		subCreate("/m", "1"),
		subCreate("/m/k", "2"),
		subSetData("/app", "new", 3),
		subDelete("/app/eph"),
	))
	require.Equal(t, "1", string(tr.nodes["/m"].data))
	require.Equal(t, e1|6, tr.nodes["/m/k"].stat.czxid)
	require.Equal(t, "new", string(tr.nodes["/app"].data))
	require.Nil(t, tr.nodes["/app/eph"])
	require.Equal(t, int32(4), tr.nodes["/"].stat.cversion)

	// A failed multi is logged with error sub-transactions: nothing applies.
	tr = replay(t, txMulti(0, e1|6, subError(0), subError(-103), subError(-2)))
	require.Equal(t, "hello", string(tr.nodes["/app"].data))
	tr = replay(t, txMulti(0, e1|6, subCreate("/m", "1"), subError(-101)))
	require.Nil(t, tr.nodes["/m"])
	require.Equal(t, e1|6, tr.lastZxid)
}

// zkDir lays out a ZooKeeper data dir: version-2 with the given files.
func zkDir(t *testing.T, files map[string][]byte) string {
	dir := t.TempDir()
	for name, b := range files {
		writeFile(t, filepath.Join(dir, "version-2"), name, b)
	}
	return dir
}

func fixedOptions(dir string) Options {
	return Options{Dir: dir, Secret: []byte("0123456789abcdef0123456789abcdef"),
		Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }}
}

func TestImport(t *testing.T) {
	older := exampleSnapshot()
	older.nodes = older.nodes[:6] // before /c and /t
	older.nodes[0].st.cversion = 1
	older.nodes[0].st.pzxid = e1 | 1
	log1 := logBytes(
		txCreate(0x11, e1|1, opCreate, "/app", "hello", false, 1), // in both snapshots
		txCreateContainer(e1|4, "/c", 2),
		txCreateTTL(e1|5, "/t", 3, 5000),
	)
	log2 := logBytes(
		withDigest(txCreateSession(0x22, e1|6, 8000)),
		withDigest(txCreate(0x22, e1|7, opCreate, "/app/e2", "x", true, 2)),
		withDigest(txCreate(0, e1|8, opCreate2, "/c/kid", "k", false, 1)),
		withDigest(txSetData(e1|9, "/app", "v3", 3)),
		withDigest(txCreateSession(-0x7f00000000000000, e1|10, 5000)),
		withDigest(txCreate(-0x7f00000000000000, e1|11, opCreate, "/neg", "", true, 4)),
		withDigest(txCreate(0x33, e1|12, opCreate, "/orphan", "", true, 5)),
		withDigest(txCreate(0, (e1<<1)|1, opCreate2, "/epoch2", "", false, 6)),
	)
	torn := exampleSnapshot().bytes()
	dir := zkDir(t, map[string][]byte{
		"snapshot.100000000": older.bytes(),
		"snapshot.100000005": exampleSnapshot().bytes(),
		"snapshot.100000009": torn[:len(torn)-20], // a crash while writing it
		"log.100000001":      log1,
		"log.100000006":      log2,
		"acceptedEpoch":      []byte("2"),
	})
	f, rep, err := Import(fixedOptions(dir))
	require.NoError(t, err)
	require.NoError(t, f.Check())
	v2 := filepath.Join(dir, "version-2")
	require.Equal(t, filepath.Join(v2, "snapshot.100000005"), rep.Snapshot)
	require.Len(t, rep.SkippedSnapshots, 1)
	require.Contains(t, rep.SkippedSnapshots[0], "incomplete")
	require.Equal(t, []string{filepath.Join(v2, "log.100000001"), filepath.Join(v2, "log.100000006")}, rep.LogFiles)
	require.Equal(t, 8, rep.Txns)
	require.Equal(t, (e1<<1)|1, rep.ZooKeeperZxid)
	warnings := strings.Join(rep.Warnings, "\n")
	require.Contains(t, warnings, "session 0x33 is not in the session table")
	require.Contains(t, warnings, "negative id")

	data, stat, err := f.Get("/app")
	require.NoError(t, err)
	require.Equal(t, "v3", string(data))
	require.Equal(t, int32(3), stat.Version)
	require.Equal(t, int32(2), stat.Cversion)
	require.Equal(t, int32(1), stat.Aversion)
	require.Equal(t, 1_700_000_000_000+(e1|1), stat.Ctime)
	require.Equal(t, 1_700_000_000_000+(e1|9), stat.Mtime)
	require.Equal(t, digestACL, mustACL(t, f, "/app"))

	// Every zxid of the result maps back to its ZooKeeper one in order.
	want := map[string][3]int64{ // czxid, mzxid, pzxid in ZooKeeper
		"/":        {0, 0, (e1 << 1) | 1},
		"/app":     {e1 | 1, e1 | 9, e1 | 7},
		"/app/eph": {e1 | 2, e1 | 2, e1 | 2},
		"/app/e2":  {e1 | 7, e1 | 7, e1 | 7},
		"/c":       {e1 | 4, e1 | 4, e1 | 8},
		"/c/kid":   {e1 | 8, e1 | 8, e1 | 8},
		"/t":       {e1 | 5, e1 | 5, e1 | 5},
		"/epoch2":  {(e1 << 1) | 1, (e1 << 1) | 1, (e1 << 1) | 1},
	}
	// Distinct positive zxids: e1|1,2,4,5,7,8,9 and e1<<1|1 (also the last).
	order := []int64{e1 | 1, e1 | 2, e1 | 4, e1 | 5, e1 | 7, e1 | 8, e1 | 9, (e1 << 1) | 1}
	mapped := func(z int64) int64 {
		for i, o := range order {
			if o == z {
				return int64(i + 1)
			}
		}
		return 0
	}
	for p, z := range want {
		_, s, err := f.Get(p)
		require.NoError(t, err, p)
		require.Equal(t, [3]int64{mapped(z[0]), mapped(z[1]), mapped(z[2])}, [3]int64{s.Czxid, s.Mzxid, s.Pzxid}, p)
	}
	require.Equal(t, int64(len(order)), f.LastZxid())
	require.Equal(t, int64(len(order)), rep.LastZxid)

	for _, gone := range []string{"/neg", "/orphan"} {
		_, ok := f.Exists(gone)
		require.False(t, ok, gone)
	}
	require.Equal(t, []fsm.SessionInfo{{ID: 0x11, Timeout: 30000, Ephemerals: 1}, {ID: 0x22, Timeout: 8000, Ephemerals: 1}}, f.Sessions())
	require.Equal(t, 2, rep.Ephemerals)
	require.Equal(t, 2, rep.Sessions)
	in := f.Inspect(0)
	require.Equal(t, 1, in.Containers)
	require.Equal(t, 1, in.TTLNodes)
	acl, cs, err := f.GetACL(fsm.ConfigPath)
	require.NoError(t, err)
	require.Equal(t, wire.ReadACLUnsafe, acl)
	require.Equal(t, int32(-1), cs.Aversion)
	require.True(t, f.HasSecret())

	// The same state from the older snapshot and both logs.
	require.NoError(t, os.Remove(filepath.Join(v2, "snapshot.100000005")))
	require.NoError(t, os.Remove(filepath.Join(v2, "snapshot.100000009")))
	g, rep2, err := Import(fixedOptions(dir))
	require.NoError(t, err)
	require.Equal(t, filepath.Join(v2, "snapshot.100000000"), rep2.Snapshot)
	require.Equal(t, 11, rep2.Txns)
	require.Equal(t, f.Digest(), g.Digest())
}

func mustACL(t *testing.T, f *fsm.FSM, path string) []wire.ACL {
	acl, _, err := f.GetACL(path)
	require.NoError(t, err)
	return acl
}

func TestImportLogTails(t *testing.T) {
	snap := exampleSnapshot().bytes()
	good := logBytes(txCreate(0, e1|6, opCreate2, "/x", "", false, 4))
	bad := bytes.Clone(good)
	bad[16+8+4+30] ^= 1 // inside the first entry's record
	// A bad checksum in the last log file is refused, as ZooKeeper refuses
	// to load it ...
	dir := zkDir(t, map[string][]byte{"snapshot.100000005": snap, "log.100000006": bad})
	_, _, err := Import(fixedOptions(dir))
	require.ErrorContains(t, err, "bad checksum")
	require.ErrorContains(t, err, "--accept-corrupt-tail")
	// ... unless asked to end the log there ...
	opts := fixedOptions(dir)
	opts.AcceptCorruptTail = true
	_, rep, err := Import(opts)
	require.NoError(t, err)
	require.Equal(t, 0, rep.Txns)
	require.Contains(t, strings.Join(rep.Warnings, "\n"), "bad checksum")
	// ... and is corruption whatever is asked when later log files follow.
	dir = zkDir(t, map[string][]byte{"snapshot.100000005": snap, "log.100000006": bad,
		"log.100000007": logBytes(txDelete(e1|7, "/x"))})
	opts = fixedOptions(dir)
	opts.AcceptCorruptTail = true
	_, _, err = Import(opts)
	require.ErrorContains(t, err, "later log files follow")

	// Missing transactions are reported.
	dir = zkDir(t, map[string][]byte{"snapshot.100000005": snap, "log.100000009": logBytes(txDelete(e1|9, "/t"))})
	_, rep, err = Import(fixedOptions(dir))
	require.NoError(t, err)
	require.Contains(t, strings.Join(rep.Warnings, "\n"), "missing")

	// No snapshot, no valid snapshot.
	_, _, err = Import(fixedOptions(zkDir(t, map[string][]byte{"log.1": good})))
	require.ErrorContains(t, err, "no snapshot")
	_, _, err = Import(fixedOptions(zkDir(t, map[string][]byte{"snapshot.5": snap[:40], "snapshot.6.snappy": snap})))
	require.ErrorContains(t, err, "no valid snapshot")
}

func TestImportGzipSnapshotAndSeparateLogDir(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, _ = zw.Write(exampleSnapshot().bytes())
	require.NoError(t, zw.Close())
	dir := zkDir(t, map[string][]byte{"snapshot.100000005.gz": gz.Bytes()})
	logDir := zkDir(t, map[string][]byte{"log.100000006": logBytes(txDelete(e1|6, "/t"))})
	opts := fixedOptions(dir)
	opts.LogDir = logDir
	f, rep, err := Import(opts)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Txns)
	_, ok := f.Exists("/t")
	require.False(t, ok)
	_, ok = f.Exists("/app/eph")
	require.True(t, ok)
	// / had 3 creates in ZooKeeper and lost /t: clients see
	// 2×creates − numChildren = 6 − 3 (two left plus /zookeeper), as
	// ZooKeeper shows it; sequential names continue from 3.
	_, rootStat, _ := f.Get("/")
	require.Equal(t, int32(3), rootStat.Cversion)
	res := f.ApplyCommand(uint64(f.LastZxid()+1), 1, &fsm.Command{Type: fsm.CmdOps, Time: 1,
		Ops: []fsm.Op{{Type: wire.OpCreate, Path: "/s-", ACL: wire.OpenACLUnsafe, Mode: wire.ModePersistentSequential}}})
	require.Equal(t, "/s-0000000003", res.Ops[0].Path)

	opts.LogDir = filepath.Join(logDir, "missing")
	_, _, err = Import(opts)
	require.ErrorContains(t, err, "transaction logs")
	opts.LogDir = t.TempDir()
	_, rep, err = Import(opts)
	require.NoError(t, err)
	require.Contains(t, strings.Join(rep.Warnings, "\n"), "only the snapshot")
}

func TestImportRejectsUnknownExtendedOwner(t *testing.T) {
	s := exampleSnapshot()
	s.nodes[7].st.owner = wire.TTLOwnerMask | 1<<41 | 5
	_, _, err := Import(fixedOptions(zkDir(t, map[string][]byte{"snapshot.100000005": s.bytes()})))
	require.ErrorContains(t, err, "extended node type")
}

func ExampleImport() {
	f, rep, err := Import(Options{Dir: "/var/lib/zookeeper"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(rep.Snapshot, rep.Txns, f.LastZxid())
}
