package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/server"
	"github.com/stretchr/testify/require"
)

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// startServer starts a server on a free loopback port (in memory when
// dataDir is empty) and stops it when the test ends.
func startServer(t *testing.T, dataDir string, mod func(*server.Config)) *server.Server {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Bind, cfg.Port, cfg.DataDir, cfg.NoSync = "127.0.0.1", 0, dataDir, true
	cfg.MaxClientCnxns = 0
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if mod != nil {
		mod(&cfg)
	}
	s, err := server.New(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func connect(t *testing.T, addr string) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{addr}, 10*time.Second, zk.WithLogger(nopLogger{}))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	deadline := time.After(10 * time.Second)
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

// runCmd runs the paddock command line and returns its output.
func runCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

// fillTree writes a varied tree through a client, whose session owns the
// ephemeral /app/me.
func fillTree(t *testing.T, c *zk.Conn) {
	t.Helper()
	open := zk.WorldACL(zk.PermAll)
	must := func(_ string, err error) { require.NoError(t, err) }
	must(c.Create("/app", []byte("config v1"), 0, open))
	must(c.Create("/app/big", bytes.Repeat([]byte("x"), 5000), 0, open))
	must(c.Create("/app/ro", []byte("read only"), 0, zk.WorldACL(zk.PermRead)))
	for i := 0; i < 3; i++ {
		must(c.Create("/app/job-", []byte{byte(i)}, zk.FlagSequence, open))
	}
	must(c.Create("/app/me", nil, zk.FlagEphemeral, open))
	must(c.CreateContainer("/locks", nil, zk.FlagContainer, open))
	must(c.Create("/locks/l1", nil, 0, open))
	must(c.CreateTTL("/lease", []byte("t"), zk.FlagTTL, open, time.Hour))
	_, err := c.Set("/app", []byte("config v2"), 0)
	require.NoError(t, err)
	require.NoError(t, c.Delete("/app/job-0000000002", -1))
}

// dump renders every node but /zookeeper/config (which a cluster leader
// rewrites with the membership): path, data, ACL and Stat.
func dump(f *fsm.FSM) string {
	var lines []string
	var walk func(p string)
	walk = func(p string) {
		data, st, err := f.Get(p)
		if err != nil {
			lines = append(lines, p+" "+err.Error())
			return
		}
		acl, _, _ := f.GetACL(p)
		if p != fsm.ConfigPath {
			lines = append(lines, fmt.Sprintf("%s %q %v %+v", p, data, acl, st))
		}
		kids, _, _ := f.Children(p)
		for _, k := range kids {
			walk(strings.TrimSuffix(p, "/") + "/" + k)
		}
	}
	walk("/")
	return strings.Join(lines, "\n") + fmt.Sprintf("\nsessions %v", f.Sessions())
}

func TestSnapshotSaveInspectRestore(t *testing.T) {
	src := startServer(t, "", nil)
	c := connect(t, src.Addr().String())
	fillTree(t, c)
	admin := httptest.NewServer(src.AdminHandler())
	t.Cleanup(admin.Close)

	file := filepath.Join(t.TempDir(), "backup.snap")
	out, err := runCmd(t, "snapshot", "save", "--admin", admin.URL, file)
	require.NoError(t, err, out)
	want := src.FSM().Digest()
	st := src.FSM().Stats()
	fi, err := os.Stat(file)
	require.NoError(t, err)
	require.Contains(t, out, fmt.Sprintf("zxid %d ", st.LastZxid))
	require.Contains(t, out, fmt.Sprintf("%d znodes, %d bytes", st.Nodes, fi.Size()))
	entries, _ := os.ReadDir(filepath.Dir(file))
	require.Len(t, entries, 1, "no temporary file left behind")

	fh, err := os.Open(file)
	require.NoError(t, err)
	saved, err := fsm.ReadSnapshotFile(fh)
	fh.Close()
	require.NoError(t, err)
	require.Equal(t, want, saved.Digest(), "the file holds the server's state")

	out, err = runCmd(t, "snapshot", "inspect", "--json", file)
	require.NoError(t, err, out)
	var in inspectOutput
	require.NoError(t, json.Unmarshal([]byte(out), &in))
	require.Equal(t, st.Nodes, in.Znodes)
	require.Equal(t, st.LastZxid, in.LastZxid)
	require.Equal(t, fi.Size(), in.FileSize)
	require.Equal(t, 1, in.Ephemerals)
	require.Equal(t, 1, in.Sessions)
	require.Equal(t, 1, in.Containers)
	require.Equal(t, 1, in.TTLNodes)
	require.Equal(t, "/app", in.TopBySubtree[0].Path)
	require.Equal(t, "/app/big", in.TopByData[0].Path)
	out, err = runCmd(t, "snapshot", "inspect", file)
	require.NoError(t, err, out)
	require.Contains(t, out, "LARGEST SUBTREES")
	require.Regexp(t, `/app/big\s+5000`, out)

	dir := filepath.Join(t.TempDir(), "restored")
	out, err = runCmd(t, "snapshot", "restore", file, "--data-dir", dir)
	require.NoError(t, err, out)
	require.Contains(t, out, "paddock server --data-dir "+dir)
	_, err = runCmd(t, "snapshot", "restore", file, "--data-dir", dir)
	require.ErrorContains(t, err, "not empty")

	dst := startServer(t, dir, nil)
	require.Equal(t, want, dst.FSM().Digest(), "the restored server starts with exactly the saved state")
	require.NoError(t, dst.FSM().Check())

	// It keeps working from there: sequence numbers continue and new
	// writes get later zxids.
	c2 := connect(t, dst.Addr().String())
	p, err := c2.Create("/app/job-", nil, zk.FlagSequence, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	require.Equal(t, "/app/job-0000000006", p)
	_, stat, err := c2.Get(p)
	require.NoError(t, err)
	require.Greater(t, stat.Czxid, st.LastZxid)
	data, _, err := c2.Get("/app")
	require.NoError(t, err)
	require.Equal(t, "config v2", string(data))
}

func TestSnapshotSaveErrors(t *testing.T) {
	file := filepath.Join(t.TempDir(), "x.snap")
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusTeapot)
	}))
	t.Cleanup(bad.Close)
	_, err := runCmd(t, "snapshot", "save", "--admin", bad.URL, file)
	require.ErrorContains(t, err, "418")

	// A body cut short (no trailer) leaves no file.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(server.SnapshotZxidHeader, "7")
		w.Header().Set("Trailer", server.SnapshotSHA256Trailer)
		_, _ = w.Write([]byte("partial"))
	}))
	t.Cleanup(cut.Close)
	_, err = runCmd(t, "snapshot", "save", "--admin", cut.URL, file)
	require.ErrorContains(t, err, "incomplete")
	entries, _ := os.ReadDir(filepath.Dir(file))
	require.Empty(t, entries)

	_, err = runCmd(t, "snapshot", "inspect", filepath.Join(t.TempDir(), "missing"))
	require.Error(t, err)
	junk := filepath.Join(t.TempDir(), "junk")
	require.NoError(t, os.WriteFile(junk, []byte("junk"), 0o600))
	_, err = runCmd(t, "snapshot", "restore", junk, "--data-dir", filepath.Join(t.TempDir(), "d"))
	require.ErrorIs(t, err, fsm.ErrBadSnapshot)
}

