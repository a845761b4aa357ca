package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// TestCLI drives a built `paddock cli` binary as a script would (one
// command per process, commands on stdin) and as a person would (at a
// terminal, through tmux).
func TestCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "paddock")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))

	t.Run("OneShot", func(t *testing.T) { testCLIOneShot(t, bin) })
	t.Run("Script", func(t *testing.T) { testCLIScript(t, bin) })
	t.Run("Interactive", func(t *testing.T) { testCLIInteractive(t, bin) })
}

// runCLI runs the binary with stdin and returns stdout, stderr and the
// exit status.
func runCLI(t *testing.T, bin, stdin string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"cli"}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return stdout.String(), stderr.String(), code
}

func testCLIOneShot(t *testing.T, bin string) {
	srv := zktest.Start(t)
	s := []string{"--server", srv.Addr()}
	check := func(wantOut, wantErr string, wantCode int, args ...string) {
		t.Helper()
		stdout, stderr, code := runCLI(t, bin, "", append(s, args...)...)
		require.Equal(t, wantOut, stdout, args)
		require.Equal(t, wantErr, stderr, args)
		require.Equal(t, wantCode, code, args)
	}
	check("Created /a\n", "", 0, "create", "/a", "hello")
	check("hello\n", "", 0, "get", "/a")
	check("", "", 0, "set", "/a", "two words") // not split again
	check("two words\n", "", 0, "get", "/a")
	check("[a, zookeeper]\n", "", 0, "ls", "/")
	check("", "Node does not exist: /missing\n", 1, "get", "/missing")
	check("", "Node already exists: /a\n", 1, "create", "/a")
	check("", "get [-s] [-w] path\n", 1, "get")
	check("", "Command index out of range\n", 1, "redo", "0") // nothing before it
	// What zkCli prints on stderr for a command that succeeds goes there too.
	check("", "", 0, "setquota", "-n", "5", "/a")
	check("Output quota for /a count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=-1\nOutput stat for /a count=1,bytes=9\n",
		"absolute path is /zookeeper/quota/a/zookeeper_limits\n", 0, "listquota", "/a")
	check("", "absolute path is /zookeeper/quota/missing/zookeeper_limits\nquota for /missing does not exist.\n", 1, "listquota", "/missing")
	check("", "", 0, "delquota", "/a")

	stdout, _, code := runCLI(t, bin, "", append(s, "get", "-s", "/a")...)
	require.Equal(t, 0, code)
	require.Regexp(t, `^two words\ncZxid = 0x[0-9a-f]+\nctime = \w{3} \w{3} \d\d \d\d:\d\d:\d\d \S+ \d{4}\n`, stdout)
	require.Contains(t, stdout, "\ndataVersion = 1\naclVersion = 0\nephemeralOwner = 0x0\ndataLength = 9\nnumChildren = 0\n")

	stdout, stderr, code := runCLI(t, bin, "", append(s, "frobnicate")...)
	require.Equal(t, 127, code)
	require.Empty(t, stdout)
	require.True(t, strings.HasSuffix(stderr, "\twhoami \nCommand not found: frobnicate\n"), stderr)

	stdout, stderr, code = runCLI(t, bin, "", "--server", "127.0.0.1:1", "--timeout", "300ms", "ls", "/")
	require.Equal(t, 1, code)
	require.Empty(t, stdout)
	require.Equal(t, "Unable to connect to 127.0.0.1:1: no server answered within 300ms\n", stderr)

	_, stderr, code = runCLI(t, bin, "", "--bogus")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "unknown flag: --bogus")
}

