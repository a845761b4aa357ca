package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/recipes"
	"github.com/paddockzk/paddock/test/zktest"
)

// lockWait bounds every wait in these tests.
const lockWait = 20 * time.Second

// lockBuffer is a bytes.Buffer safe for concurrent writers.
type lockBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// runPaddock runs the paddock command in-process and returns its output
// and exit status.
func runPaddock(ctx context.Context, args ...string) (stdout, stderr *lockBuffer, code int) {
	stdout, stderr = &lockBuffer{}, &lockBuffer{}
	return stdout, stderr, runPaddockWith(ctx, stdout, stderr, args...)
}

func runPaddockWith(ctx context.Context, stdout, stderr *lockBuffer, args ...string) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(strings.NewReader(""))
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		return exitCode(err)
	}
	return 0
}

func lockCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), lockWait)
	t.Cleanup(cancel)
	return ctx
}

func lockConn(t *testing.T, srv *zktest.Server) *client.Conn {
	t.Helper()
	c, err := client.Connect(lockCtx(t), srv.Servers())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pollUntil polls cond until it holds or lockWait passes.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(lockWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}

func TestLockExitCode(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	for _, want := range []int{0, 3, 42} {
		_, stderr, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "/locks/exit", "--", "sh", "-c", fmt.Sprintf("exit %d", want))
		if code != want {
			t.Errorf("exit %d passed through as %d (stderr %q)", want, code, stderr)
		}
	}
	// Killed by a signal: 128+signal, as a shell reports it.
	if _, _, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "/locks/exit", "--", "sh", "-c", "kill -KILL $$"); code != 128+9 {
		t.Errorf("killed command: status %d, want 137", code)
	}
	if _, stderr, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "/locks/exit", "--", "/nonexistent/cmd"); code != exitNoCommand {
		t.Errorf("missing command: status %d (%s)", code, stderr)
	}
	// Flags after PATH belong to the command; "--" is optional then.
	stdout, _, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "--compat", "kazoo", "/locks/exit", "sh", "-c", "echo $PADDOCK_LOCK_TOKEN $PADDOCK_LOCK_NODE")
	fields := strings.Fields(stdout.String())
	if code != 0 || len(fields) != 2 || !strings.Contains(fields[1], "__lock__") {
		t.Fatalf("token and node = %q (status %d)", stdout, code)
	}
	if tok, err := strconv.ParseInt(fields[0], 10, 64); err != nil || tok <= 0 {
		t.Errorf("token %q", fields[0])
	}
	waitEmpty(t, lockConn(t, srv), "/locks/exit")
}

// waitEmpty waits until no lock node is left under dir.
func waitEmpty(t *testing.T, c *client.Conn, dir string) {
	t.Helper()
	pollUntil(t, "no lock node left in "+dir, func() bool {
		kids, _, err := c.Children(context.Background(), dir)
		return errors.Is(err, client.ErrNoNode) || err == nil && len(kids) == 0
	})
}

// Two paddock lock runs on one path never run their commands at the same
// time: each command fails (99) if it finds the other inside.
func TestLockMutualExclusion(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	dir := t.TempDir()
	inside, log := filepath.Join(dir, "inside"), filepath.Join(dir, "log")
	script := fmt.Sprintf("mkdir %s || exit 99; echo in >> %s; sleep 0.2; echo out >> %s; rmdir %s", inside, log, log, inside)
	var wg sync.WaitGroup
	codes := make([]int, 3)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, stderr, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "/locks/mx", "--", "sh", "-c", script)
			codes[i] = code
			if code != 0 {
				t.Logf("run %d: %s", i, stderr)
			}
		}()
	}
	wg.Wait()
	data, _ := os.ReadFile(log)
	if fmt.Sprint(codes) != "[0 0 0]" || strings.Count(string(data), "in\nout\n") != 3 {
		t.Errorf("statuses %v, log:\n%s", codes, data)
	}
}

func TestLockTimeout(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	conn := lockConn(t, srv)
	holder := recipes.NewMutex(conn, "/locks/busy", recipes.WithCompat(recipes.Curator))
	if _, err := holder.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "--compat", "curator", "--timeout", "200ms", "/locks/busy", "--", "true")
	if code != exitLockTimeout || !strings.Contains(stderr.String(), "timed out") {
		t.Errorf("status %d, stderr %q; want %d and a message", code, stderr, exitLockTimeout)
	}
	if err := holder.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	waitEmpty(t, conn, "/locks/busy")
}