func TestSnapshotRestoreCluster(t *testing.T) {
	src := startServer(t, "", nil)
	fillTree(t, connect(t, src.Addr().String()))
	file := filepath.Join(t.TempDir(), "backup.snap")
	fh, err := os.Create(file)
	require.NoError(t, err)
	_, err = src.FSM().WriteSnapshot(fh)
	require.NoError(t, err)
	require.NoError(t, fh.Close())
	want := dump(src.FSM())

	const n = 3
	lns := make([]net.Listener, n)
	var peerFlags []string
	var peers []server.Peer
	for i := range lns {
		lns[i], err = net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		id := fmt.Sprint(i + 1)
		peerFlags = append(peerFlags, "--peer", id+"="+lns[i].Addr().String())
		peers = append(peers, server.Peer{ID: id, Addr: lns[i].Addr().String()})
	}
	_, err = runCmd(t, append([]string{"snapshot", "restore", file, "--data-dir", t.TempDir(), "--id", "9"}, peerFlags...)...)
	require.ErrorContains(t, err, "--id 9 is not among")

	dirs := make([]string, n)
	for i := range dirs {
		dirs[i] = filepath.Join(t.TempDir(), "node")
		require.NoError(t, os.MkdirAll(dirs[i], 0o750))
		require.NoError(t, os.WriteFile(filepath.Join(dirs[i], "myid"), []byte(fmt.Sprint(i+1)), 0o600))
		out, err := runCmd(t, append([]string{"snapshot", "restore", file, "--data-dir", dirs[i], "--id", fmt.Sprint(i + 1)}, peerFlags...)...)
		require.NoError(t, err, out)
		require.Contains(t, out, "--id "+fmt.Sprint(i+1))
	}
	nodes := make([]*server.Server, n)
	errs := make(chan error, n)
	for i := range nodes {
		go func() {
			cfg := server.DefaultConfig()
			cfg.Bind, cfg.Port, cfg.DataDir, cfg.NoSync = "127.0.0.1", 0, dirs[i], true
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			cfg.ID, cfg.Peers, cfg.ClusterListener = peers[i].ID, peers, lns[i]
			cfg.Raft = server.RaftTimers{Heartbeat: 100 * time.Millisecond, Election: 100 * time.Millisecond,
				LeaderLease: 50 * time.Millisecond, Commit: 5 * time.Millisecond}
			s, err := server.New(cfg)
			nodes[i] = s
			errs <- err
		}()
	}
	for range nodes {
		require.NoError(t, <-errs)
	}
	for _, s := range nodes {
		t.Cleanup(func() { _ = s.Close() })
	}
	// Every node starts from the snapshot with the seeded membership.
	for i, s := range nodes {
		require.Equal(t, want, dump(s.FSM()), "node %d", i+1)
		members, err := s.Members()
		require.NoError(t, err)
		require.Len(t, members, n)
	}
	// And replicates new writes.
	c := connect(t, nodes[0].Addr().String())
	_, err = c.Create("/after", []byte("restore"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	for i, s := range nodes {
		require.Eventually(t, func() bool { _, ok := s.FSM().Exists("/after"); return ok },
			10*time.Second, 5*time.Millisecond, "node %d never applied /after", i+1)
	}
	require.True(t, slices.ContainsFunc(nodes, func(s *server.Server) bool { return s.Leader() != "" }))
}
