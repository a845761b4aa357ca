package server

import (
	"github.com/paddockzk/paddock/internal/wire"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// writeFile writes text to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o750))
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// loadZooCfg loads text as a zoo.cfg into a DefaultConfig, as paddock
// server --config does.
func loadZooCfg(t *testing.T, text string) (Config, *ZooCfg, error) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	zc, err := LoadZooCfg(writeFile(t, t.TempDir(), "zoo.cfg", text), &cfg)
	return cfg, zc, err
}

// TestZooCfgSessionTimeoutMinusOne: -1 is ZooKeeper's "not set" (2 and 20
// ticks); it used to be stored as -1 ms, so every session expired at once.
func TestZooCfgSessionTimeoutMinusOne(t *testing.T) {
	cfg, _, err := loadZooCfg(t, "tickTime=2000\nclientPort=2181\ndataDir="+t.TempDir()+"\nminSessionTimeout=-1\nmaxSessionTimeout=-1\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Equal(t, 4*time.Second, cfg.MinSessionTimeout)
	require.Equal(t, 40*time.Second, cfg.MaxSessionTimeout)
	require.Equal(t, int32(4000), cfg.clampTimeout(100))
	require.Equal(t, int32(30000), cfg.clampTimeout(30000))
	require.Equal(t, int32(40000), cfg.clampTimeout(1<<30))
}

// TestZooCfgSessionTimeoutZero: an explicit 0 is a bound of 0 ms, as in
// ZooKeeper (it was read as "not set": 2 ticks), and a maximum of 0 is
// below the default minimum, which ZooKeeper refuses too.
func TestZooCfgSessionTimeoutZero(t *testing.T) {
	cfg, _, err := loadZooCfg(t, "tickTime=2000\nclientPort=2181\ndataDir="+t.TempDir()+"\nminSessionTimeout=0\nmaxSessionTimeout=5000\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	for ask, want := range map[int32]int32{-100000: 0, -1: 0, 0: 0, 1: 1, 3999: 3999, 5001: 5000} {
		require.Equal(t, want, cfg.clampTimeout(ask), "asked %d", ask)
	}
	cfg, _, err = loadZooCfg(t, "tickTime=2000\nclientPort=2181\ndataDir="+t.TempDir()+"\nmaxSessionTimeout=0\n")
	require.NoError(t, err)
	require.ErrorContains(t, cfg.Validate(), "minSessionTimeout 4000ms must not be larger than maxSessionTimeout 0ms")
	cfg, _, err = loadZooCfg(t, "tickTime=2000\nclientPort=2181\ndataDir="+t.TempDir()+"\nminSessionTimeout=0\nmaxSessionTimeout=0\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Equal(t, int32(0), cfg.clampTimeout(30000))
}

// TestZooCfgSessionTimeoutBounds: min > max is refused, as ZooKeeper's
// "minSessionTimeout must not be larger than maxSessionTimeout" (the
// defaults count: a max below 2 ticks is too small); other negative values
// are refused rather than used as negative timeouts.
func TestZooCfgSessionTimeoutBounds(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"minSessionTimeout=10000\nmaxSessionTimeout=5000\n": "must not be larger than maxSessionTimeout",
		"maxSessionTimeout=3000\n":                          "must not be larger than maxSessionTimeout",
		"minSessionTimeout=-5\n":                            "minSessionTimeout must not be negative",
		"maxSessionTimeout=-2\n":                            "maxSessionTimeout must not be negative",
	} {
		cfg, _, err := loadZooCfg(t, "tickTime=2000\ndataDir="+dir+"\n"+text)
		require.NoError(t, err)
		require.ErrorContains(t, cfg.Validate(), want, text)
	}
}

// TestZooCfgDynamicConfigFile: the ensemble of a ZooKeeper 3.5+ config is
// in dynamicConfigFile; ignoring it made every node a standalone server.
func TestZooCfgDynamicConfigFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "2\n")
	dyn := writeFile(t, dir, "zoo.cfg.dynamic.100000000", "server.1=10.0.0.1:2888:3888:participant;2181\n"+
		"server.2=10.0.0.2:2888:3888:participant;0.0.0.0:2181\nserver.3=10.0.0.3:2888:3888:observer;2181\n")
	cfg, zc, err := loadZooCfg(t, "tickTime=2000\ndataDir="+dir+"\ndynamicConfigFile="+dyn+"\n")
	require.NoError(t, err)
	require.Empty(t, zc.Unused)
	require.Equal(t, "2", cfg.ID)
	require.Len(t, cfg.Peers, 3)
	require.Equal(t, Peer{ID: "1", Addr: "10.0.0.1:2888", ClientAddr: "0.0.0.0:2181", ElectionPort: "3888"}, cfg.Peers[0])
	require.True(t, cfg.Peers[2].Observer)
	require.NoError(t, zc.Finish(&cfg, false))
	require.NoError(t, cfg.Validate())
}

