package server

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestZooCfgClientPortUnset: ZooKeeper opens no plaintext client port
// without clientPort (0 is "not set"); Paddock used to open 2181 on every
// interface beside a secure port. With neither port the server is refused.
func TestZooCfgClientPortUnset(t *testing.T) {
	dir := t.TempDir()
	cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nsecureClientPort=2281\n")
	require.NoError(t, err)
	require.True(t, cfg.NoClientPort, "secureClientPort alone: no plaintext port")
	require.Equal(t, 2281, cfg.SecurePort)

	for _, text := range []string{"", "clientPort=0\n"} {
		cfg, _, err = loadZooCfg(t, "dataDir="+dir+"\n"+text)
		require.NoError(t, err)
		require.True(t, cfg.NoClientPort, text)
		require.ErrorContains(t, cfg.Validate(), "no client port", text)
	}
	cfg.Port = 0 // --port 0 (paddock server sets NoClientPort false with it)
	cfg.NoClientPort = false
	require.NoError(t, cfg.Validate())

	cfg, _, err = loadZooCfg(t, "dataDir="+dir+"\nclientPort=2182\n")
	require.NoError(t, err)
	require.False(t, cfg.NoClientPort)

	// As ZooKeeper: an address without its port is an error.
	_, _, err = loadZooCfg(t, "dataDir="+dir+"\nclientPortAddress=127.0.0.1\n")
	require.ErrorContains(t, err, "clientPortAddress is set but clientPort is not set")
	_, _, err = loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\nsecureClientPortAddress=127.0.0.1\n")
	require.ErrorContains(t, err, "secureClientPortAddress is set but secureClientPort is not set")

	// This node's server.N line gives it a client port.
	writeFile(t, dir, "myid", "1\n")
	cfg, zc, err := loadZooCfg(t, "dataDir="+dir+"\nserver.1=127.0.0.1:2888:3888;127.0.0.1:2191\nserver.2=127.0.0.2:2888:3888;2181\n")
	require.NoError(t, err)
	require.NoError(t, zc.Finish(&cfg, false))
	require.False(t, cfg.NoClientPort)
	require.Equal(t, "127.0.0.1:2191", cfg.addr())

	plain := DefaultConfig()
	require.False(t, plain.NoClientPort, "paddock server without a zoo.cfg")
}

// TestZooCfgAuthEnforcementRefused: the keys that make ZooKeeper refuse
// unauthenticated clients used to be logged as unused and ignored, so
// Paddock served those clients; a provider Paddock lacks (SASL) was
// ignored the same way. They are refused; disabled or built-in ones pass.
func TestZooCfgAuthEnforcementRefused(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"enforce.auth.enabled=true\nenforce.auth.schemes=sasl\n":                               "cannot require clients to authenticate",
		"enforce.auth.enabled=TRUE\n":                                                          "cannot require clients to authenticate",
		"zookeeper.enforce.auth.enabled=true\n":                                                "cannot require clients to authenticate",
		"sessionRequireClientSASLAuth=true\n":                                                  "cannot require clients to authenticate",
		"requireClientAuthScheme=sasl\n":                                                       "ZooKeeper 3.8 does not read this key either",
		"authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n":         "SASLAuthenticationProvider is not supported",
		"authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n":      "is not supported",
		"zookeeper.authProvider.2=com.example.CustomProvider\n":                                "com.example.CustomProvider is not supported",
		"enforce.auth.enabled=false\n":                                                         "",
		"enforce.auth.enabled=yes\n":                                                           "", // Boolean.parseBoolean: false
		"enforce.auth.schemes=sasl\n":                                                          "", // read only when enabled
		"sessionRequireClientSASLAuth=false\n":                                                 "",
		"authProvider.1=org.apache.zookeeper.server.auth.DigestAuthenticationProvider\n":       "",
		"authProvider.ip=org.apache.zookeeper.server.auth.IPAuthenticationProvider\n":          "",
		"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider\n":      "",
		"zookeeper.authProvider.3=org.apache.zookeeper.server.auth.X509AuthenticationProvider": "",
	} {
		_, zc, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\n"+text)
		if want != "" {
			require.ErrorContains(t, err, want, text)
			continue
		}
		require.NoError(t, err, text)
		require.Empty(t, zc.Unused, text)
	}
}

