package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestServerZooCfgOneServerLineWithIDFlag: --id names this node as myid
// does; with a zoo.cfg of one voting member the server runs standalone on
// that server line's client address, whichever of the two gave the id.
func TestServerZooCfgOneServerLineWithIDFlag(t *testing.T) {
	dir := t.TempDir()
	path := writeZooCfg(t, dir, "dataDir="+dir+"\nserver.1=127.0.0.1:26801:3888;127.0.0.1:26191\n")
	cfg, err := serverConfig(t, path, "--id", "1")
	require.NoError(t, err)
	require.Empty(t, cfg.Peers, "standalone")
	require.False(t, cfg.NoClientPort, "the server line's client port")
	require.Equal(t, 26191, cfg.Port)
}
