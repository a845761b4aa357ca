package zkcli

import (
	"bytes"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/stretchr/testify/require"
)

func TestSplitLine(t *testing.T) {
	for line, want := range map[string][]string{
		"":                       nil,
		"   ":                    nil,
		"ls /":                   {"ls", "/"},
		"  set\t/a   b  ":        {"set", "/a", "b"},
		`create /a "x y" acl`:    {"create", "/a", "x y", "acl"},
		`create /a 'x "y"' z`:    {"create", "/a", `x "y"`, "z"},
		`set /a ""`:              {"set", "/a", ""},
		`set /a "unterminated`:   {"set", "/a", "unterminated"},
		`set /a 'two words`:      {"set", "/a", "two", "words"},
		`set /a "'x`:             {"set", "/a", "x"},
		`set /a mid"quote z`:     {"set", "/a", `mid"quote`, "z"},
		`set /a "x"y`:            {"set", "/a", "x", "y"},
		"get -s -w /zookeeper/a": {"get", "-s", "-w", "/zookeeper/a"},
	} {
		require.Equal(t, want, SplitLine(line), line)
	}
}

func TestParseOptions(t *testing.T) {
	o, err := parseOptions("sv:R", []string{"-sR", "/a", "-v", "3", "x"})
	require.NoError(t, err)
	require.Equal(t, map[byte]string{'s': "", 'R': "", 'v': "3"}, o.flags)
	require.Equal(t, []string{"/a", "x"}, o.args)

	o, err = parseOptions("sv:", []string{"-v-1", "/a", "--", "-s"})
	require.NoError(t, err)
	require.Equal(t, map[byte]string{'v': "-1"}, o.flags)
	require.Equal(t, []string{"/a", "-s"}, o.args)

	o, err = parseOptions("v:", []string{"-v", "-1", "-"})
	require.NoError(t, err)
	require.Equal(t, "-1", o.flags['v'])
	require.Equal(t, []string{"-"}, o.args)

	_, err = parseOptions("s", []string{"--long"})
	require.EqualError(t, err, "Unrecognized option: --long")
	_, err = parseOptions("s:", []string{"-:"})
	require.EqualError(t, err, "Unrecognized option: -:")
	_, err = parseOptions("sv:", []string{"/a", "-v"})
	require.EqualError(t, err, "Missing argument for option: v")
}

func TestJavaDate(t *testing.T) {
	ms := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC).UnixMilli()
	require.Equal(t, "Sat Nov 21 23:00:00 UTC 2026", javaDate(ms, time.UTC))
	require.Equal(t, "Thu Jan 01 00:00:00 UTC 1970", javaDate(0, time.UTC))
	ny, err := time.LoadLocation("America/New_York")
	if err == nil {
		require.Equal(t, "Sat Nov 21 18:00:00 EST 2026", javaDate(ms, ny))
		require.Equal(t, "Wed Jul 01 08:05:09 EDT 2026", javaDate(time.Date(2026, 7, 1, 12, 5, 9, 0, time.UTC).UnixMilli(), ny))
	}
}

func TestWriteStat(t *testing.T) {
	sh := New(Config{Location: time.UTC})
	ms := time.Date(2026, 11, 21, 23, 0, 0, 0, time.UTC).UnixMilli()
	var b bytes.Buffer
	sh.writeStat(&b, &client.Stat{
		Czxid: 0x1a, Mzxid: 0x2b, Ctime: ms, Mtime: ms + 61_000, Version: 3, Cversion: 4,
		Aversion: 5, EphemeralOwner: -1 << 63, DataLength: 6, NumChildren: 7, Pzxid: 0x100000003,
	})
	require.Equal(t, `cZxid = 0x1a
ctime = Sat Nov 21 23:00:00 UTC 2026
mZxid = 0x2b
mtime = Sat Nov 21 23:01:01 UTC 2026
pZxid = 0x100000003
cversion = 4
dataVersion = 3
aclVersion = 5
ephemeralOwner = 0x8000000000000000
dataLength = 6
numChildren = 7
`, b.String())
}

func TestParseAndWriteACL(t *testing.T) {
	acl, err := ParseACL("world:anyone:cdrwa,digest:user:hash=:cdr,auth::rw,ip:1.2.3.4/24:r,x509:CN=a:b:")
	require.NoError(t, err)
	require.Equal(t, []client.ACL{
		{Perms: client.PermAll, ID: client.Id{Scheme: "world", ID: "anyone"}},
		{Perms: client.PermCreate | client.PermDelete | client.PermRead, ID: client.Id{Scheme: "digest", ID: "user:hash="}},
		{Perms: client.PermRead | client.PermWrite, ID: client.Id{Scheme: "auth", ID: ""}},
		{Perms: client.PermRead, ID: client.Id{Scheme: "ip", ID: "1.2.3.4/24"}},
		{Perms: 0, ID: client.Id{Scheme: "x509", ID: "CN=a:b"}},
	}, acl)
	var b bytes.Buffer
	writeACL(&b, acl)
	require.Equal(t, "'world,'anyone\n: cdrwa\n'digest,'user:hash=\n: cdr\n'auth,'\n: rw\n'ip,'1.2.3.4/24\n: r\n'x509,'CN=a:b\n: \n", b.String())

	for s, msg := range map[string]string{
		"world:anyone":         "world:anyone does not have the form scheme:id:perm",
		"world:anyone:r,oops":  "oops does not have the form scheme:id:perm",
		"":                     " does not have the form scheme:id:perm",
		"world:anyone:rwz":     "Unknown perm type: z",
		"world:anyone:r,ip::R": "Unknown perm type: R",
	} {
		_, err := ParseACL(s)
		require.EqualError(t, err, msg, s)
	}
	require.Equal(t, "'a%2Cb%25%7D%0A%0D%00c", csvString("a,b%}\n\r\x00c"))
}

func TestCLIErrorMessages(t *testing.T) {
	for code, msg := range map[client.Code]string{
		client.ErrNoNode:                  "Node does not exist: /p",
		client.ErrNodeExists:              "Node already exists: /p",
		client.ErrNotEmpty:                "Node not empty: /p",
		client.ErrBadVersion:              "version No is not valid : /p",
		client.ErrNoAuth:                  "Insufficient permission : /p",
		client.ErrInvalidACL:              "Acl is not valid : /p",
		client.ErrBadArguments:            "Arguments are not valid : /p",
		client.ErrNotReadOnly:             "Not a read-only call: /p",
		client.ErrConnectionLoss:          "KeeperErrorCode = ConnectionLoss for /p",
		client.ErrSessionExpired:          "KeeperErrorCode = Session expired for /p",
		client.ErrNoWatcher:               "KeeperErrorCode = No such watcher for /p",
		client.ErrUnimplemented:           "KeeperErrorCode = Unimplemented for /p",
		client.ErrQuotaExceeded:           "Quota has exceeded : /p", // CliWrapperException names it
		client.ErrAuthFailed:              "KeeperErrorCode = AuthFailed for /p",
		client.Code(-999):                 "KeeperErrorCode = Unknown error -999 for /p",
		client.ErrNoChildrenForEphemerals: "Ephemerals cannot have children: /p",
	} {
		err := cliError(code, "/p")
		require.EqualError(t, err, msg)
		require.Equal(t, 1, ExitCode(err))
	}
	require.EqualError(t, cliError(client.ErrConnectionLoss, ""), "KeeperErrorCode = ConnectionLoss")
	require.EqualError(t, cliError(client.ErrClosed, "/p"), "Not connected")
	require.NoError(t, cliError(nil, "/p"))
}