// TestZooCfgAdminEnableServerLast: admin.enableServer=false used to be
// undone by an admin.serverPort or admin.serverAddress line after it.
// As ZooKeeper's AdminServerFactory, it holds wherever it is, and only
// "false" exactly turns the admin server off.
func TestZooCfgAdminEnableServerLast(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string]string{
		"admin.enableServer=false\nadmin.serverPort=8081\nadmin.serverAddress=0.0.0.0\n": "",
		"admin.serverPort=8081\nadmin.enableServer=false\n":                              "",
		"admin.serverPort=8081\nadmin.enableServer=FALSE\n":                              "127.0.0.1:8081",
		"admin.enableServer=false\nadmin.enableServer=true\nadmin.serverPort=8081\n":     "127.0.0.1:8081",
		"admin.serverPort=8081\n": "127.0.0.1:8081",
	} {
		cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\n"+text)
		require.NoError(t, err, text)
		require.Equal(t, want, cfg.AdminAddr, text)
	}
}

// TestZooCfgSSLQuorumNeedsStores: sslQuorum=true without the quorum key
// and trust stores used to run the cluster port in plaintext; it is
// refused. A standalone server has no cluster port, and ZooKeeper's
// strict boolean parse applies.
func TestZooCfgSSLQuorumNeedsStores(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "1\n")
	ensemble := "dataDir=" + dir + "\nclientPort=2181\nserver.1=127.0.0.1:2888:3888\nserver.2=127.0.0.2:2888:3888\n"
	for text, want := range map[string]string{
		"sslQuorum=true\n": "sslQuorum=true needs the quorum key and trust stores",
		"sslQuorum=true\nssl.quorum.keyStore.location=/k.pem\n":    "sslQuorum=true needs",
		"sslQuorum=true\nssl.quorum.trustStore.location=/ca.pem\n": "sslQuorum=true needs",
		"sslQuorum=false\n": "",
		"sslQuorum=True\nssl.quorum.keyStore.location=/k.pem\nssl.quorum.trustStore.location=/ca.pem\n": "",
	} {
		cfg, zc, err := loadZooCfg(t, ensemble+text)
		require.NoError(t, err, text)
		err = zc.Finish(&cfg, false)
		if want == "" {
			require.NoError(t, err, text)
			continue
		}
		require.ErrorContains(t, err, want, text)
		// Flags may give the stores instead.
		cfg.ClusterTLSFiles = TLSFiles{CertFile: "/c.pem", KeyFile: "/k.pem", TrustStore: "/ca.pem"}
		require.NoError(t, zc.Finish(&cfg, false), text)
	}
	cfg, zc, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\nsslQuorum=true\n")
	require.NoError(t, err)
	require.NoError(t, zc.Finish(&cfg, false), "standalone: no cluster port")
	_, _, err = loadZooCfg(t, "dataDir="+dir+"\nsslQuorum=yes\n")
	require.ErrorContains(t, err, "choose true or false")
}

// TestZooCfgHierarchicalQuorumRefused: group.N/weight.N lines used to be
// logged as unused while the quorum stayed a plain majority; they are
// refused, in zoo.cfg and in the dynamic config file.
func TestZooCfgHierarchicalQuorumRefused(t *testing.T) {
	dir := t.TempDir()
	ensemble := "server.1=10.0.0.1:2888:3888\nserver.2=10.0.0.2:2888:3888\nserver.3=10.0.0.3:2888:3888\n"
	for _, lines := range []string{"group.1=1:2\ngroup.2=3\n", "weight.1=2\n"} {
		_, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\n"+ensemble+lines)
		require.ErrorContains(t, err, "hierarchical quorums", lines)
		dyn := writeFile(t, dir, "zoo.cfg.dynamic", ensemble+lines)
		_, _, err = loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\ndynamicConfigFile="+dyn+"\n")
		require.ErrorContains(t, err, "hierarchical quorums", lines)
		require.ErrorContains(t, err, dyn)
	}
}

