package main

import (
	"testing"

	"github.com/paddockzk/paddock/server"
	"github.com/stretchr/testify/require"
)

// --bind restricts a zoo.cfg's secure client port too, unless the file
// names its address (secureClientPortAddress): without --bind it listens
// on every interface, as ZooKeeper's.
func TestBindFlagAndZooCfgSecurePort(t *testing.T) {
	dir := t.TempDir()
	path := writeZooCfg(t, dir, "dataDir="+dir+"\nclientPort=26181\nsecureClientPort=26281\n")
	secureBind := func(cfg server.Config) string {
		if cfg.SecureBind == "" {
			return cfg.Bind
		}
		return cfg.SecureBind
	}
	cfg, err := serverConfig(t, "--config", path, "--bind", "127.0.0.1")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", secureBind(cfg))
	cfg, err = serverConfig(t, "--config", path)
	require.NoError(t, err)
	require.Equal(t, server.ZooCfgBind, secureBind(cfg))

	path = writeZooCfg(t, dir, "dataDir="+dir+"\nclientPort=26181\nsecureClientPort=26281\nsecureClientPortAddress=127.0.0.2\n")
	cfg, err = serverConfig(t, "--config", path, "--bind", "127.0.0.1")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.2", secureBind(cfg))
}
