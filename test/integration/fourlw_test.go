package integration_test

import (
	"io"
	"net"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// Section 6: four-letter words.

// fourLetterWord sends word on a new connection and returns everything the
// server answers before it closes.
func fourLetterWord(t *testing.T, srv *zktest.Server, word string) string {
	t.Helper()
	nc, err := net.DialTimeout("tcp", srv.Addr(), waitTimeout)
	require.NoError(t, err)
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(waitTimeout))
	_, err = nc.Write([]byte(word))
	require.NoError(t, err)
	b, err := io.ReadAll(nc)
	require.NoError(t, err, "the server answers and closes")
	return string(b)
}

func TestFLWSrvr(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	mustCreate(t, c, "/a", nil)
	stats, ok := zk.FLWSrvr(srv.Servers(), waitTimeout)
	require.True(t, ok, "srvr parses: %+v", stats)
	require.Len(t, stats, 1)
	s := stats[0]
	require.NoError(t, s.Error)
	require.Equal(t, zk.ModeStandalone, s.Mode)
	require.True(t, strings.HasPrefix(s.Version, "3.9.0-paddock"), s.Version)
	require.EqualValues(t, 5, s.NodeCount, "/, /zookeeper, /zookeeper/quota, /zookeeper/config, /a")
	require.GreaterOrEqual(t, s.Connections, int64(1))
	require.Positive(t, s.Received)
	require.False(t, s.BuildTime.IsZero())
	last := srv.Server().FSM().LastZxid()
	require.Equal(t, last, int64(s.Epoch)<<32|int64(uint32(s.Counter)))
}

func TestFLWRuok(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	require.Equal(t, []bool{true}, zk.FLWRuok(srv.Servers(), waitTimeout))
	require.Equal(t, "imok", fourLetterWord(t, srv, "ruok"))
}

func TestFLWCons(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	// A raw client whose last request is a ping (xid -2) and one whose
	// last is an auth (xid -4): cons must still print parseable lines.
	pinger := connectRaw(t, srv)
	pinger.write(requestFrame(wire.XidPing, wire.OpPing, nil))
	h, _ := pinger.next()
	require.Equal(t, wire.XidPing, h.Xid)
	auth := connectRaw(t, srv)
	auth.write(requestFrame(wire.XidAuth, wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("u:p")}))
	h, _ = auth.next()
	require.Equal(t, wire.XidAuth, h.Xid)

	clients, ok := zk.FLWCons(srv.Servers(), waitTimeout)
	require.Len(t, clients, 1)
	require.NoError(t, clients[0].Error)
	require.True(t, ok, "every cons line parses")
	sessions := map[int64]bool{}
	for _, cl := range clients[0].Clients {
		sessions[cl.SessionID] = true
		require.GreaterOrEqual(t, cl.Lcxid, int64(0), "lcxid never shows a special xid")
	}
	for _, id := range []int64{c.SessionID(), pinger.resp.SessionID, auth.resp.SessionID} {
		require.True(t, sessions[id], "session 0x%x listed", id)
	}
}

func TestFLWMntr(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	out := fourLetterWord(t, srv, "mntr")
	line := regexp.MustCompile(`^zk_[a-z_]+\t[^\t]+$`)
	kv := map[string]string{}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.NotEmpty(t, lines)
	for _, l := range lines {
		require.Regexp(t, line, l)
		k, v, _ := strings.Cut(l, "\t")
		kv[k] = v
	}
	require.Equal(t, "standalone", kv["zk_server_state"])
	require.Contains(t, kv["zk_version"], "3.9.0-paddock")
	require.Equal(t, "4", kv["zk_znode_count"])
	for _, k := range []string{"zk_avg_latency", "zk_packets_received", "zk_packets_sent", "zk_outstanding_requests",
		"zk_watch_count", "zk_ephemerals_count", "zk_approximate_data_size", "zk_num_alive_connections"} {
		require.Contains(t, kv, k)
	}
	if runtime.GOOS == "linux" {
		// File-descriptor alerts read these (ZooKeeper reports them on Unix).
		open, err := strconv.Atoi(kv["zk_open_file_descriptor_count"])
		require.NoError(t, err)
		limit, err := strconv.Atoi(kv["zk_max_file_descriptor_count"])
		require.NoError(t, err)
		require.Positive(t, open)
		require.GreaterOrEqual(t, limit, open)
	}
}

func TestFLWOtherWords(t *testing.T) {
	t.Parallel()
	srv := startServer(t)
	c := connect(t, srv)
	_, err := c.Create("/eph", nil, zk.FlagEphemeral, openACL)
	require.NoError(t, err)
	_, _, _, err = c.GetW("/eph")
	require.NoError(t, err)
	require.Contains(t, fourLetterWord(t, srv, "stat"), "Clients:")
	require.Contains(t, fourLetterWord(t, srv, "conf"), "tickTime=")
	require.Contains(t, fourLetterWord(t, srv, "envi"), "zookeeper.version=3.9.0-paddock")
	require.Equal(t, "rw", fourLetterWord(t, srv, "isro"))
	require.Contains(t, fourLetterWord(t, srv, "wchs"), "Total watches:1")
	require.Contains(t, fourLetterWord(t, srv, "wchp"), "/eph")
	require.Contains(t, fourLetterWord(t, srv, "dump"), "/eph")
}

func TestFLWWhitelist(t *testing.T) {
	t.Parallel()
	srv := startServer(t, zktest.WithFourLetterWords("srvr"))
	for _, w := range []string{"ruok", "mntr", "cons", "stat"} {
		require.Equal(t, w+" is not executed because it is not in the whitelist.\n", fourLetterWord(t, srv, w))
	}
	require.Equal(t, []bool{false}, zk.FLWRuok(srv.Servers(), waitTimeout))
	_, ok := zk.FLWSrvr(srv.Servers(), waitTimeout)
	require.True(t, ok, "srvr is whitelisted")
	requireHealthy(t, srv)
}