// TestZooCfgDynamicConfigFileRelative: a relative dynamicConfigFile is
// opened from the working directory, as ZooKeeper opens it.
func TestZooCfgDynamicConfigFileRelative(t *testing.T) {
	wd := t.TempDir()
	writeFile(t, wd, "conf/zoo.cfg.dynamic", "server.1=10.0.0.1:2888:3888\nserver.2=10.0.0.2:2888:3888\n")
	t.Chdir(wd)
	cfg, _, err := loadZooCfg(t, "dataDir="+t.TempDir()+"\ndynamicConfigFile=conf/zoo.cfg.dynamic\n")
	require.NoError(t, err)
	require.Len(t, cfg.Peers, 2)
}

// TestZooCfgDynamicConfigFileErrors: as ZooKeeper, server.N lines may not
// also be in the static file, the dynamic file holds nothing but the
// ensemble, and a missing dynamic file is an error.
func TestZooCfgDynamicConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	dyn := writeFile(t, dir, "zoo.cfg.dynamic", "server.1=10.0.0.1:2888:3888\nversion=100000000\n")
	bad := writeFile(t, dir, "bad.dynamic", "server.1=10.0.0.1:2888:3888\nclientPort=2181\n")
	for text, want := range map[string]string{
		"dynamicConfigFile=" + dyn + "\nserver.2=10.0.0.2:2888:3888\n": "server.2 must be in the dynamic config file",
		"dynamicConfigFile=" + bad + "\n":                              "clientPort: unrecognised parameter",
		"dynamicConfigFile=" + dir + "/missing\n":                      "no such file",
	} {
		_, _, err := loadZooCfg(t, "dataDir="+dir+"\n"+text)
		require.ErrorContains(t, err, want, text)
	}
}

// TestZooCfgRequiresDataDir: ZooKeeper refuses a zoo.cfg without dataDir;
// Paddock used to run such a config in memory and lose acknowledged writes
// on restart. --data-dir satisfies it; no zoo.cfg still means in memory.
func TestZooCfgRequiresDataDir(t *testing.T) {
	cfg, _, err := loadZooCfg(t, "tickTime=2000\nclientPort=2181\n")
	require.NoError(t, err)
	require.ErrorContains(t, cfg.Validate(), "dataDir is not set")

	cfg, _, err = loadZooCfg(t, "tickTime=2000\nclientPort=2181\n")
	require.NoError(t, err)
	cfg.DataDir = t.TempDir() // paddock server --config zoo.cfg --data-dir D
	require.NoError(t, cfg.Validate())

	plain := DefaultConfig()
	require.NoError(t, plain.Validate())
	require.Equal(t, "127.0.0.1:2181", plain.addr())
}

// TestZooCfgClientPortAddress: without clientPortAddress ZooKeeper binds
// every interface; plain paddock server stays on loopback.
func TestZooCfgClientPortAddress(t *testing.T) {
	dir := t.TempDir()
	cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2182\n")
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0:2182", cfg.addr())

	cfg, _, err = loadZooCfg(t, "dataDir="+dir+"\nclientPort=2182\nclientPortAddress=127.0.0.1\n")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:2182", cfg.addr())

	plain := DefaultConfig()
	require.Equal(t, "127.0.0.1:2181", plain.addr())
}

