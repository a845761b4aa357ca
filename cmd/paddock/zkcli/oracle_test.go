package zkcli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/test/oracle"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// zkCliScript exercises every command whose output does not depend on
// timing; {R} is a root private to the run, {F} a dynamic configuration
// file.
const zkCliScript = `create {R}
create {R}/a hello
create {R}/a x
create -s {R}/s data
create -s {R}/ seqdir
create -e {R}/e
create -c {R}/c
create -t 10000 {R}/t x
create {R}/acl1 d world:anyone:r,ip:10.0.0.0/8:cdrwa
create {R}/acl3 d auth::cdrwa
create -c -s {R}/x
create -e -t 5 {R}/x
create -t 0 {R}/x
create -t abc {R}/x
create R
create {R}/
create {R}//x
create {R}/./x
get {R}/..
get {R}/a/../b
create {R}/e/x
create {R}-nope/x
create {R}/q "two words" world:anyone:cdrwa
get {R}/q
set {R}/q "unterminated
get {R}/q
ls {R}
ls -s {R}
ls -R {R}
ls {R}/missing
ls
get {R}/a
get {R}
get -s {R}/a
get {R}/missing
set {R}/a world
set -s {R}/a world2
set -v 1 {R}/a bad
set {R}/a
stat {R}/a
stat {R}/missing
getAcl {R}/acl1
getAcl -s {R}/acl1
setAcl {R}/a world:anyone:cdrwa
setAcl -s {R}/a world:anyone:cdrwa
setAcl -v 7 {R}/a world:anyone:cdrwa
setAcl -R {R}/a world:anyone:cdrwa
setAcl {R}/acl1 world:anyone:r
whoami
addauth digest u:p
whoami
setAcl {R}/a digest:u:Jq7wMyA/w2Vd5WIDAKdu4OIIFEQ=:cdrwa
getAcl {R}/a
get {R}/a
sync {R}
getEphemerals {R}
getEphemerals {R}/zz
getAllChildrenNumber {R}
getAllChildrenNumber {R}/missing
removewatches {R}
addWatch -m foo {R}
delete {R}
delete {R}/missing
delete -v 5 {R}/a
delete {R}/a
deleteall {R}/missing
deleteall {R}
ls {R}
config
config -c
config -s
config -w
config extra
reconfig
reconfig -add server.5=127.0.0.1:1234:1235;1236
reconfig -remove 3
reconfig -s -v 1f -members server.1=127.0.0.1:1:2;3
reconfig -file {F}
reconfig -file {R}-nonexistent
reconfig -file /a -members x
reconfig -add x -members y
reconfig -v zz -add x
printwatches
printwatches off
printwatches
printwatches on
redo 999
redo 22
history
`

// zkCliQuotaScript exercises the quota commands. They write under
// /zookeeper/quota, which the shared oracle must keep untouched (test/diff
// compares its Stat), so it runs against a ZooKeeper of its own.
const zkCliQuotaScript = `create {R}
create {R}/qa
create {R}/qa/b x
create {R}/qc
setquota -n 5
setquota -n 0 {R}/qa
setquota -b -1 {R}/qa
setquota -N x {R}/qa
setquota -n 5 /zookeeper/quota/x
setquota -n 5 {R}/missing
setquota -n 5 {R}/qa
listquota {R}/qa
setquota -N 1 {R}/qa
listquota {R}/qa
setquota -B 100 {R}/qa
setquota -b 1 {R}/qa
listquota {R}/qa
get /zookeeper/quota{R}/qa/zookeeper_limits
get /zookeeper/quota{R}/qa/zookeeper_stats
setquota -n 3 {R}
setquota -n 3 {R}/qa/b
listquota {R}/qc
listquota {R}/missing
listquota {R}/qa/
listquota
delquota
delquota {R}/qc
delquota -n {R}/qa
listquota {R}/qa
delquota -B {R}/qa
listquota {R}/qa
delquota {R}/qa
listquota {R}/qa
ls /zookeeper/quota{R}
setquota -n 1 /
setquota -n 1 {R}/
setquota -b 2 {R}/qc
listquota {R}/qc
delete {R}/qc
listquota {R}/qc
delquota {R}/qc
ls /zookeeper/quota{R}
deleteall {R}
`

