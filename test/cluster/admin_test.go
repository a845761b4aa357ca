package cluster_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

func TestAdminEndpoints(t *testing.T) {
	c := zktest.StartCluster(t, 3)
	follower := (c.Leader() + 1) % 3
	h := httptest.NewServer(c.Node(follower).Server().AdminHandler())
	defer h.Close()

	code, body := get(t, h.URL+"/cluster/members")
	require.Equal(t, http.StatusOK, code)
	var members struct {
		Members []struct{ ID string } `json:"members"`
		Leader  string                `json:"leader"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &members))
	require.Len(t, members.Members, 3)
	require.NotEmpty(t, members.Leader)

	code, body = get(t, h.URL+"/commands/mntr")
	require.Equal(t, http.StatusOK, code)
	var monitor map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &monitor))
	require.Equal(t, "follower", monitor["server_state"])
	require.Equal(t, "monitor", monitor["command"], "the canonical name, as ZooKeeper's AdminServer")
	require.IsType(t, float64(0), monitor["znode_count"], "numbers are JSON numbers")
	require.IsType(t, float64(0), monitor["avg_latency"])
	code, _ = get(t, h.URL+"/commands/ruok")
	require.Equal(t, http.StatusOK, code)
	code, body = get(t, h.URL+"/commands/nonsense")
	require.Equal(t, http.StatusOK, code, "as ZooKeeper: the error is in the body")
	require.Contains(t, body, "Unknown command: nonsense")
	code, _ = get(t, h.URL+"/readyz")
	require.Equal(t, http.StatusOK, code)

	// The herd made visible: three watchers, one change, a fan-out of 3.
	// The watchers use Paddock's client: go-zookeeper may re-register a
	// watch set right after connecting with setWatches once the node
	// exists, and the server then rightly counts a fourth NodeCreated.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := 0; i < 3; i++ {
		cl, err := client.Connect(ctx, []string{c.Servers()[follower]})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		_, _, _, err = cl.ExistsW(ctx, "/herd")
		require.NoError(t, err)
	}
	writer, _ := connect(t, []string{c.Servers()[follower]})
	_, err := writer.Create("/herd", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	_, body = get(t, h.URL+"/metrics")
	require.Contains(t, body, `paddock_watch_notifications_total{type="NodeCreated"} 3`)
	require.Contains(t, body, "paddock_watch_fanout_bucket")
	require.Contains(t, body, `paddock_requests_total{op="create"} 1`)

	// Membership changes through a follower's endpoint are forwarded.
	req, _ := http.NewRequest(http.MethodPost, h.URL+"/cluster/transfer-leadership", strings.NewReader(""))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", b)
}
