// Package migrate_test migrates a real Apache ZooKeeper's data dir to
// Paddock and checks that Paddock serves the same tree.
package migrate_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/zkimport"
	"github.com/stretchr/testify/require"
)

const zkJar = "/usr/share/java/zookeeper.jar"

// requireZooKeeper skips the test unless Debian's ZooKeeper can run here.
func requireZooKeeper(t *testing.T) string {
	t.Helper()
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not found: the ZooKeeper migration test needs Apache ZooKeeper (apt-get install -y zookeeper)")
	}
	if _, err := os.Stat(zkJar); err != nil {
		t.Skip(zkJar + " not found: the ZooKeeper migration test needs Apache ZooKeeper (apt-get install -y zookeeper)")
	}
	return java
}

// startZooKeeper starts a standalone ZooKeeper in dir with test/oracle/zk.sh
// and a small snapCount, so that the writes span several snapshots and
// transaction logs. It returns the client address and a stop function.
func startZooKeeper(t *testing.T, java, dir string) (string, func()) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "oracle", "zk.sh"))
	require.NoError(t, err)
	// zk.sh runs $JAVA; a wrapper adds the system property for snapCount
	// (ZooKeeper snapshots after snapCount/2 to snapCount transactions).
	wrapper := filepath.Join(dir, "java-snapcount")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(wrapper, []byte("#!/bin/sh\nexec "+java+" -Dzookeeper.snapCount=40 \"$@\"\n"), 0o755))
	zkDir := filepath.Join(dir, "zk")
	cmd := exec.Command(script, "start", zkDir)
	cmd.Env = append(os.Environ(), "JAVA="+wrapper)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "zk.sh start: %s", stderr.String())
	addr := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "ZK_ORACLE="); ok {
			addr = v
		}
	}
	require.NotEmpty(t, addr, "zk.sh printed no address: %s", out)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			out, err := exec.Command(script, "stop", zkDir).CombinedOutput()
			require.NoError(t, err, "zk.sh stop: %s", out)
		}
	}
	t.Cleanup(stop)
	return addr, stop
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

func connect(t *testing.T, addr string, timeout time.Duration) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, timeout, zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-events:
			if e.State == zk.StateHasSession {
				return c
			}
		case <-deadline:
			t.Fatalf("no session with %s", addr)
		}
	}
}

var open = zk.WorldACL(zk.PermAll)

