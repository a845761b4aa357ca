package server

import (
	"bufio"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestZooCfgSecurePortOnly: a zoo.cfg with secureClientPort and no
// clientPort serves TLS alone; Paddock used to open a plaintext 2181 on
// every interface beside it. conf reports clientPort=-1, as ZooKeeper.
func TestZooCfgSecurePortOnly(t *testing.T) {
	dir := t.TempDir()
	keyStore, trustStore, clientCert := pemStores(t, dir)
	cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nsecureClientPort=2281\nsecureClientPortAddress=127.0.0.1\n"+
		"ssl.keyStore.location="+keyStore+"\nssl.trustStore.location="+trustStore+"\n4lw.commands.whitelist=conf\n")
	require.NoError(t, err)
	require.True(t, cfg.NoClientPort)
	ln, err := net.Listen("tcp", "127.0.0.1:0") // instead of 2281
	require.NoError(t, err)
	cfg.SecurePort, cfg.SecureListener, cfg.NoSync = 0, ln, true
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv, err := New(cfg)
	require.NoError(t, err)
	defer srv.Close()
	require.Nil(t, srv.Addr(), "no plaintext listener")
	require.NotNil(t, srv.SecureAddr())

	nc, err := tls.Dial("tcp", srv.SecureAddr().String(), clientTLS(t, trustStore, clientCert))
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("conf"))
	require.NoError(t, err)
	out, err := io.ReadAll(bufio.NewReader(nc))
	require.NoError(t, err)
	require.Contains(t, string(out), "clientPort=-1\n")
}

// TestZooCfgQuorumListenOnAllIPsBinds: a node whose own server line names
// an address that is not on this host (192.0.2.1, TEST-NET) could not
// start ("cannot assign requested address"); with quorumListenOnAllIPs it
// listens on every interface and starts.
func TestZooCfgQuorumListenOnAllIPsBinds(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "1\n")
	// standaloneEnabled=false: one server line alone is otherwise standalone.
	text := "dataDir=" + dir + "\nstandaloneEnabled=false\nserver.1=192.0.2.1:0:3888;127.0.0.1:0\n"
	start := func(text string) (*Server, error) {
		cfg, zc, err := loadZooCfg(t, text)
		require.NoError(t, err)
		require.NoError(t, zc.Finish(&cfg, false))
		cfg.NoSync = true
		return New(cfg)
	}
	_, err := start(text)
	require.ErrorContains(t, err, "listen on cluster address 192.0.2.1:0")

	srv, err := start(text + "quorumListenOnAllIPs=true\n")
	require.NoError(t, err)
	defer srv.Close()
	require.Equal(t, "leader", srv.Mode())
	require.True(t, strings.HasPrefix(srv.Addr().String(), "127.0.0.1:"))
}

// TestZooCfgSecurePortBindsItsOwnAddress: as ZooKeeper, secureClientPort
// listens on every interface unless secureClientPortAddress is set; it
// used to take clientPortAddress, so a loopback-only plaintext port made
// the TLS port loopback-only too.
func TestZooCfgSecurePortBindsItsOwnAddress(t *testing.T) {
	dir := t.TempDir()
	keyStore, trustStore, _ := pemStores(t, dir)
	base := "dataDir=" + dir + "\nclientPort=2181\nclientPortAddress=127.0.0.1\nsecureClientPort=2281\n" +
		"ssl.keyStore.location=" + keyStore + "\nssl.trustStore.location=" + trustStore + "\n"
	cfg, _, err := loadZooCfg(t, base)
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", cfg.Bind)
	require.Equal(t, ZooCfgBind, cfg.SecureBind)

	cfg, _, err = loadZooCfg(t, base+"secureClientPortAddress=127.0.0.2\n")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.2", cfg.SecureBind)
}