// The session expires while the command runs: the command is signalled
// and a message explains why.
func TestLockSessionLost(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	conn := lockConn(t, srv)
	type result struct {
		stderr *lockBuffer
		code   int
	}
	done := make(chan result)
	// The command marks that it runs: the lock node exists before the
	// lock is held (paddock lock still lists the children), and a session
	// expired then fails the acquisition instead (status 1).
	running := filepath.Join(t.TempDir(), "running")
	go func() {
		_, stderr, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "/locks/lost", "--",
			"sh", "-c", "touch '"+running+"' && exec sleep 30")
		done <- result{stderr, code}
	}()
	pollUntil(t, "the command running", func() bool { _, err := os.Stat(running); return err == nil })
	var owner int64
	pollUntil(t, "the lock node", func() bool {
		kids, _, _ := conn.Children(ctx, "/locks/lost")
		if len(kids) == 1 {
			st, ok, _ := conn.Exists(ctx, "/locks/lost/"+kids[0])
			if ok {
				owner = st.EphemeralOwner
			}
		}
		return owner != 0
	})
	if err := srv.ExpireSession(owner); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-done:
		if r.code != 128+15 || !strings.Contains(r.stderr.String(), "lost the lock on /locks/lost") {
			t.Errorf("status %d, stderr %q; want 143 and a message", r.code, r.stderr)
		}
	case <-time.After(lockWait):
		t.Fatal("paddock lock did not end after its session expired")
	}
}

func TestElect(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	type run struct {
		out    *lockBuffer
		cancel context.CancelFunc
		done   chan int
	}
	start := func(value string) run {
		c, cancel := context.WithCancel(ctx)
		r := run{out: &lockBuffer{}, cancel: cancel, done: make(chan int, 1)}
		go func() {
			r.done <- runPaddockWith(c, r.out, &lockBuffer{}, "elect", "--server", srv.Addr(), "/election/cli", value)
		}()
		return r
	}
	a := start("alpha")
	pollUntil(t, "alpha elected", func() bool { return strings.Contains(a.out.String(), "elected: alpha") })
	if out := a.out.String(); !strings.HasPrefix(out, "leader: alpha") {
		t.Fatalf("\"elected\" came before the leader line naming alpha:\n%s", out)
	}
	b := start("beta")
	pollUntil(t, "beta sees alpha", func() bool { return strings.Contains(b.out.String(), "leader: alpha") })
	if strings.Contains(b.out.String(), "elected") {
		t.Fatalf("beta elected while alpha leads:\n%s", b.out)
	}
	a.cancel() // as SIGINT: alpha resigns
	if code := <-a.done; code != 0 {
		t.Errorf("alpha exited %d", code)
	}
	pollUntil(t, "beta elected", func() bool { return strings.Contains(b.out.String(), "elected: beta") })
	out := b.out.String()
	if i := strings.Index(out, "leader: beta"); i < 0 || i > strings.Index(out, "elected: beta") {
		t.Fatalf("\"elected\" came before the leader line naming beta:\n%s", out)
	}
	b.cancel()
	<-b.done
}

// A lost lock's SIGTERM reaches everything the command started (its own
// process group), not only its first process: a script's children would
// otherwise keep working without the lock.
func TestLockSessionLostStopsTheWholeCommand(t *testing.T) {
	srv := zktest.Start(t)
	ctx := lockCtx(t)
	conn := lockConn(t, srv)
	pidFile := filepath.Join(t.TempDir(), "pid")
	done := make(chan int)
	go func() {
		_, _, code := runPaddock(ctx, "lock", "--server", srv.Addr(), "/locks/tree", "--",
			"sh", "-c", "sleep 30 & echo $! > "+pidFile+"; wait")
		done <- code
	}()
	var owner int64
	pollUntil(t, "the lock node and the grandchild", func() bool {
		kids, _, _ := conn.Children(ctx, "/locks/tree")
		if len(kids) == 1 {
			if st, ok, _ := conn.Exists(ctx, "/locks/tree/"+kids[0]); ok {
				owner = st.EphemeralOwner
			}
		}
		b, _ := os.ReadFile(pidFile)
		return owner != 0 && strings.HasSuffix(string(b), "\n")
	})
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.ExpireSession(owner); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(lockWait):
		t.Fatal("paddock lock did not end after its session expired")
	}
	pollUntil(t, "the grandchild gone", func() bool { return processGone(pid) })
}

// processGone reports whether pid has exited: no such process, or a zombie
// its new parent has not reaped yet.
func processGone(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name in parentheses: "pid (comm) S ...".
	rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// An invalid lock or election path is refused before connecting, as
// Curator and kazoo refuse it, rather than normalized into another node's
// path ("locks/x" used to become "/locks/x", "/a/../b" "/b").
func TestLockInvalidPath(t *testing.T) {
	for _, args := range [][]string{
		{"lock", "--server", "127.0.0.1:1", "locks/rel", "--", "true"},
		{"lock", "--server", "127.0.0.1:1", "/a/../b", "--", "true"},
		{"elect", "--server", "127.0.0.1:1", "/locks/", "v"},
	} {
		out, err := runRoot(t, args...)
		if err == nil || !strings.Contains(out, "invalid path") {
			t.Errorf("%v: err %v, output %q", args, err, out)
		}
	}
}
