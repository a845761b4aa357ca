package server

import (
	"strconv"
	"testing"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"

	"github.com/stretchr/testify/require"
)

// TestZooCfgOneServerLineIsStandalone: ZooKeeper runs a zoo.cfg whose
// ensemble has one voting member standalone unless standaloneEnabled=false
// (QuorumPeerConfig.isDistributed), serving clients on that server line's
// client port; the official Docker image's default zoo.cfg is such a file
// (server.1=localhost:2888:3888;2181). Paddock ran a one-node Raft cluster
// (Mode leader, an election at each start, a cluster port). With
// standaloneEnabled=false it still is that cluster, and a data dir that
// cluster wrote starts standalone with its data.
func TestZooCfgOneServerLineIsStandalone(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "1\n")
	base := "dataDir=" + dir + "\nserver.1=127.0.0.1:0:3888;127.0.0.1:0\n"
	load := func(text string) Config {
		cfg, zc, err := loadZooCfg(t, text)
		require.NoError(t, err)
		require.NoError(t, zc.Finish(&cfg, false))
		cfg.NoSync = true
		return cfg
	}
	require.Empty(t, load(base+"server.2=127.0.0.2:2888:3888:observer\n").Peers, "an observer is no voting member")
	cfg := load(base + "standaloneEnabled=false\n")
	require.Len(t, cfg.Peers, 1, "standaloneEnabled=false: a cluster")
	createNodes(t, cfg, "/written-by-the-cluster")

	for i, extra := range []string{"", "standaloneEnabled=true\n", "standaloneEnabled=TRUE\n"} {
		cfg = load(base + extra)
		require.Empty(t, cfg.Peers, "%q: standalone", extra)
		require.Equal(t, "127.0.0.1", cfg.Bind, "the server line's client address")
		s, err := New(cfg)
		require.NoError(t, err)
		require.Equal(t, "standalone", s.Mode())
		_, _, err = s.FSM().Get("/written-by-the-cluster")
		require.NoError(t, err, "the data dir the one-node cluster wrote")
		res, err := s.apply(&fsm.Command{Type: fsm.CmdOps, Ops: []fsm.Op{{Type: wire.OpCreate,
			Path: "/standalone" + strconv.Itoa(i), ACL: wire.OpenACLUnsafe}}})
		require.NoError(t, err, "and writes")
		require.Equal(t, wire.OK, res.Err)
		require.NoError(t, s.Close())
	}
	_, _, err := loadZooCfg(t, base+"standaloneEnabled=yes\n")
	require.ErrorContains(t, err, "standaloneEnabled")
}
