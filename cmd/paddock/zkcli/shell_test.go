package zkcli

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

func TestLsGetSetCreate(t *testing.T) {
	f := newFixture(t)
	f.expect("ls /", "[zookeeper]\n")
	f.expect("create /a hello", "Created /a\n")
	f.expect("create /b", "Created /b\n")
	f.expect(`create /c ""`, "Created /c\n")
	f.expect(`create /d "a b  c"`, "Created /d\n")
	f.expect("create /a/x 'single quoted'", "Created /a/x\n")
	f.expect("ls /", "[a, b, c, d, zookeeper]\n")
	f.expect("get /a", "hello\n")
	f.expect("get /b", "null\n") // created without data
	f.expect("get /c", "\n")
	f.expect("get /d", "a b  c\n")
	f.expect("get /a/x", "single quoted\n")
	f.expect("get -s /a", "hello\n"+f.statText("/a"))
	f.expect("set /a world", "")
	f.expect("get /a", "world\n")
	out := f.ok("set -s /a again")
	require.Equal(t, f.statText("/a"), out)
	f.expect("set -v 2 /a v3", "")
	f.expect("set /a -- -dash", "")
	f.expect("get /a", "-dash\n")
	f.expect("ls -s /a", "[x]\n"+f.statText("/a"))
	f.expect("stat /a", f.statText("/a"))
	f.expect("ls /zookeeper", "[config, quota]\n")
}

func TestErrors(t *testing.T) {
	f := newFixture(t)
	f.ok("create /a")
	f.ok("create /a/b")
	f.ok("create -e /e")
	f.fail("get /missing", "Node does not exist: /missing")
	f.fail("ls /missing", "Node does not exist: /missing")
	f.fail("stat /missing", "Node does not exist: /missing")
	f.fail("set /missing x", "Node does not exist: /missing")
	f.fail("getAcl /missing", "Node does not exist: /missing")
	f.fail("getAllChildrenNumber /missing", "Node does not exist: /missing")
	f.fail("create /nope/x", "Node does not exist: /nope/x")
	f.fail("create /a", "Node already exists: /a")
	f.fail("delete /a", "Node not empty: /a")
	f.fail("delete /missing", "Node does not exist: /missing")
	f.fail("delete -v 5 /a/b", "version No is not valid : /a/b")
	f.fail("set -v 7 /a x", "version No is not valid : /a")
	f.fail("create /e/x", "Ephemerals cannot have children: /e/x")
	f.fail("removewatches /a", "KeeperErrorCode = No such watcher for /a")

	// Permissions.
	f.ok("create /ro data world:anyone:r")
	f.fail("set /ro x", "Insufficient permission : /ro")
	f.fail("create /ro/x", "Insufficient permission : /ro/x")
	f.fail("setAcl /a auth::cdrwa", "Acl is not valid : /a")
	f.fail("create /x d auth::cdrwa", "KeeperErrorCode = InvalidACL for /x\nAcl is not valid : /x")

	// Paths, checked before anything is sent.
	f.fail("get a", "Path must start with / character")
	f.fail("get /a/", "Path must not end with / character")
	f.fail(`get ""`, "Path length must be > 0")
	f.fail("get /a//b", `Invalid path string "/a//b" caused by empty node name specified @3`)
	f.fail("create /a/../b", `Invalid path string "/a/../b" caused by relative paths not allowed @4`)
	f.fail("create /a/./b", `Invalid path string "/a/./b" caused by relative paths not allowed @3`)
	f.fail("get /a/..", `Invalid path string "/a/.." caused by relative paths not allowed @4`)
	f.fail("get /.", `Invalid path string "/." caused by relative paths not allowed @1`)
	f.fail("get /a/...", "Node does not exist: /a/...")

	// Usage and options.
	f.fail("get", "get [-s] [-w] path")
	f.fail("set /a", "set [-s] [-v version] path data")
	f.fail("create", "create [-s] [-e] [-c] [-t ttl] path [data] [acl]")
	f.fail("setAcl /a", "setAcl [-s] [-v version] [-R] path acl")
	f.fail("ls -x /", "Unrecognized option: -x")
	f.fail("ls -sx /", "Unrecognized option: -sx") // the whole token, as commons-cli 1.5 (zkCli 3.8.0)
	f.fail("delete -v", "Missing argument for option: v")
	f.fail("delete -v abc /a", "-v argument must be an int value")
	f.fail("addWatch -m ONCE /a", commands["addWatch"].usage)

	out, err := f.run("frobnicate /a")
	require.Empty(t, out)
	require.Equal(t, 127, ExitCode(err))
	require.True(t, strings.HasSuffix(err.Error(), "\tget [-s] [-w] path\n"+
		"\tgetAcl [-s] path\n\tgetAllChildrenNumber path\n\tgetEphemerals path\n\thelp \n\thistory \n"+
		"\tlistquota path\n\tls [-s] [-w] [-R] path\n\tprintwatches on|off\n\tquit \n\t"+reconfigUsage+"\n\tredo cmdno\n"+
		"\tremovewatches path [-c|-d|-a] [-l]\n\tset [-s] [-v version] path data\n"+
		"\tsetAcl [-s] [-v version] [-R] path acl\n\t"+setQuotaUsage+"\n\tstat [-w] path\n\tsync path\n\tversion \n"+
		"\twhoami \nCommand not found: frobnicate"), err.Error())
	require.True(t, strings.HasPrefix(err.Error(), "paddock cli --server host:port cmd args\n\taddWatch [-m mode] path"))
	require.Equal(t, Usage(), f.ok("help"))
}

