package server

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The expectations were checked against OpenJDK 17's
// java.util.Properties.load, followed by String.trim of key and value as
// ZooKeeper's QuorumPeerConfig does.
var propertiesCases = []struct {
	name, in string
	want     []string // key, value pairs
}{
	{"equals", "tickTime=2000\n", []string{"tickTime", "2000"}},
	{"blanks around equals", "  tickTime   =   2000   \n", []string{"tickTime", "2000"}},
	{"colon", "clientPort: 2182\n", []string{"clientPort", "2182"}},
	{"blank separator", "dataDir /var/lib/zk\n", []string{"dataDir", "/var/lib/zk"}},
	{"tab separator", "dataDir\t\t/var/lib/zk\n", []string{"dataDir", "/var/lib/zk"}},
	{"blank then equals", "initLimit  = 10\n", []string{"initLimit", "10"}},
	{"value keeps later separators", "server.1=a:2888:3888;2181\n", []string{"server.1", "a:2888:3888;2181"}},
	{"only one separator taken", "a==b\n", []string{"a", "=b"}},
	{"key alone", "standaloneEnabled\n", []string{"standaloneEnabled", ""}},
	{"comments", "# c\n! c\n   # c\n\nk=v\n", []string{"k", "v"}},
	{"hash inside a value", "k=v # not a comment\n", []string{"k", "v # not a comment"}},
	{"continuation", "server.1=127.0.0.1:\\\n    2888:3888\n", []string{"server.1", "127.0.0.1:2888:3888"}},
	{"continuation at end of file", "k=v\\", []string{"k", "v"}},
	{"escaped backslash ends no line", "k=C:\\\\\nj=w\n", []string{"k", "C:\\", "j", "w"}},
	{"comment line is not continued", "# c \\\nk=v\n", []string{"k", "v"}},
	{"escaped separator in key", "a\\:b=c\n", []string{"a:b", "c"}},
	{"escaped blank in key", "a\\ b c\n", []string{"a b", "c"}},
	{"escapes in value", "k=a\\tb\\u0041\\q\n", []string{"k", "a\tbAq"}},
	{"CRLF", "k=v\r\nj=w\r\n", []string{"k", "v", "j", "w"}},
	{"CR alone", "k=v\rj=w\r", []string{"k", "v", "j", "w"}},
	{"CR continuation", "k=a\\\r  b\r", []string{"k", "ab"}},
	{"surrogate pair", "k=\\uD83D\\uDE00!\n", []string{"k", "\U0001F600!"}},
	{"backslashes dropped as Java does", "dataDir=C:\\zk\\data\n", []string{"dataDir", "C:zkdata"}},
}

func TestScanPropertiesAsJava(t *testing.T) {
	for _, tc := range propertiesCases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			err := scanProperties(strings.NewReader(tc.in), "test", func(k, v string) error {
				got = append(got, k, v)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestScanPropertiesBadEscape(t *testing.T) {
	err := scanProperties(strings.NewReader("a=1\nk=\\u12x4\n"), "zoo.cfg", func(string, string) error { return nil })
	require.ErrorContains(t, err, "zoo.cfg line 2: k: malformed")
}

// A zoo.cfg in Java properties' other forms configures the same server.
func TestZooCfgPropertiesForms(t *testing.T) {
	cfg := DefaultConfig()
	zc, err := applyZooCfg(strings.NewReader(
		"tickTime 3000\nclientPort: 2190\ndataDir = /tmp/zk\nserver.1 = 127.0.0.1:\\\n  2888:3888\n"), &cfg)
	require.NoError(t, err)
	require.Equal(t, 3000*1e6, float64(cfg.TickTime))
	require.Equal(t, 2190, cfg.Port)
	require.Equal(t, "/tmp/zk", cfg.DataDir)
	require.Equal(t, "127.0.0.1:2888:3888", zc.Servers["server.1"])
}