// TestZooCfgServerLineClientAddr: a server.N line's ";[host:]port" is the
// node's client address (ZooKeeper 3.5+), whether or not clientPort is set;
// a static clientPort that disagrees with it is an error, as ZooKeeper's
// setupClientPort.
func TestZooCfgServerLineClientAddr(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "1\n")
	ensemble := func(client string) string {
		return "dataDir=" + dir + "\nserver.1=127.0.0.1:2888:3888;" + client + "\nserver.2=127.0.0.2:2888:3888;2181\n"
	}
	cases := []struct {
		static, client, addr, err string
	}{
		{"", "127.0.0.1:2191", "127.0.0.1:2191", ""},
		{"", "2191", "0.0.0.0:2191", ""},
		{"clientPort=2191\n", "127.0.0.1:2191", "127.0.0.1:2191", ""},
		{"clientPort=2191\nclientPortAddress=127.0.0.1\n", "127.0.0.1:2191", "127.0.0.1:2191", ""},
		{"clientPort=2191\n", "2192", "", "is different from client address"},
		{"clientPort=2191\nclientPortAddress=127.0.0.1\n", "2191", "", "is different from client address"},
		{"clientPort=2191\nclientPortAddress=127.0.0.1\n", "127.0.0.3:2191", "", "is different from client address"},
	}
	for _, tc := range cases {
		cfg, zc, err := loadZooCfg(t, tc.static+ensemble(tc.client))
		require.NoError(t, err)
		err = zc.ApplyServerClientAddr(&cfg)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, tc.addr, cfg.addr(), tc)
	}
}

// TestZooCfgServerLineWithoutClientAddr: a line without ";client" leaves
// clientPort/clientPortAddress in charge.
func TestZooCfgServerLineWithoutClientAddr(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "1\n")
	cfg, zc, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2191\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.2:2888:3888\n")
	require.NoError(t, err)
	require.NoError(t, zc.ApplyServerClientAddr(&cfg))
	require.Equal(t, "0.0.0.0:2191", cfg.addr())
}

// zkTree makes dir look like an Apache ZooKeeper dataDir/dataLogDir.
func zkTree(t *testing.T, dir string, files ...string) {
	t.Helper()
	for _, f := range files {
		writeFile(t, dir, filepath.Join(zkVersionDir, f), "zk")
	}
}

// TestDataDirWithZooKeeperTree: a dataDir holding ZooKeeper's version-2/
// and no Paddock state used to be ignored (an empty tree bootstrapped
// beside it); the server refuses and names the import command.
func TestDataDirWithZooKeeperTree(t *testing.T) {
	dir := t.TempDir()
	zkTree(t, dir, "snapshot.100000000", "log.100000001", "acceptedEpoch")
	cfg := DefaultConfig()
	cfg.Port, cfg.DataDir = 0, dir
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	_, err := New(cfg)
	require.ErrorContains(t, err, "Apache ZooKeeper data tree")
	require.ErrorContains(t, err, "paddock import-zk --from "+dir+" --data-dir")
	_, err = os.Stat(filepath.Join(dir, walDir))
	require.True(t, os.IsNotExist(err), "nothing written beside ZooKeeper's files: %v", err)

	// Paddock state next to it (say, from before this check): start.
	require.NoError(t, os.Mkdir(filepath.Join(dir, walDir), 0o750))
	require.NoError(t, cfg.Validate())
}

// TestDataLogDirWithZooKeeperTree: ZooKeeper's transaction logs in
// dataLogDir count too, and the hint passes that dir as --log-dir.
func TestDataLogDirWithZooKeeperTree(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	zkTree(t, logs, "log.1")
	cfg, _, err := loadZooCfg(t, "clientPort=2181\ndataDir="+data+"\ndataLogDir="+logs+"\n")
	require.NoError(t, err)
	err = cfg.Validate()
	require.ErrorContains(t, err, "paddock import-zk --from "+data+" --log-dir "+logs+" --data-dir")

	// An empty version-2/ (ZooKeeper started, never wrote) is no tree.
	require.NoError(t, os.RemoveAll(filepath.Join(logs, zkVersionDir)))
	require.NoError(t, os.Mkdir(filepath.Join(logs, zkVersionDir), 0o750))
	require.NoError(t, cfg.Validate())
}