func TestCreateModes(t *testing.T) {
	f := newFixture(t)
	f.ok("create /q")
	f.expect("create -s /q/job- a", "Created /q/job-0000000000\n")
	f.expect("create -s /q/job- b", "Created /q/job-0000000001\n")
	f.expect("create -s /q/", "Created /q/0000000002\n")
	f.expect("create -e /q/eph", "Created /q/eph\n")
	f.expect("create -e -s /q/es", "Created /q/es0000000004\n")
	f.expect("create -es /q/es", "Created /q/es0000000005\n")
	f.expect("create -c /box", "Created /box\n")
	f.expect("create -t 60000 /ttl x", "Created /ttl\n")
	f.expect("create -s -t 60000 /q/t", "Created /q/t0000000006\n")
	f.expect("get /q/job-0000000000", "a\n")

	sid := f.sh.sess.conn.SessionID()
	require.Contains(t, f.ok("stat /q/eph"), fmt.Sprintf("ephemeralOwner = 0x%x\n", sid))
	f.expect("stat /q/eph", f.statText("/q/eph"))
	f.expect("getEphemerals", "[/q/eph, /q/es0000000004, /q/es0000000005]\n")
	f.expect("getEphemerals /q/e", "[/q/eph, /q/es0000000004, /q/es0000000005]\n")
	f.expect("getEphemerals /q/eph", "[/q/eph]\n")
	f.expect("getEphemerals /box", "[]\n")

	f.fail("create -c -s /x", "-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	f.fail("create -c -e /x", "-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	f.fail("create -e -t 5000 /x", "TTLs cannot be used with Ephemeral znodes")
	f.fail("create -c -t 5000 /x", "TTLs cannot be used with Container znodes")
	f.fail("create -t abc /x", "-t argument must be a long value")
	f.fail("create -t 0 /x", "ttl must be positive and cannot be larger than: 1099511627775")
	f.fail("create -t 1099511627776 /x", "ttl must be positive and cannot be larger than: 1099511627775")
}

func TestDeleteAndDeleteAll(t *testing.T) {
	f := newFixture(t)
	f.ok("create /a x")
	f.expect("delete -v 0 /a", "")
	f.fail("get /a", "Node does not exist: /a")
	for _, p := range []string{"/t", "/t/a", "/t/b", "/t/a/x", "/t/a/y", "/t/b/z", "/t/b/z/deep"} {
		f.ok("create " + p)
	}
	f.expect("getAllChildrenNumber /t", "6\n")
	f.expect("deleteall /t -b 2", "")
	f.expect("ls /", "[zookeeper]\n")
	f.fail("deleteall /t", "Node does not exist: /t")
	f.ok("create /u")
	f.ok("create /u/v")
	f.expect("deleteall /u", "")
	f.expect("ls /", "[zookeeper]\n")
}

func TestLsRecursive(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/t", "/t/b", "/t/a", "/t/a/y", "/t/a/x", "/t/b/z", "/t/a/x/deep"} {
		f.ok("create " + p)
	}
	// zkCli's visitSubTreeDFS order: a node's children, then their subtrees.
	f.expect("ls -R /t", "/t\n/t/a\n/t/b\n/t/a/x\n/t/a/y\n/t/a/x/deep\n/t/b/z\n")
	f.expect("ls -R /t/b/z", "/t/b/z\n")
	f.expect("ls -R /", "/\n/t\n/zookeeper\n/t/a\n/t/b\n/t/a/x\n/t/a/y\n/t/a/x/deep\n/t/b/z\n/zookeeper/config\n/zookeeper/quota\n")
	f.fail("ls -R /missing", "Node does not exist: /missing")
	f.expect("ls -Rw /t/b", "/t/b\n/t/b/z\n")
	f.create("/t/b/z/new", "")
	f.waitEvents(event("NodeChildrenChanged", "/t/b/z"))
}

