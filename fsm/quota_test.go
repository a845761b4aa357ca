package fsm

import (
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/stretchr/testify/require"
)

func TestQuotas(t *testing.T) {
	h := newHarness(t)
	mk := func(path, data string) {
		require.Equal(t, wire.OK, h.create(path, data, wire.ModePersistent).Err, path)
	}
	mk("/app", "12345")
	mk("/app/a", "")
	// As zkCli's setquota: the limits node, then the stats node, which the
	// server fills with the subtree's current size.
	mk("/zookeeper/quota/app", "")
	mk("/zookeeper/quota/app/zookeeper_limits", "count=3,bytes=10,countHardLimit=4,byteHardLimit=20")
	mk("/zookeeper/quota/app/zookeeper_stats", "")
	stats := func() string {
		d, _, err := h.f.Get("/zookeeper/quota/app/zookeeper_stats")
		require.NoError(t, err)
		return string(d)
	}
	require.Equal(t, "count=2,bytes=5", stats())

	r := h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/app/b")}})
	require.Equal(t, wire.OK, r.Err)
	require.Empty(t, r.QuotaWarnings)
	require.Equal(t, "count=3,bytes=5", stats())
	r = h.apply(&Command{Type: CmdOps, Ops: []Op{createOp("/app/c")}})
	require.Equal(t, wire.OK, r.Err, "soft limits only warn")
	require.Equal(t, []string{"/app"}, r.QuotaWarnings)

	// Hard limits refuse writes only when enforcement is asked for.
	r = h.apply(&Command{Type: CmdOps, EnforceQuota: true, Ops: []Op{createOp("/app/d")}})
	require.Equal(t, wire.ErrQuotaExceeded, r.Err)
	r = h.apply(&Command{Type: CmdOps, EnforceQuota: true, Ops: []Op{{Type: wire.OpSetData, Path: "/app/a", Data: make([]byte, 30), Version: -1}}})
	require.Equal(t, wire.ErrQuotaExceeded, r.Err)
	r = h.apply(&Command{Type: CmdOps, Ops: []Op{{Type: wire.OpSetData, Path: "/app/a", Data: make([]byte, 30), Version: -1}}})
	require.Equal(t, wire.OK, r.Err)
	require.Equal(t, "count=4,bytes=35", stats())

	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: "/app/c", Version: -1}).Err)
	require.Equal(t, "count=3,bytes=35", stats())
	// Quotas survive a snapshot.
	g := restore(t, snapshotBytes(t, h.f))
	require.Contains(t, g.quotas, "/app")
	// Removing the limits node removes the quota.
	require.Equal(t, wire.OK, h.do(0, Op{Type: wire.OpDelete, Path: "/zookeeper/quota/app/zookeeper_limits", Version: -1}).Err)
	r = h.apply(&Command{Type: CmdOps, EnforceQuota: true, Ops: []Op{createOp("/app/e")}})
	require.Equal(t, wire.OK, r.Err)
}

// TestQuotaLimitsInZkCliFormat: zkCli 3.8's setquota writes the limits
// as StatsTrack.toString does, "count=5,bytes=-1=;byteHardLimit=100;
// countHardLimit=1" (read off ZooKeeper 3.8.0), which ZooKeeper reads by
// splitting on [,;]+ and then on "=". Paddock split on "," alone, so it
// lost the soft byte limit and both hard limits, and enforced none.
func TestQuotaLimitsInZkCliFormat(t *testing.T) {
	for data, want := range map[string]quotaTrack{
		"count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=1": {-1, -1, 1, -1},
		"count=5,bytes=-1=;byteHardLimit=100;countHardLimit=1": {5, -1, 1, 100},
		"count=5,bytes=7=;byteHardLimit=100":                   {5, 7, -1, 100},
		"count=3,bytes=10,countHardLimit=4,byteHardLimit=20":   {3, 10, 4, 20},
		"count=3,bytes=10":                    {3, 10, -1, -1},
		"":                                    {-1, -1, -1, -1},
		"count=x,,;bytes;=5,countHardLimit=2": {-1, -1, 2, -1},
	} {
		require.Equal(t, want, parseQuota([]byte(data)), "%q", data)
	}

	h := newHarness(t)
	for _, n := range [][2]string{{"/app", ""}, {"/zookeeper/quota/app", ""},
		{"/zookeeper/quota/app/zookeeper_limits", "count=-1,bytes=-1=;byteHardLimit=-1;countHardLimit=2"},
		{"/zookeeper/quota/app/zookeeper_stats", ""}} {
		require.Equal(t, wire.OK, h.create(n[0], n[1], wire.ModePersistent).Err, n[0])
	}
	r := h.apply(&Command{Type: CmdOps, EnforceQuota: true, Ops: []Op{createOp("/app/a")}})
	require.Equal(t, wire.OK, r.Err)
	r = h.apply(&Command{Type: CmdOps, EnforceQuota: true, Ops: []Op{createOp("/app/b")}})
	require.Equal(t, wire.ErrQuotaExceeded, r.Err, "the hard count limit of 2 (/app and /app/a)")
}