// TestZooCfgQuorumListenOnAllIPs: quorumListenOnAllIPs=true used to be
// ignored, so a node whose own server line names an address that is not
// local (NAT) could not bind; the cluster port now listens on every
// interface at that line's port, and the line's address stays the one
// peers dial.
func TestZooCfgQuorumListenOnAllIPs(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "myid", "2\n")
	ensemble := "dataDir=" + dir + "\nclientPort=2181\nserver.1=10.0.0.1:2888:3888\nserver.2=203.0.113.7:2889:3889\n"
	for text, want := range map[string]string{"quorumListenOnAllIPs=true\n": ":2889", "quorumListenOnAllIPs=false\n": "", "": ""} {
		cfg, zc, err := loadZooCfg(t, ensemble+text)
		require.NoError(t, err)
		require.NoError(t, zc.Finish(&cfg, false))
		require.Equal(t, want, cfg.ClusterBind, text)
		require.Equal(t, "203.0.113.7:2889", cfg.Peers[1].Addr, "what peers dial")
	}
	_, _, err := loadZooCfg(t, ensemble+"quorumListenOnAllIPs=1\n")
	require.ErrorContains(t, err, "choose true or false")
}

// TestZooCfgDefaultTickTime: a zoo.cfg without tickTime gets ZooKeeper
// 3.8's 3000 ms (and session timeouts of 2 and 20 ticks of it), where
// Paddock used 2000; paddock server without a zoo.cfg keeps its own.
func TestZooCfgDefaultTickTime(t *testing.T) {
	cfg, _, err := loadZooCfg(t, "dataDir="+t.TempDir()+"\nclientPort=2181\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Equal(t, 3*time.Second, cfg.TickTime)
	require.Equal(t, 6*time.Second, cfg.MinSessionTimeout)
	require.Equal(t, 60*time.Second, cfg.MaxSessionTimeout)

	cfg, _, err = loadZooCfg(t, "dataDir="+t.TempDir()+"\nclientPort=2181\ntickTime=2000\n")
	require.NoError(t, err)
	require.Equal(t, 2*time.Second, cfg.TickTime)
	require.Equal(t, DefaultTickTime, DefaultConfig().TickTime)
}

// TestZooCfgServerIDsAsNumbers: server.01 and a myid of 1 are the same
// server, as ZooKeeper's Long.parseLong reads them; Paddock compared the
// strings ("node id 1 is not among the 3 peers").
func TestZooCfgServerIDsAsNumbers(t *testing.T) {
	// id: this node's id once validated, spelled as its server line
	// spells it (a data dir written with server.01 names node "01" in its
	// Raft configuration, so the spelling must not change).
	for _, tc := range []struct{ myid, lines, id, err string }{
		{"1\n", "server.01=127.0.0.1:2888:3888\nserver.02=127.0.0.2:2888:3888\nserver.03=127.0.0.3:2888:3888\n", "01", ""},
		{"01\n", "server.1=127.0.0.1:2888:3888\nserver.2=127.0.0.2:2888:3888\n", "1", ""},
		{"01\n", "server.01=127.0.0.1:2888:3888\nserver.02=127.0.0.2:2888:3888\n", "01", ""},
		{"+2", "server.1=127.0.0.1:2888:3888\nserver.002=127.0.0.2:2888:3888\n", "002", ""},
		{"1\n", "server.1=127.0.0.1:2888:3888\nserver.01=127.0.0.2:2888:3888\n", "", "server.01 and server.1 are the same server id 1"},
		{"one\n", "server.1=127.0.0.1:2888:3888\n", "", `myid "one" is not a number`},
		{"1\n", "server.x=127.0.0.1:2888:3888\n", "", "server.x: server ids are numbers"},
	} {
		dir := t.TempDir()
		writeFile(t, dir, "myid", tc.myid)
		cfg, zc, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\n"+tc.lines)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, tc)
			continue
		}
		require.NoError(t, err, tc)
		require.NoError(t, zc.Finish(&cfg, false))
		require.NoError(t, cfg.Validate(), tc)
		self, err := cfg.self()
		require.NoError(t, err)
		require.Equal(t, tc.id, self.ID, tc)
		require.Equal(t, tc.id, cfg.ID, "Raft's id for this node")
	}
}

// TestZooCfgSSLKeysWithoutSecurePort: a zoo.cfg's ssl.* keys configure
// the secure client port; without one ZooKeeper builds no client TLS, so a
// key store without a trust store must not stop the server (ssl.clientAuth
// defaults to need, which needs a trust store).
func TestZooCfgSSLKeysWithoutSecurePort(t *testing.T) {
	dir := t.TempDir()
	cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\nssl.keyStore.location="+dir+"/ks.pem\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Nil(t, cfg.TLS)
}