func TestACLs(t *testing.T) {
	f := newFixture(t)
	f.ok("create /a")
	f.expect("getAcl /a", "'world,'anyone\n: cdrwa\n")
	f.expect("setAcl /a world:anyone:cdra", "")
	f.expect("getAcl /a", "'world,'anyone\n: cdra\n")
	f.expect("getAcl -s /a", "'world,'anyone\n: cdra\n"+f.statText("/a"))
	out := f.ok("setAcl -s /a world:anyone:rwcda")
	require.Equal(t, f.statText("/a"), out)
	f.fail("setAcl -v 0 /a world:anyone:r", "version No is not valid : /a")
	f.expect("setAcl -v 2 /a ip:10.0.0.0/8:r,ip:127.0.0.1:cdrwa,world:anyone:r", "")
	f.expect("getAcl /a", "'ip,'10.0.0.0/8\n: r\n'ip,'127.0.0.1\n: cdrwa\n'world,'anyone\n: r\n")

	// digest: the id is user:base64(sha1(user:password)).
	digest := client.DigestACL(client.PermAll, "bob", "secret")[0].ID.ID
	f.ok("create /d")
	f.expect("setAcl /d digest:"+digest+":cdrwa", "")
	f.fail("getAcl /d", "Insufficient permission : /d")
	f.fail("get /d", "Insufficient permission : /d")
	f.expect("whoami", "Auth scheme: User\nip: 127.0.0.1\n")
	f.expect("addauth digest bob:secret", "")
	f.expect("get /d", "null\n")
	f.expect("getAcl /d", "'digest,'"+digest+"\n: cdrwa\n")
	f.expect("whoami", "Auth scheme: User\nip: 127.0.0.1\ndigest: bob\n")

	// auth:: means every identity of the session.
	f.ok("create /mine")
	f.expect("setAcl /mine auth::cdr", "")
	// (ZooKeeper 3.8 stores a setAcl auth:: entry with the id "bob:x";
	// Paddock does the same.)
	require.Regexp(t, "^'digest,'bob:.*\n: cdr\n$", f.ok("getAcl /mine"))
	f.ok("create /mine2 data auth::cdrwa")
	f.expect("getAcl /mine2", "'digest,'"+digest+"\n: cdrwa\n")

	// -R: the whole subtree.
	for _, p := range []string{"/r", "/r/x", "/r/x/y"} {
		f.ok("create " + p)
	}
	f.expect("setAcl -R /r world:anyone:r", "")
	for _, p := range []string{"/r", "/r/x", "/r/x/y"} {
		f.expect("getAcl "+p, "'world,'anyone\n: r\n")
	}
	f.fail("setAcl -R /missing world:anyone:r", "Node does not exist: /missing")

	// Malformed ACLs are errors (zkCli skips the entry with a warning).
	f.fail("setAcl /a world:anyone", "world:anyone does not have the form scheme:id:perm")
	f.fail("setAcl /a foo", "foo does not have the form scheme:id:perm")
	f.fail("setAcl /a world:anyone:rx", "Unknown perm type: x")
	f.fail("create /z d world:anyone:q", "Unknown perm type: q")
}