// TestMatchesZkCli runs one script through ZooKeeper's own zkCli and
// through the Shell, both against the oracle (a real ZooKeeper), and
// through the Shell against Paddock, and compares the transcripts: zkCli
// prints "Created" lines and errors on stderr, everything else on stdout.
// Zxids, times and session ids are masked. The quota commands run the same
// way against a ZooKeeper started for them.
func TestMatchesZkCli(t *testing.T) {
	addr := oracle.Addr(t)
	zkCli := os.Getenv("ZKCLI")
	if zkCli == "" {
		zkCli = "/usr/share/zookeeper/bin/zkCli.sh"
	}
	if _, err := os.Stat(zkCli); err != nil {
		t.Skipf("%s not found (apt-get install -y zookeeper, or set ZKCLI): skipping the comparison with zkCli", zkCli)
	}
	// A dynamic configuration file for reconfig -file.
	dynFile := filepath.Join(t.TempDir(), "zoo.cfg.dynamic")
	require.NoError(t, os.WriteFile(dynFile, []byte("server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nserver.2=127.0.0.1:2889:3889;2182\nversion=100000000\n"), 0o600))
	t.Run("shell", func(t *testing.T) {
		matchZkCli(t, zkCli, addr, strings.ReplaceAll(zkCliScript, "{F}", dynFile))
	})
	t.Run("quota", func(t *testing.T) {
		matchZkCli(t, zkCli, privateOracle(t), zkCliQuotaScript)
	})
}

// privateOracle starts a ZooKeeper for the test with test/oracle/zk.sh
// and returns its address.
func privateOracle(t *testing.T) string {
	t.Helper()
	zkSh, err := filepath.Abs("../../../test/oracle/zk.sh")
	require.NoError(t, err)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, zkSh, "start", dir).Output()
	require.NoError(t, err, "zk.sh start")
	t.Cleanup(func() { _ = exec.Command(zkSh, "stop", dir).Run() })
	addr, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "ZK_ORACLE=")
	require.True(t, ok, "zk.sh printed %q", out)
	return addr
}

// matchZkCli runs script ({R} is a root private to the run) through zkCli
// against addr, and through the Shell against addr and against Paddock,
// and compares the transcripts.
func matchZkCli(t *testing.T, zkCli, addr, script string) {
	root := fmt.Sprintf("/zkcli-%d", time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCli, "-server", addr)
	cmd.Stdin = strings.NewReader(strings.ReplaceAll(script, "{R}", root))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	_ = cmd.Run() // its exit status is that of the last command
	header := regexp.MustCompile(`^Connecting to .*\n(Welcome to ZooKeeper!\n)?(JLine support is \w+\n)?\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n`)
	require.Regexp(t, header, stdout.String())
	wantOut := mask(header.ReplaceAllString(stdout.String(), ""), root)
	var errLines []string
	for _, l := range strings.SplitAfter(stderr.String(), "\n") {
		// Logging.
		if !strings.HasPrefix(l, "SLF4J") && !strings.HasPrefix(l, "log4j") && l != "" {
			errLines = append(errLines, l)
		}
	}
	wantErr := mask(strings.Join(errLines, ""), root)

	for name, server := range map[string]string{"zookeeper": addr, "paddock": zktest.Start(t).Addr()} {
		t.Run(name, func(t *testing.T) {
			root := fmt.Sprintf("/zkcli-%d", time.Now().UnixNano())
			var diag bytes.Buffer // what zkCli prints on stderr for a command that succeeds
			sh := New(Config{Version: "x", Stderr: &diag})
			defer sh.Close()
			require.NoError(t, sh.Connect(ctx, server))
			var gotOut, gotErr strings.Builder
			for _, line := range strings.Split(strings.ReplaceAll(script, "{R}", root), "\n") {
				var out bytes.Buffer
				err := sh.Run(ctx, line, &out)
				gotErr.WriteString(diag.String())
				diag.Reset()
				for _, l := range strings.SplitAfter(out.String(), "\n") {
					if strings.HasPrefix(l, "Created ") {
						gotErr.WriteString(l)
					} else {
						gotOut.WriteString(l)
					}
				}
				if err != nil {
					gotErr.WriteString(err.Error() + "\n")
				}
			}
			require.Equal(t, wantOut, mask(gotOut.String(), root))
			require.Equal(t, wantErr, mask(gotErr.String(), root))
		})
	}
}

var (
	maskHex  = regexp.MustCompile(`0x[0-9a-f]+`)
	maskTime = regexp.MustCompile(`(?m)^([cm]time) = .*$`)
)

// mask replaces the run's root by /R and masks zxids, session ids and
// times.
func mask(s, root string) string {
	s = strings.ReplaceAll(s, root, "/R")
	s = maskHex.ReplaceAllString(s, "0x?")
	return maskTime.ReplaceAllString(s, "$1 = ?")
}
