package zkcli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// The expected outputs are those of ZooKeeper 3.8.0's
// ConfigUtils.getClientConfigStr, run on the same inputs.
func TestClientConfigStr(t *testing.T) {
	for in, want := range map[string]string{
		"": " ",
		"server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889:participant;127.0.0.1:2182\n" +
			"server.3=127.0.0.1:2890:3890:participant;127.0.0.1:2183\nversion=100000000": "100000000 127.0.0.1:2182,127.0.0.1:2181,127.0.0.1:2183",
		// Java refuses a quorum port equal to the election port.
		"server.1=127.0.0.1:35523:35523:participant\nserver.2=127.0.0.1:38567:38567:participant\nversion=0":           "0 ",
		"server.1=h1:1:2;2181\nserver.2=h2:1:2:observer;[::1]:2182\nserver.3=bad\nserver.4=h4:1:2;h4:2184\nversion=5": "5 0:0:0:0:0:0:0:1:2182,0.0.0.0:2181,h4:2184",
		// 14 entries: the table is resized once.
		"server.1=a:1:2;1\nserver.2=a:1:2;2\nserver.3=a:1:2;3\nserver.4=a:1:2;4\nserver.5=a:1:2;5\nserver.6=a:1:2;6\n" +
			"server.7=a:1:2;7\nserver.8=a:1:2;8\nserver.9=a:1:2;9\nserver.10=a:1:2;10\nserver.11=a:1:2;11\n" +
			"server.12=a:1:2;12\nserver.13=a:1:2;13\nserver.255=a:1:2;255\nversion=ff": "ff 0.0.0.0:10,0.0.0.0:11,0.0.0.0:2,0.0.0.0:1,0.0.0.0:12,0.0.0.0:13,0.0.0.0:6,0.0.0.0:5,0.0.0.0:4,0.0.0.0:3,0.0.0.0:9,0.0.0.0:8,0.0.0.0:7,0.0.0.0:255",
		"# comment\n  server.7 = x:1:2 ; 10.0.0.1:7\nversion:abc": "abc ",
	} {
		require.Equal(t, want, clientConfigStr(in), in)
	}
}

func TestParseWordOptions(t *testing.T) {
	o, err := parseOptions("sv:|file:|add:", []string{"-s", "-add", "server.1=a:1:2", "-v", "1f"})
	require.NoError(t, err)
	require.Equal(t, map[byte]string{'s': "", 'v': "1f"}, o.flags)
	require.Equal(t, map[string]string{"add": "server.1=a:1:2"}, o.words)
	require.True(t, o.hasWord("add"))
	require.False(t, o.hasWord("file"))
	_, err = parseOptions("sv:|file:|add:", []string{"-file"})
	require.EqualError(t, err, "Missing argument for option: file")
	_, err = parseOptions("sv:|file:|add:", []string{"-a", "x"})
	require.EqualError(t, err, "Unrecognized option: -a")
	_, err = parseOptions("sv:|file:|add:", []string{"-add=x"})
	require.EqualError(t, err, "Unrecognized option: -add=x")
}

// On a standalone server /zookeeper/config is empty.
func TestConfigStandalone(t *testing.T) {
	f := newFixture(t)
	f.expect("config", "\n")
	f.expect("config extra args", "\n")
	f.expect("config -c", " \n")
	f.expect("config -s", "\n"+f.statText("/zookeeper/config"))
	f.expect("config -w", "\n")
	f.fail("config -x", "Unrecognized option: -x")
}