func TestSyncAndCounts(t *testing.T) {
	f := newFixture(t)
	f.ok("create /a")
	f.ok("create /a/b")
	f.expect("sync /a", "Sync is OK\n")
	f.expect("sync /", "Sync is OK\n")
	f.expect("getAllChildrenNumber /a", "1\n")
	f.expect("getAllChildrenNumber /a/b", "0\n")
	f.expect("version", "ZooKeeper CLI version: paddock test\n")
}

func TestOneShotWatches(t *testing.T) {
	f := newFixture(t)
	f.ok("create /a x")
	f.expect("get -w /a", "x\n")
	f.set("/a", "y")
	f.waitEvents(event("NodeDataChanged", "/a"))

	f.expect("ls -w /a", "[]\n")
	f.create("/a/c", "")
	f.waitEvents(event("NodeChildrenChanged", "/a"))

	f.fail("stat -w /b", "Node does not exist: /b")
	f.create("/b", "")
	f.waitEvents(event("NodeCreated", "/b"))

	f.expect("stat -w /b", f.statText("/b"))
	f.expect("get -s -w /b", "\n"+f.statText("/b"))
	f.ok("ls -w /b")
	f.ok("ls -w /b")
	require.NoError(t, f.other.Delete(context.Background(), "/b", -1))
	f.waitEvents(event("NodeDeleted", "/b"))

	// Removing watches reports them, as zkCli's watcher sees it.
	f.ok("get -w /a")
	f.ok("ls -w /a")
	f.expect("removewatches /a -d", "")
	f.waitEvents(event("DataWatchRemoved", "/a"))
	f.expect("removewatches /a", "")
	f.waitEvents(event("ChildWatchRemoved", "/a"))
	f.fail("removewatches /a", "KeeperErrorCode = No such watcher for /a")

	// Every event once, as zkCli's single watcher prints it.
	all := f.closedEvents()
	for typ, path := range map[string]string{"NodeDataChanged": "/a", "NodeChildrenChanged": "/a", "NodeCreated": "/b",
		"NodeDeleted": "/b", "DataWatchRemoved": "/a", "ChildWatchRemoved": "/a"} {
		require.Equal(t, 1, strings.Count(all, event(typ, path)), "%s %s in:\n%s", typ, path, all)
	}
	require.Equal(t, 6, strings.Count(all, "WATCHER::"), all)
}

func TestPersistentWatches(t *testing.T) {
	f := newFixture(t)
	f.ok("create /p")
	f.expect("addWatch /p", "") // PERSISTENT_RECURSIVE by default
	f.create("/p/x", "1")
	f.set("/p/x", "2")
	f.set("/p", "3")
	f.waitEvents(event("NodeCreated", "/p/x"), event("NodeDataChanged", "/p/x"), event("NodeDataChanged", "/p"))
	require.NotContains(t, f.events.String(), "NodeChildrenChanged")

	// A one-shot watch on a path the persistent watch covers does not
	// print the event twice.
	f.ok("get -w /p/x")
	f.set("/p/x", "4")
	f.waitCount(event("NodeDataChanged", "/p/x"), 2)

	f.ok("create /n")
	f.expect("addWatch -m PERSISTENT /n", "")
	f.expect("addWatch -m PERSISTENT /n", "") // again: replaces it silently
	f.create("/n/c", "")
	f.set("/n", "x")
	f.waitEvents(event("NodeChildrenChanged", "/n"), event("NodeDataChanged", "/n"))
	f.expect("addWatch -m PERSISTENT_RECURSIVE /missing", "")

	f.expect("removewatches /n", "")
	f.waitEvents(event("PersistentWatchRemoved", "/n"))
	f.set("/n", "y") // not printed any more
	f.expect("removewatches /p", "")
	f.waitEvents(event("PersistentWatchRemoved", "/p"))

	all := f.closedEvents()
	require.Equal(t, 1, strings.Count(all, event("NodeDataChanged", "/n")), all)
	require.Equal(t, 1, strings.Count(all, event("NodeChildrenChanged", "/n")), all)
	require.Equal(t, 2, strings.Count(all, event("NodeDataChanged", "/p/x")), all)
	require.Equal(t, 1, strings.Count(all, event("PersistentWatchRemoved", "/n")), all)
}