func testCLIScript(t *testing.T, bin string) {
	srv := zktest.Start(t)
	script := `create /s one
create /s/child "with spaces"

ls /s
get /missing
get -w /s
set /s two
get /s
getAcl /s
history
quit
create /after-quit
`
	stdout, stderr, code := runCLI(t, bin, script, "--server", srv.Addr())
	require.Equal(t, 1, code, "a command failed: the exit status says so")
	require.Equal(t, "Node does not exist: /missing\n", stderr)
	// The watch event arrives while the next commands run: take it out
	// before comparing the rest.
	ev := "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/s\n"
	require.Equal(t, 1, strings.Count(stdout, ev), stdout)
	require.Equal(t, `Created /s
Created /s/child
[child]
one
two
'world,'anyone
: cdrwa
0 - create /s one
1 - create /s/child "with spaces"
2 - ls /s
3 - get /missing
4 - get -w /s
5 - set /s two
6 - get /s
7 - getAcl /s
8 - history
`, strings.Replace(stdout, ev, "", 1))

	// All commands succeed: exit status 0; a pipe works as a file does.
	stdout, stderr, code = runCLI(t, bin, "get /s/child\ndelete /s/child\nls /s\n", "--server", srv.Addr())
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "with spaces\n[]\n", stdout)
	require.Empty(t, stderr)

	// An unknown command: 127, the status zkCli uses.
	_, _, code = runCLI(t, bin, "ls /\nfrobnicate\n", "--server", srv.Addr())
	require.Equal(t, 127, code)
}

// tmuxSession is a terminal, run by a private tmux server, showing the
// binary's interactive shell.
type tmuxSession struct {
	t    *testing.T
	tmux string
	sock string
	conf string
}

func (s *tmuxSession) cmd(args ...string) string {
	s.t.Helper()
	out, err := exec.Command(s.tmux, append([]string{"-S", s.sock, "-f", s.conf}, args...)...).CombinedOutput()
	require.NoError(s.t, err, "tmux %v: %s", args, out)
	return string(out)
}

// keys types keys (tmux key names: Tab, Up, Enter...).
func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.cmd(append([]string{"send-keys", "-t", "cli"}, keys...)...)
}

