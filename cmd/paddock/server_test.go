package main

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/paddockzk/paddock/server"
	"github.com/stretchr/testify/require"
)

// serverConfig runs `paddock server args...` in-process up to the start of
// the server and returns the configuration it would have served.
func serverConfig(t *testing.T, args ...string) (server.Config, error) {
	t.Helper()
	cfg, _, err := serverSetup(t, args...)
	return cfg, err
}

// serverSetup is serverConfig with the runtime tuning it would have used.
func serverSetup(t *testing.T, args ...string) (server.Config, runtimeTuning, error) {
	t.Helper()
	var got server.Config
	var gotRT runtimeTuning
	old := serve
	serve = func(cfg server.Config, rt runtimeTuning, _ *slog.Logger) error {
		got, gotRT = cfg, rt
		return nil
	}
	defer func() { serve = old }()
	_, err := runRoot(t, append([]string{"server"}, args...)...)
	return got, gotRT, err
}

// The runtime monitor's slack is 1 ms unless --sysmon-slack says
// otherwise (0: left alone).
func TestServerSysmonSlackFlag(t *testing.T) {
	_, rt, err := serverSetup(t)
	require.NoError(t, err)
	require.Equal(t, time.Millisecond, rt.SysmonSlack)
	_, rt, err = serverSetup(t, "--sysmon-slack", "250us")
	require.NoError(t, err)
	require.Equal(t, 250*time.Microsecond, rt.SysmonSlack)
	_, rt, err = serverSetup(t, "--sysmon-slack", "0")
	require.NoError(t, err)
	require.Zero(t, rt.SysmonSlack)
}

// writeZooCfg writes a zoo.cfg with text into dir and returns its path.
func writeZooCfg(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "zoo.cfg")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
	return path
}

// TestServerZooCfgArgument: `paddock server zoo.cfg`, as QuorumPeerMain and
// zkServer.sh take it, used to fail with "unknown command"; it is --config.
func TestServerZooCfgArgument(t *testing.T) {
	dir := t.TempDir()
	path := writeZooCfg(t, dir, "tickTime=1500\ndataDir="+dir+"\nclientPort=26181\n")
	for _, args := range [][]string{{path}, {"--config", path}, {"--config", path, path}, {"--config", path, dir + "/./zoo.cfg"}} {
		cfg, err := serverConfig(t, args...)
		require.NoError(t, err, args)
		require.Equal(t, 1500*time.Millisecond, cfg.TickTime, args)
		require.Equal(t, 26181, cfg.Port, args)
		require.Equal(t, dir, cfg.DataDir, args)
	}
	_, err := serverConfig(t, "--config", filepath.Join(dir, "other.cfg"), path)
	require.ErrorContains(t, err, "two zoo.cfg files")
	_, err = serverConfig(t, path, path)
	require.ErrorContains(t, err, "accepts at most 1 arg")

	cfg, err := serverConfig(t)
	require.NoError(t, err)
	require.Equal(t, server.DefaultBind, cfg.Bind, "no zoo.cfg: paddock's defaults")
	require.Equal(t, server.DefaultPort, cfg.Port)
	require.False(t, cfg.NoClientPort)
	require.Equal(t, server.DefaultTickTime, cfg.TickTime)
}

// TestServerDataDirMyID: with --data-dir, myid comes from the data dir in
// use; it used to come from the zoo.cfg's dataDir.
func TestServerDataDirMyID(t *testing.T) {
	cfgDir, dataDir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "myid"), []byte("1\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dataDir, "myid"), []byte("2\n"), 0o600))
	path := writeZooCfg(t, cfgDir, "dataDir="+cfgDir+"\nclientPort=26182\n"+
		"server.1=127.0.0.1:26801:3888\nserver.2=127.0.0.2:26802:3888\nserver.3=127.0.0.3:26803:3888\n")
	cfg, err := serverConfig(t, "--config", path)
	require.NoError(t, err)
	require.Equal(t, "1", cfg.ID, "the zoo.cfg's dataDir")
	cfg, err = serverConfig(t, "--config", path, "--data-dir", dataDir)
	require.NoError(t, err)
	require.Equal(t, "2", cfg.ID, "the data dir in use")
	require.Equal(t, dataDir, cfg.DataDir)
	cfg, err = serverConfig(t, "--config", path, "--data-dir", dataDir, "--id", "3")
	require.NoError(t, err)
	require.Equal(t, "3", cfg.ID, "--id wins")
}

// TestServerNoClientPortFlags: a zoo.cfg without clientPort opens no
// plaintext port unless --port asks for one; --bind alone has no port to
// bind.
func TestServerNoClientPortFlags(t *testing.T) {
	dir := t.TempDir()
	path := writeZooCfg(t, dir, "dataDir="+dir+"\nsecureClientPort=26283\n")
	cfg, err := serverConfig(t, "--config", path)
	require.NoError(t, err)
	require.True(t, cfg.NoClientPort)
	require.Equal(t, 26283, cfg.SecurePort)
	cfg, err = serverConfig(t, "--config", path, "--port", "26184")
	require.NoError(t, err)
	require.False(t, cfg.NoClientPort)
	require.Equal(t, 26184, cfg.Port)
	_, err = serverConfig(t, "--config", path, "--bind", "127.0.0.1")
	require.ErrorContains(t, err, "pass --port too")
}