func TestPrintWatches(t *testing.T) {
	f := newFixture(t)
	f.ok("create /a")
	f.expect("printwatches", "printwatches is on\n")
	f.expect("printwatches off", "")
	f.expect("printwatches", "printwatches is off\n")
	f.ok("get -w /a")
	f.set("/a", "x")
	// A client sees the watch event before it sees the new data, so once
	// get returns x the event has been delivered; Close waits until it
	// has been handled.
	f.expect("get /a", "x\n")
	require.NotContains(t, f.closedEvents(), "WATCHER::")
	f.expect("connect", "")
	f.expect("printwatches on", "")
	f.ok("get -w /a")
	f.set("/a", "y")
	f.waitEvents(event("NodeDataChanged", "/a"))
	require.Equal(t, 1, strings.Count(f.closedEvents(), "WATCHER::"))
}

func TestHistoryRedoPrompt(t *testing.T) {
	f := newFixture(t)
	addr := f.srv.Addr()
	require.Equal(t, "[zk: "+addr+"(CONNECTED) 0] ", f.sh.Prompt())
	f.ok("create /a one")
	f.ok("")    // blank lines do not count
	f.ok("   ") // nor do lines of spaces
	require.Equal(t, "[zk: "+addr+"(CONNECTED) 1] ", f.sh.Prompt())
	f.ok("get /a")
	f.run("get /missing") // failures count
	f.run("nosuchcommand")
	f.expect("history", "0 - create /a one\n1 - get /a\n2 - get /missing\n3 - nosuchcommand\n4 - history\n")
	f.expect("redo 1", "one\n") // 5: becomes "get /a"
	f.fail("redo 6", "Command index out of range")
	f.fail("redo 99", "Command index out of range")
	f.fail("redo -1", "Command index out of range")
	f.fail("redo 6", "No redoing redos") // 6 is "redo 6"
	f.expect("redo 5", "one\n")
	f.expect("history", "1 - get /a\n2 - get /missing\n3 - nosuchcommand\n4 - history\n"+
		"5 - get /a\n6 - redo 6\n7 - redo 99\n8 - redo -1\n9 - redo 6\n10 - get /a\n11 - history\n")
	for i := 0; i < 12; i++ {
		f.ok("ls /")
	}
	require.Equal(t, "[zk: "+addr+"(CONNECTED) 24] ", f.sh.Prompt())
	want := ""
	for i := 14; i < 24; i++ {
		want += fmt.Sprintf("%d - ls /\n", i)
	}
	f.expect("history", want+"24 - history\n")

	_, err := f.run("quit")
	require.ErrorIs(t, err, ErrQuit)
	require.Equal(t, 0, ExitCode(err))
}