// writeHistory gives ZooKeeper a varied history: every create mode, ACLs,
// setData/setACL, deletes, multis that succeed and fail, failed writes,
// sessions that close and sessions that stay, quotas, and enough bulk
// writes to span several snapshots.
func writeHistory(t *testing.T, admin, owner, closer *zk.Conn) {
	t.Helper()
	must := func(_ string, err error) {
		t.Helper()
		require.NoError(t, err)
	}
	mustSet := func(_ *zk.Stat, err error) {
		t.Helper()
		require.NoError(t, err)
	}
	require.NoError(t, admin.AddAuth("digest", []byte("user:pw")))
	must(admin.Create("/app", []byte("v0"), 0, open))
	for i := 1; i <= 5; i++ {
		mustSet(admin.Set("/app", []byte(fmt.Sprintf("v%d", i)), -1))
	}
	binary := make([]byte, 256)
	for i := range binary {
		binary[i] = byte(i)
	}
	must(admin.Create("/app/binary", binary, 0, open))
	must(admin.Create("/app/empty", []byte{}, 0, open))
	must(admin.Create("/app/nil", nil, 0, open))
	must(admin.Create("/app/large", bytes.Repeat([]byte("0123456789abcdef"), 20000), 0, open))
	must(admin.Create("/secure", []byte("secret"), 0, zk.DigestACL(zk.PermAll, "user", "pw")))
	must(admin.Create("/ro", []byte("read only"), 0, zk.WorldACL(zk.PermRead)))
	must(admin.Create("/acl", nil, 0, open))
	mustSet(admin.SetACL("/acl", append(zk.WorldACL(zk.PermRead|zk.PermWrite),
		zk.ACL{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.1"}), -1))
	mustSet(admin.SetACL("/acl", append(zk.WorldACL(zk.PermRead|zk.PermWrite|zk.PermCreate),
		zk.ACL{Perms: zk.PermAll, Scheme: "ip", ID: "127.0.0.0/8"}), 1))

	must(admin.Create("/queue", nil, 0, open))
	for i := 0; i < 12; i++ {
		must(admin.Create("/queue/item-", []byte{byte(i)}, zk.FlagSequence, open))
	}
	for _, i := range []int{0, 3, 4, 9} {
		require.NoError(t, admin.Delete(fmt.Sprintf("/queue/item-%010d", i), -1))
	}

	must(admin.Create("/live", nil, 0, open))
	must(owner.Create("/live/owner", []byte("mine"), zk.FlagEphemeral, open))
	must(owner.Create("/live/seq-", nil, zk.FlagEphemeralSequential, open))
	must(owner.Create("/live/seq-", nil, zk.FlagEphemeralSequential, open))
	must(closer.Create("/live/closer", nil, zk.FlagEphemeral, open))
	must(closer.Create("/live/closer-seq-", nil, zk.FlagEphemeralSequential, open))
	// Closing the session (or, should go-zookeeper's Close not get the
	// request out, expiring it: closer's timeout is short) logs a
	// closeSession that deletes them.
	closer.Close()
	require.Eventually(t, func() bool {
		ok, _, err := admin.Exists("/live/closer")
		return err == nil && !ok
	}, 20*time.Second, 20*time.Millisecond, "the closed session's ephemeral is gone")

	must(admin.CreateContainer("/locks", nil, zk.FlagContainer, open))
	must(admin.Create("/locks/a", nil, 0, open))
	must(admin.Create("/locks/b", nil, 0, open))
	must(admin.CreateContainer("/elect", nil, zk.FlagContainer, open))
	must(owner.Create("/elect/n-", nil, zk.FlagEphemeralSequential, open))
	must(admin.CreateTTL("/lease", []byte("ttl"), zk.FlagTTL, open, time.Hour))
	must(admin.CreateTTL("/leases-", nil, zk.FlagPersistentSequentialWithTTL, open, 2*time.Hour))

	_, err := admin.Multi(
		&zk.CreateRequest{Path: "/multi", Data: []byte("m"), Acl: open},
		&zk.CreateRequest{Path: "/multi/a", Acl: open},
		&zk.SetDataRequest{Path: "/app", Data: []byte("from multi"), Version: -1},
		&zk.DeleteRequest{Path: "/queue/item-0000000001", Version: -1},
		&zk.CheckVersionRequest{Path: "/ro", Version: 0},
	)
	require.NoError(t, err)
	_, err = admin.Multi(
		&zk.CreateRequest{Path: "/multi/never", Acl: open},
		&zk.CheckVersionRequest{Path: "/ro", Version: 42},
	)
	require.Error(t, err)
	_, err = admin.Create("/app", nil, 0, open)
	require.ErrorIs(t, err, zk.ErrNodeExists)
	_, err = admin.Set("/app", nil, 999)
	require.ErrorIs(t, err, zk.ErrBadVersion)

	path := ""
	for i := 0; i < 8; i++ {
		path += fmt.Sprintf("/d%d", i)
		must(admin.Create(path, []byte(path), 0, open))
	}

	// A quota on /app, as zkCli's setquota writes it; ZooKeeper keeps
	// zookeeper_stats up to date in memory without logging it.
	must(admin.Create("/zookeeper/quota/app", nil, 0, open))
	must(admin.Create("/zookeeper/quota/app/zookeeper_limits", []byte("count=100,bytes=-1"), 0, open))
	must(admin.Create("/zookeeper/quota/app/zookeeper_stats", []byte("count=0,bytes=0"), 0, open))

	must(admin.Create("/bulk", nil, 0, open))
	for i := 0; i < 150; i++ {
		p := fmt.Sprintf("/bulk/n%03d", i)
		must(admin.Create(p, []byte("x"), 0, open))
		if i%3 == 0 {
			mustSet(admin.Set(p, []byte("y"), 0))
		}
		if i%5 == 0 {
			require.NoError(t, admin.Delete(p, -1))
		}
	}
	mustSet(admin.Set("/app", []byte("final"), -1))
}

// znode is what a client sees of a node.
type znode struct {
	Data                        []byte
	Czxid, Mzxid, Pzxid         int64
	Ctime, Mtime                int64
	Version, Cversion, Aversion int32
	Owner                       int64
	DataLength, NumChildren     int32
	ACL                         []zk.ACL
	Children                    []string
}

// readTree reads every node through a client (skipping /zookeeper/config,
// which Paddock manages itself).
func readTree(t *testing.T, c *zk.Conn) map[string]znode {
	t.Helper()
	out := map[string]znode{}
	var walk func(p string)
	walk = func(p string) {
		if p == fsm.ConfigPath {
			return
		}
		data, st, err := c.Get(p)
		require.NoError(t, err, p)
		acl, _, err := c.GetACL(p)
		require.NoError(t, err, p)
		kids, _, err := c.Children(p)
		require.NoError(t, err, p)
		sort.Strings(kids)
		out[p] = znode{Data: data, Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid, Ctime: st.Ctime, Mtime: st.Mtime,
			Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion, Owner: st.EphemeralOwner,
			DataLength: st.DataLength, NumChildren: st.NumChildren, ACL: acl, Children: kids}
		for _, k := range kids {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	return out
}

// readFSM reads an imported state the way readTree reads a server.
func readFSM(t *testing.T, f *fsm.FSM) map[string]znode {
	t.Helper()
	out := map[string]znode{}
	var walk func(p string)
	walk = func(p string) {
		if p == fsm.ConfigPath {
			return
		}
		data, st, err := f.Get(p)
		require.NoError(t, err, p)
		acl, _, err := f.GetACL(p)
		require.NoError(t, err, p)
		kids, _, err := f.Children(p)
		require.NoError(t, err, p)
		n := znode{Data: data, Czxid: st.Czxid, Mzxid: st.Mzxid, Pzxid: st.Pzxid, Ctime: st.Ctime, Mtime: st.Mtime,
			Version: st.Version, Cversion: st.Cversion, Aversion: st.Aversion, Owner: st.EphemeralOwner,
			DataLength: st.DataLength, NumChildren: st.NumChildren, Children: kids}
		for _, a := range acl {
			n.ACL = append(n.ACL, zk.ACL{Perms: int32(a.Perms), Scheme: a.ID.Scheme, ID: a.ID.ID})
		}
		out[p] = n
		for _, k := range kids {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	return out
}

// compareTrees checks that Paddock (got) holds ZooKeeper's tree (want):
// same paths, data, ACLs, children and kept Stat fields, and zxids mapped
// by one order-preserving function. It returns that mapping.
func compareTrees(t *testing.T, want, got map[string]znode) map[int64]int64 {
	t.Helper()
	require.Equal(t, sortedKeys(want), sortedKeys(got), "the same paths")
	zxids := map[int64]int64{}
	mapZxid := func(p, field string, zkz, pz int64) {
		if old, ok := zxids[zkz]; ok {
			require.Equal(t, old, pz, "%s %s: ZooKeeper zxid %#x mapped inconsistently", p, field, zkz)
		}
		zxids[zkz] = pz
	}
	for p, w := range want {
		g := got[p]
		require.True(t, bytes.Equal(w.Data, g.Data), "%s: data %q != %q", p, g.Data, w.Data)
		require.Equal(t, w.DataLength, g.DataLength, p)
		require.Equal(t, w.ACL, g.ACL, "%s: ACL", p)
		require.Equal(t, w.Children, g.Children, "%s: children", p)
		require.Equal(t, [3]int64{w.Ctime, w.Mtime, w.Owner}, [3]int64{g.Ctime, g.Mtime, g.Owner}, "%s: ctime, mtime, ephemeralOwner", p)
		require.Equal(t, [3]int32{w.Version, w.Aversion, w.NumChildren},
			[3]int32{g.Version, g.Aversion, g.NumChildren}, "%s: version, aversion, numChildren", p)
		// Paddock shows cversion as ZooKeeper does: 2*creates-numChildren.
		require.Equal(t, w.Cversion, g.Cversion, "%s: cversion", p)
		mapZxid(p, "czxid", w.Czxid, g.Czxid)
		mapZxid(p, "mzxid", w.Mzxid, g.Mzxid)
		mapZxid(p, "pzxid", w.Pzxid, g.Pzxid)
	}
	keys := make([]int64, 0, len(zxids))
	for k := range zxids {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if k == 0 {
			require.Zero(t, zxids[k], "zxid 0 stays 0")
			continue
		}
		require.Positive(t, zxids[k])
		if i > 0 {
			require.Less(t, zxids[keys[i-1]], zxids[k], "zxid order: %#x < %#x", keys[i-1], k)
		}
	}
	return zxids
}

// storedCversion is the cversion ZooKeeper stores (the count of child
// creates, the next sequential suffix) for a node it shows with Stat n.
func storedCversion(n znode) int32 { return (n.Cversion + n.NumChildren) / 2 }

func sortedKeys(m map[string]znode) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func startPaddock(t *testing.T, dataDir string) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Bind, cfg.Port, cfg.DataDir, cfg.NoSync = "127.0.0.1", 0, dataDir, true
	cfg.MaxClientCnxns = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	s, err := server.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestMigrateFromZooKeeper(t *testing.T) {
	java := requireZooKeeper(t)
	work := t.TempDir()
	addr, stopZK := startZooKeeper(t, java, work)

	admin := connect(t, addr, 30*time.Second)
	owner := connect(t, addr, 30*time.Second)
	closer := connect(t, addr, 4*time.Second)
	adminSession, ownerSession, closerSession := admin.SessionID(), owner.SessionID(), closer.SessionID()
	writeHistory(t, admin, owner, closer)
	want := readTree(t, admin)
	require.Equal(t, ownerSession, want["/live/owner"].Owner)
	require.Zero(t, want["/locks"].Owner, "ZooKeeper shows containers with owner 0")

	// Stop ZooKeeper under its clients, so that their sessions and the
	// owner's ephemerals stay in its files.
	stopZK()
	admin.Close()
	owner.Close()

	dataDir := filepath.Join(work, "zk", "data")
	snaps, _ := filepath.Glob(filepath.Join(dataDir, "version-2", "snapshot.*"))
	logs, _ := filepath.Glob(filepath.Join(dataDir, "version-2", "log.*"))
	t.Logf("ZooKeeper wrote %d snapshots and %d transaction logs", len(snaps), len(logs))
	require.GreaterOrEqual(t, len(snaps), 3, "the history spans several snapshots")

	opts := zkimport.Options{Dir: dataDir, Secret: bytes.Repeat([]byte{7}, 32),
		Now: func() time.Time { return time.UnixMilli(1_800_000_000_000) }}
	f, rep, err := zkimport.Import(opts)
	require.NoError(t, err)
	t.Logf("imported %s + %d txns from %d logs: ZooKeeper zxid %#x -> %d; warnings: %q",
		filepath.Base(rep.Snapshot), rep.Txns, len(rep.LogFiles), rep.ZooKeeperZxid, rep.LastZxid, rep.Warnings)
	require.NotZero(t, rep.SnapshotZxid, "a snapshot taken under load is used")
	require.Equal(t, len(want)+1, rep.Nodes, "every node, and Paddock's /zookeeper/config")

	pdir := filepath.Join(work, "paddock")
	require.NoError(t, server.SeedDataDir(pdir, f, nil))
	srv := startPaddock(t, pdir)

	pc := connect(t, srv.Addr().String(), 30*time.Second)
	defer pc.Close()
	require.NoError(t, pc.AddAuth("digest", []byte("user:pw")))
	got := readTree(t, pc)
	zxids := compareTrees(t, want, got)
	require.Equal(t, rep.LastZxid, zxids[slices.Max(sortedZxids(zxids))], "the newest zxid maps to the imported state's zxid")

	// The sessions came along with their timeouts; the closed one did not.
	require.Equal(t, []fsm.SessionInfo{{ID: adminSession, Timeout: 30000}, {ID: ownerSession, Timeout: 30000, Ephemerals: 4}},
		f.Sessions())
	require.NotContains(t, []int64{adminSession, ownerSession, closerSession}, pc.SessionID(),
		"Paddock hands out session ids ZooKeeper never used")
	require.Equal(t, []string{"/elect/n-0000000000", "/live/owner", "/live/seq-0000000001", "/live/seq-0000000002"},
		srv.FSM().Ephemerals(ownerSession, "/"))

	// Paddock carries on from ZooKeeper's state: sequence numbers continue
	// from the parent's cversion, new zxids come after the imported ones.
	p, err := pc.Create("/queue/item-", nil, zk.FlagSequence, open)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("/queue/item-%010d", storedCversion(want["/queue"])), p)
	_, st, err := pc.Get(p)
	require.NoError(t, err)
	require.Greater(t, st.Czxid, rep.LastZxid)
	data, _, err := pc.Get("/secure")
	require.NoError(t, err, "the digest ACL still admits its user")
	require.Equal(t, "secret", string(data))
	anon := connect(t, srv.Addr().String(), 30*time.Second)
	defer anon.Close()
	_, _, err = anon.Get("/secure")
	require.ErrorIs(t, err, zk.ErrNoAuth, "and still keeps others out")

	// Replaying more of the log over an older snapshot gives the same
	// state: from the first snapshot that has data, from the middle one,
	// and from ZooKeeper's empty initial snapshot (the whole history).
	sort.Slice(snaps, func(i, j int) bool { return zxidOf(snaps[i]) < zxidOf(snaps[j]) })
	gotFSM := readFSM(t, f)
	for _, keep := range []int{len(snaps) / 2, 1, 0} {
		older := filepath.Join(work, fmt.Sprintf("older-%d", keep), "version-2")
		require.NoError(t, os.MkdirAll(older, 0o755))
		for _, src := range append(snaps[:keep+1:keep+1], logs...) {
			// Hard links: ZooKeeper preallocates 64 MiB per log file.
			require.NoError(t, os.Link(src, filepath.Join(older, filepath.Base(src))))
		}
		g, rep2, err := zkimport.Import(zkimport.Options{Dir: filepath.Dir(older), Secret: opts.Secret, Now: opts.Now})
		require.NoError(t, err)
		require.Equal(t, filepath.Base(snaps[keep]), filepath.Base(rep2.Snapshot))
		require.Greater(t, rep2.Txns, rep.Txns)
		require.Equal(t, gotFSM, readFSM(t, g), "import from %s", filepath.Base(snaps[keep]))
		require.Equal(t, f.Sessions(), g.Sessions())
	}
}

func sortedZxids(m map[int64]int64) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func zxidOf(path string) int64 {
	var z int64
	_, _ = fmt.Sscanf(strings.TrimPrefix(filepath.Base(path), "snapshot."), "%x", &z)
	return z
}