// screen returns the terminal's scrollback and screen, without trailing
// spaces and blank lines.
func (s *tmuxSession) screen() string {
	s.t.Helper()
	lines := strings.Split(s.cmd("capture-pane", "-p", "-J", "-t", "cli", "-S", "-"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.TrimRight(strings.Join(lines, "\n"), "\n")
}

// waitFor polls the screen until it matches re.
func (s *tmuxSession) waitFor(re string) {
	s.t.Helper()
	rx := regexp.MustCompile(re)
	var last string
	require.Eventually(s.t, func() bool {
		last = s.screen()
		return rx.MatchString(last)
	}, 20*time.Second, 20*time.Millisecond, "screen never matched %q; screen:\n%s", re, lazy(func() string { return last }))
}

// lazy formats as what its function returns when printed.
type lazy func() string

func (l lazy) String() string { return l() }

func testCLIInteractive(t *testing.T, bin string) {
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install -y tmux): skipping the terminal test of paddock cli")
	}
	srv := zktest.Start(t)
	dir := t.TempDir()
	s := &tmuxSession{t: t, tmux: tmux, sock: filepath.Join(dir, "tmux.sock"), conf: filepath.Join(dir, "tmux.conf")}
	require.NoError(t, os.WriteFile(s.conf, []byte("set -g history-limit 10000\n"), 0o644))
	hist := filepath.Join(dir, "history")
	s.cmd("new-session", "-d", "-s", "cli", "-x", "160", "-y", "50",
		bin+" cli --server "+srv.Addr()+" --history-file "+hist+`; echo "[exited with status $?]"; exec cat`)
	t.Cleanup(func() { _ = exec.Command(tmux, "-S", s.sock, "kill-server").Run() })

	other, err := client.Connect(context.Background(), srv.Servers())
	require.NoError(t, err)
	defer other.Close()

	p := regexp.QuoteMeta("[zk: " + srv.Addr() + "(CONNECTED) ")
	s.waitFor(`(?s)^Connecting to .*\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n` + p + `0\]$`)

	// Tab completes a command name, with the space after it...
	s.keys("cre", "Tab")
	s.waitFor(p + `0\] create$`)
	s.keys("/alpha hello", "Enter")
	s.waitFor(p + `0\] create /alpha hello\nCreated /alpha\n` + p + `1\]$`)

	// ... and a path.
	s.keys("get /al", "Tab")
	s.waitFor(p + `1\] get /alpha$`)
	s.keys("Enter")
	s.waitFor(p + `1\] get /alpha\nhello\n` + p + `2\]$`)

	// Up recalls the previous line.
	s.keys("Up")
	s.waitFor(p + `2\] get /alpha$`)
	s.keys("Enter")
	s.waitFor(p + `2\] get /alpha\nhello\n` + p + `3\]$`)

	// A watch event is printed when it arrives, and the prompt (with
	// what is being typed) is drawn again below it.
	s.keys("get -w /alpha", "Enter")
	s.waitFor(p + `3\] get -w /alpha\nhello\n` + p + `4\]$`)
	s.keys("ls")
	s.waitFor(p + `4\] ls$`)
	_, err = other.Set(context.Background(), "/alpha", []byte("changed"), -1)
	require.NoError(t, err)
	s.waitFor(`\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/alpha\n` + p + `4\] ls$`)
	s.keys(" /", "Enter")
	s.waitFor(p + `4\] ls /\n\[alpha, zookeeper\]\n` + p + `5\]$`)

	// Errors, history.
	s.keys("get /missing", "Enter")
	s.waitFor(p + `5\] get /missing\nNode does not exist: /missing\n` + p + `6\]$`)
	s.keys("history", "Enter")
	s.waitFor(p + `6\] history\n0 - create /alpha hello\n1 - get /alpha\n2 - get /alpha\n3 - get -w /alpha\n` +
		`4 - ls /\n5 - get /missing\n6 - history\n` + p + `7\]$`)

	// quit: the shell exits with status 0 (cat then keeps the pane).
	s.keys("quit", "Enter")
	s.waitFor(p + `7\] quit\n\[exited with status 0\]`)

	saved, err := os.ReadFile(hist)
	require.NoError(t, err)
	require.Equal(t, "create /alpha hello\nget /alpha\nget -w /alpha\nls /\nget /missing\nhistory\nquit\n", string(saved))
}

// TestCLIZkCliFlags: zkCli.sh's single-dash flags (-server HOST:PORT,
// -timeout MS, -r) used to fail with "unknown shorthand flag"; a zkCli
// command line works as it is.
func TestCLIZkCliFlags(t *testing.T) {
	require.Equal(t, []string{"--server", "h:1", "--timeout", "5000ms", "-r", "get", "-s", "/a"},
		zkCliFlags([]string{"-server", "h:1", "-timeout", "5000", "-r", "get", "-s", "/a"}))
	require.Equal(t, []string{"--server", "h:1", "--timeout", "2s", "ls", "-server"},
		zkCliFlags([]string{"-server=h:1", "--timeout", "2s", "ls", "-server"}), "the command's own arguments stay")
	require.Equal(t, []string{"--history-file", "h", "--timeout", "300ms", "ls"},
		zkCliFlags([]string{"--history-file", "h", "--timeout=300", "ls"}))

	srv := zktest.Start(t)
	out, err := runRoot(t, "cli", "-server", srv.Addr(), "-timeout", "5000", "-r", "ls", "/")
	require.NoError(t, err)
	require.Equal(t, "[zookeeper]\n", out)
	out, err = runRoot(t, "cli", "--server", srv.Addr(), "create", "/a", "x")
	require.NoError(t, err)
	require.Equal(t, "Created /a\n", out)

	out, err = runRoot(t, "cli", "-h")
	require.NoError(t, err)
	require.Contains(t, out, "zkCli.sh's flags")
	_, err = runRoot(t, "cli", "--bogus")
	require.ErrorContains(t, err, "unknown flag: --bogus")
}