func TestConnectClose(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.StateEvents = true })
	addr := f.srv.Addr()
	f.waitEvents("\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n")
	f.ok("create /on-first x")
	f.expect("close", "")
	f.waitEvents("WatchedEvent state:Closed type:None path:null\n")
	require.Equal(t, "[zk: "+addr+"(CLOSED) 2] ", f.sh.Prompt())
	f.fail("ls /", "Not connected")
	f.expect("close", "")
	f.expect("connect", "") // the same server again
	require.Equal(t, "[zk: "+addr+"(CONNECTED) 5] ", f.sh.Prompt())
	f.expect("get /on-first", "x\n")

	second := zktest.Start(t)
	f.expect("connect "+second.Addr(), "")
	require.Equal(t, "[zk: "+second.Addr()+"(CONNECTED) 7] ", f.sh.Prompt())
	f.expect("ls /", "[zookeeper]\n")
	f.expect("create /app x", "Created /app\n")
	f.expect("create /app/in-chroot y", "Created /app/in-chroot\n")

	// host:port/chroot, as ZooKeeper connect strings.
	f.expect("connect "+second.Addr()+"/app", "")
	f.expect("ls /", "[in-chroot]\n")
	f.expect("get /in-chroot", "y\n")
	f.expect("create -e /eph", "Created /eph\n")
	f.expect("getEphemerals", "[/eph]\n")
}

func TestConnectFailure(t *testing.T) {
	sh := New(Config{Timeout: 300 * time.Millisecond})
	defer sh.Close()
	err := sh.Connect(context.Background(), "127.0.0.1:1")
	require.Error(t, err)
	require.Equal(t, "Unable to connect to 127.0.0.1:1: no server answered within 300ms", err.Error())
	require.Equal(t, 1, ExitCode(err))
	require.Equal(t, "[zk: 127.0.0.1:1(NOT_CONNECTED) 0] ", sh.Prompt())
	var out bytes.Buffer
	require.EqualError(t, sh.Run(context.Background(), "ls /", &out), "Not connected")
	require.Equal(t, "[zk: (NOT_CONNECTED) 0] ", New(Config{}).Prompt())
}

func TestSessionExpiry(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.StateEvents = true })
	f.ok("create -e /e")
	// A lost connection: the client reconnects to the same session.
	f.srv.DropConnections()
	f.waitEvents("WatchedEvent state:Disconnected type:None path:null\n")
	f.waitCount("WatchedEvent state:SyncConnected type:None path:null\n", 2)
	f.expect("getEphemerals", "[/e]\n")
	require.NoError(t, f.srv.ExpireSession(f.sh.sess.conn.SessionID()))
	f.waitEvents("WatchedEvent state:Expired type:None path:null\n")
	require.Eventually(t, func() bool {
		return strings.Contains(f.sh.Prompt(), "(CLOSED)")
	}, 10*time.Second, 10*time.Millisecond)
	f.fail("ls /", "Not connected")
	f.expect("connect", "")
	f.expect("ls /", "[zookeeper]\n")
}

func TestComplete(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/alpha", "/alpha/one", "/alpha/two", "/beta"} {
		f.ok("create " + p)
	}
	ctx := context.Background()
	check := func(line string, wantN int, want ...string) {
		t.Helper()
		got, n := f.sh.Complete(ctx, line)
		require.Equal(t, want, got, line)
		require.Equal(t, wantN, n, line)
	}
	check("ge", 2, "get ", "getAcl ", "getAllChildrenNumber ", "getEphemerals ")
	check("  cre", 3, "create ")
	var all []string
	for _, n := range CommandNames() {
		all = append(all, n+" ")
	}
	check("", 0, all...)
	check("xyz", 3)
	check("get /al", 3, "/alpha")
	check("get -s /", 1, "/alpha", "/beta", "/zookeeper")
	check("ls /alpha/", 7, "/alpha/one", "/alpha/two")
	check("ls /alpha/t", 8, "/alpha/two")
	check("ls /zoo", 4, "/zookeeper")
	check("ls /missing/", 0)
	check("get notapath", 0)
}

func TestChildrenWatchOnDeletedNode(t *testing.T) {
	// ls -w and get -w on one node, then delete: zkCli prints one
	// NodeDeleted (one watcher, two watches).
	f := newFixture(t)
	f.ok("create /a")
	f.ok("ls -w /a")
	f.ok("get -w /a")
	f.ok("get -w /a")
	require.NoError(t, f.other.Delete(context.Background(), "/a", -1))
	f.waitEvents(event("NodeDeleted", "/a"))
	require.Equal(t, 1, strings.Count(f.closedEvents(), "WATCHER::"))
}