// The messages are zkCli 3.8.0's (against a standalone ZooKeeper, where
// reconfig is disabled).
func TestReconfigErrors(t *testing.T) {
	f := newFixture(t)
	f.fail("reconfig", reconfigUsage)
	f.fail("reconfig -s", reconfigUsage)
	f.fail("reconfig -add server.5=127.0.0.1:1234:1235;1236", "KeeperErrorCode = Reconfig is disabled")
	f.fail("reconfig -remove 3", "KeeperErrorCode = Reconfig is disabled")
	f.fail("reconfig -members server.1=127.0.0.1:1:2;3", "KeeperErrorCode = Reconfig is disabled")
	f.fail("reconfig -v 1a -remove 3", "KeeperErrorCode = Reconfig is disabled")
	f.fail("reconfig -file /nonexistent", "Error processing /nonexistent/nonexistent (No such file or directory)")
	f.fail("reconfig -file /a -members x", "Can't use -file and -members together (conflicting non-incremental modes)")
	f.fail("reconfig -add x -members y", "Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	f.fail("reconfig -file y -remove 1", "Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	f.fail("reconfig -v zz -add x", "-v must be followed by a long (configuration version)")
	f.fail("reconfig -v", "Missing argument for option: v")
	f.fail("reconfig -a x", "Unrecognized option: -a")
	f.fail("reconfig -add", "Missing argument for option: add")

	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.cfg")
	require.NoError(t, os.WriteFile(bad, []byte("server.1=127.0.0.1:1:2;3\nclientPort=2181\n"), 0o600))
	f.fail("reconfig -file "+bad, "Error processing "+bad+"Unrecognised parameter: clientPort")
}

func TestMembersFromFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "dyn.cfg")
	require.NoError(t, os.WriteFile(p, []byte("# members\nserver.3=h3:1:2;2183\nversion=1f\nserver.01 = h1:1:2;2181\nserver.1=h1b:1:2;2181\n"), 0o600))
	got, err := membersFromFile(p)
	require.NoError(t, err)
	require.Equal(t, "server.1=h1b:1:2;2181\nserver.3=h3:1:2;2183\nversion=1f", got)
}

// config and reconfig on a cluster with reconfig enabled; the expected
// output is built as zkCli's GetConfigCommand and ReconfigCommand print it.
func TestReconfigCluster(t *testing.T) {
	cl := zktest.StartCluster(t, 3, zktest.WithReconfig(), zktest.WithSuperDigest("super:"+server.DigestOf("super:test")))
	leader := cl.Leader()
	victim, via := (leader+1)%3, (leader+2)%3
	events := &syncBuffer{}
	sh := New(Config{Events: events, Location: time.UTC, Version: "paddock test", Timeout: 5 * time.Second})
	require.NoError(t, sh.Connect(context.Background(), cl.Servers()[via]))
	t.Cleanup(func() { sh.Close() })
	other, err := client.Connect(context.Background(), []string{cl.Servers()[via]})
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	f := &fixture{t: t, sh: sh, events: events, other: other}

	var cfg []byte
	require.Eventually(t, func() bool {
		cfg, _, err = other.GetConfig(context.Background())
		return err == nil && strings.Count(string(cfg), "server.") == 3
	}, 10*time.Second, 10*time.Millisecond, "the membership published")
	f.expect("config", string(cfg)+"\n")
	f.expect("config -s", string(cfg)+"\n"+f.statText("/zookeeper/config"))
	f.expect("config -c", clientConfigStr(string(cfg))+"\n")
	f.expect("config -w", string(cfg)+"\n")

	f.fail(fmt.Sprintf("reconfig -remove %d", victim+1), "Insufficient permission : ")
	f.ok("addauth digest super:test")
	f.fail(fmt.Sprintf("reconfig -v 1a -remove %d", victim+1), "version No is not valid : ")
	out := f.ok(fmt.Sprintf("reconfig -remove %d", victim+1))
	now, _, err := other.GetConfig(context.Background())
	require.NoError(t, err)
	require.Equal(t, "Committed new configuration:\n"+string(now)+"\n", out)
	require.NotContains(t, string(now), fmt.Sprintf("server.%d=", victim+1))
	f.waitEvents(event("NodeDataChanged", "/zookeeper/config"))

	// -members with the current members, -s and -v: nothing changes.
	version, ok := client.ConfigVersion(now)
	require.True(t, ok)
	var members []string
	for _, l := range strings.Split(string(now), "\n") {
		if strings.HasPrefix(l, "server.") {
			members = append(members, l)
		}
	}
	out = f.ok(fmt.Sprintf("reconfig -s -v %x -members %s", version, strings.Join(members, ",")))
	require.Equal(t, "Committed new configuration:\n"+string(now)+"\n"+f.statText("/zookeeper/config"), out)
	f.fail("reconfig -members server.x=nonsense", "Arguments are not valid : ")
}