// TestZooCfgDataLogDir: dataLogDir is where the Raft log goes, as
// ZooKeeper's transaction log; without it the log stays in dataDir.
func TestZooCfgDataLogDir(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	cfg, zc, err := loadZooCfg(t, "clientPort=2181\ndataDir="+data+"\ndataLogDir="+logs+"\n")
	require.NoError(t, err)
	require.NotContains(t, zc.Unused, "dataLogDir")
	require.Equal(t, logs, cfg.LogDir)
	require.Equal(t, logs, cfg.logDir())
	require.NoError(t, cfg.Validate())

	cfg, _, err = loadZooCfg(t, "dataDir="+data+"\n")
	require.NoError(t, err)
	require.Equal(t, data, cfg.logDir())

	noData := DefaultConfig()
	noData.LogDir = logs
	require.ErrorContains(t, noData.Validate(), "a log dir needs a data dir")
}

// TestCheckLogDir: a dataLogDir added to a data dir whose Raft log is still
// in the data dir would start without the log (and, in a cluster, without
// its term and vote); checkLogDir refuses that.
func TestCheckLogDir(t *testing.T) {
	data, logs := t.TempDir(), t.TempDir()
	cfg := DefaultConfig()
	cfg.DataDir, cfg.LogDir = data, logs
	require.NoError(t, checkLogDir(&cfg), "new dirs")
	require.NoError(t, os.Mkdir(filepath.Join(data, walDir), 0o750))
	require.ErrorContains(t, checkLogDir(&cfg), "move "+filepath.Join(data, walDir)+" into "+logs)
	require.NoError(t, os.Mkdir(filepath.Join(logs, walDir), 0o750))
	require.NoError(t, checkLogDir(&cfg), "the log dir has its own log")
	cfg.LogDir = data
	require.NoError(t, checkLogDir(&cfg), "same dir")
}

// A zoo.cfg without 4lw.commands.whitelist gets ZooKeeper's default, srvr
// alone (its server listens on every interface), plus isro in read-only
// mode, which ZooKeeper adds whatever the whitelist says.
func TestZooCfgFourLetterWordDefault(t *testing.T) {
	dir := t.TempDir()
	cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\n")
	require.NoError(t, err)
	require.Equal(t, []string{"srvr"}, cfg.FourLetterWords)
	cfg, _, err = loadZooCfg(t, "dataDir="+dir+"\nreadonlymode.enabled=true\n")
	require.NoError(t, err)
	require.Equal(t, []string{"srvr", "isro"}, cfg.FourLetterWords)
	cfg, _, err = loadZooCfg(t, "dataDir="+dir+"\n4lw.commands.whitelist=mntr, ruok\n")
	require.NoError(t, err)
	require.Equal(t, []string{"mntr", "ruok"}, cfg.FourLetterWords)
	require.Equal(t, []string{"ruok", "srvr", "stat", "mntr", "cons", "conf", "envi", "wchs", "wchc", "wchp", "dump", "isro", "dirs"},
		DefaultConfig().FourLetterWords, "paddock server without a zoo.cfg")
}

// A server whose bounds are 0 ms grants a client's 0 or 1 ms as asked and
// goes on serving (the session is as good as expired, as in ZooKeeper).
func TestZeroSessionTimeoutBoundServes(t *testing.T) {
	srv := attachServer(t, func(c *Config) {
		c.MinSessionTimeout, c.MaxSessionTimeout = SessionTimeoutZero, 5*time.Second
	})
	for _, ask := range []int32{0, 1, -5} {
		nc, br := dialRaw(t, srv.Addr().String())
		send(t, nc, &wire.ConnectRequest{TimeOut: ask, Passwd: make([]byte, 16)})
		var cr wire.ConnectResponse
		readRecord(t, br, &cr)
		require.Equal(t, max(ask, 0), cr.TimeOut, "asked %d", ask)
		nc.Close()
	}
	live := connectRaw(t, srv, 0, nil) // asks 30000: the maximum
	require.Equal(t, int32(5000), live.TimeOut)
}
