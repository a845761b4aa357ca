package integration_test

import (
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestQuotaAsZkCliSetsIt creates the quota nodes the way zkCli's setquota
// does and checks the stats node and hard-limit enforcement.
func TestQuotaAsZkCliSetsIt(t *testing.T) {
	t.Parallel()
	srv := zktest.Start(t, zktest.WithEnforceQuota())
	c := connect(t, srv)
	mustCreate(t, c, "/svc", []byte("ab"))
	mustCreate(t, c, "/zookeeper/quota/svc", nil)
	mustCreate(t, c, "/zookeeper/quota/svc/zookeeper_limits", []byte("count=-1,bytes=-1,countHardLimit=3,byteHardLimit=-1"))
	mustCreate(t, c, "/zookeeper/quota/svc/zookeeper_stats", nil)
	mustCreate(t, c, "/svc/a", nil)
	mustCreate(t, c, "/svc/b", []byte("xyz"))
	data, _, err := c.Get("/zookeeper/quota/svc/zookeeper_stats")
	require.NoError(t, err)
	require.Equal(t, "count=3,bytes=5", string(data))
	_, err = c.Create("/svc/c", nil, 0, zk.WorldACL(zk.PermAll))
	require.Error(t, err, "the hard count limit refuses a fourth node")
	require.Contains(t, err.Error(), "-125", "go-zookeeper has no name for QuotaExceeded")
}