// TestZooCfgExactYesNo: ZooKeeper turns ACLs off only for skipACL=yes and
// fsync off only for forceSync=no, compared exactly; skipACL=true used
// to turn ACLs off here.
func TestZooCfgExactYesNo(t *testing.T) {
	dir := t.TempDir()
	for text, want := range map[string][2]bool{ // SkipACL, NoSync
		"skipACL=yes\n":   {true, false},
		"skipACL=true\n":  {false, false},
		"skipACL=Yes\n":   {false, false},
		"skipACL=YES\n":   {false, false},
		"forceSync=no\n":  {false, true},
		"forceSync=NO\n":  {false, false},
		"forceSync=No\n":  {false, false},
		"forceSync=false": {false, false},
	} {
		cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\n"+text)
		require.NoError(t, err, text)
		require.Equal(t, want, [2]bool{cfg.SkipACL, cfg.NoSync}, text)
	}
}

// X509AuthenticationProvider.superUser (a system property ZooKeeper also
// takes from zoo.cfg) names the x509 super user; it was logged as unused.
func TestZooCfgX509SuperUser(t *testing.T) {
	cfg, zc, err := loadZooCfg(t, "tickTime=2000\nclientPort=2181\ndataDir="+t.TempDir()+"\nX509AuthenticationProvider.superUser=O=example,CN=admin\n")
	require.NoError(t, err)
	require.Empty(t, zc.Unused)
	require.Equal(t, "O=example,CN=admin", cfg.X509SuperUser)
}

// A cluster node without its id is told where the id goes and which ids
// the server lines give; it was told "read myid: open DIR/myid: no such
// file or directory" and "node id "7" is not among the 3 peers".
func TestMissingOrUnknownNodeIDIsExplained(t *testing.T) {
	dir := t.TempDir()
	_, err := ReadMyID(dir)
	require.ErrorContains(t, err, "echo N > "+filepath.Join(dir, "myid"))
	require.ErrorContains(t, err, "--id")

	cfg := DefaultConfig()
	cfg.ID = "7"
	cfg.Peers = []Peer{{ID: "1", Addr: "127.0.0.1:2888"}, {ID: "2", Addr: "127.0.0.1:2889"}, {ID: "3", Addr: "127.0.0.1:2890"}}
	_, err = cfg.self()
	require.ErrorContains(t, err, "this node's id 7 (myid or --id) has no server.7 line")
	require.ErrorContains(t, err, "server.1, server.2, server.3")
}

// TestZooCfgContainerReapRate: znode.container.maxPerMinute is a rate, as
// in ZooKeeper (which spaces deletions 60000/maxPerMinute ms apart), so a
// sweep every checkIntervalMs deletes at most its share of it. It used to
// be taken as a count per sweep: with checkIntervalMs=1000 and
// maxPerMinute=60, 60 containers a second instead of one.
func TestZooCfgContainerReapRate(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		lines string
		every time.Duration
		max   int
	}{
		{"znode.container.checkIntervalMs=1000\nznode.container.maxPerMinute=60\n", time.Second, 1},
		{"znode.container.maxPerMinute=120\nznode.container.checkIntervalMs=1000\n", time.Second, 2}, // either order
		{"znode.container.maxPerMinute=600\n", DefaultReapInterval, 600},
		{"znode.container.checkIntervalMs=100\nznode.container.maxPerMinute=60\n", 100 * time.Millisecond, 1}, // at least one
		{"znode.container.checkIntervalMs=120000\n", 2 * time.Minute, DefaultMaxReapPerInterval},
	} {
		cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\n"+tc.lines)
		require.NoError(t, err, tc.lines)
		require.Equal(t, tc.every, cfg.ReapInterval, tc.lines)
		require.Equal(t, tc.max, cfg.MaxReapPerInterval, tc.lines)
	}
	_, _, err := loadZooCfg(t, "dataDir="+dir+"\nclientPort=2181\nznode.container.maxPerMinute=0\n")
	require.ErrorContains(t, err, "maxPerMinute must be positive")
}
