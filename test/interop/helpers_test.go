package interop_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/oracle"
	"github.com/paddockzk/paddock/test/zktest"
)

const waitTimeout = 30 * time.Second

var (
	pythonOnce sync.Once
	python     string
	kazooVer   string
)

// kazooPython returns a python3 that can import kazoo ($PYTHON, python3
// on PATH, or Debian's /usr/bin/python3, which alone sees python3-kazoo
// when PATH has a pyenv or venv python), or skips the test.
func kazooPython(t *testing.T) string {
	pythonOnce.Do(func() {
		for _, p := range []string{os.Getenv("PYTHON"), "python3", "/usr/bin/python3"} {
			if p == "" {
				continue
			}
			out, err := exec.Command(p, "-c", "import kazoo.version; print(kazoo.version.__version__)").Output()
			if err == nil {
				python, kazooVer = p, strings.TrimSpace(string(out))
				return
			}
		}
	})
	if python == "" {
		t.Skip("no python3 with kazoo (apt-get install -y python3-kazoo, or pip install kazoo; or set PYTHON): kazoo interoperability not tested")
	}
	return python
}

// target is the server and the root path a test works under.
type target struct {
	t     *testing.T
	hosts string
	root  string
	admin *client.Conn
	zk    *zktest.Server // nil for Apache ZooKeeper
}

func newTarget(t *testing.T) *target {
	kazooPython(t)
	return targetOn(t, os.Getenv(oracle.Env))
}

// targetOn returns a target on Apache ZooKeeper at oracleAddr, or on a
// fresh in-process Paddock server (started with opts) if oracleAddr is
// empty.
func targetOn(t *testing.T, oracleAddr string, opts ...zktest.Option) *target {
	tg := &target{t: t, root: "/interop"}
	if oracleAddr != "" {
		tg.hosts = oracleAddr
		tg.root = fmt.Sprintf("/interop-%s-%d", strings.ReplaceAll(t.Name(), "/", "_"), time.Now().UnixNano())
	} else {
		tg.zk = zktest.Start(t, opts...)
		tg.hosts = tg.zk.Addr()
	}
	tg.admin = tg.connect()
	if tg.root != "/interop" {
		t.Cleanup(func() { deleteTree(tg.admin, tg.root) })
	}
	return tg
}

// deleteTree deletes p and everything under it, best effort.
func deleteTree(c *client.Conn, p string) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	kids, _, _ := c.Children(ctx, p)
	for _, k := range kids {
		deleteTree(c, p+"/"+k)
	}
	_ = c.Delete(ctx, p, -1)
}

func (tg *target) path(name string) string { return tg.root + "/" + name }

func (tg *target) connect() *client.Conn {
	tg.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	c, err := client.Connect(ctx, strings.Split(tg.hosts, ","))
	if err != nil {
		tg.t.Fatal(err)
	}
	tg.t.Cleanup(func() { _ = c.Close() })
	return c
}

func (tg *target) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	tg.t.Cleanup(cancel)
	return ctx
}

// waitChildren waits until p has n children.
func (tg *target) waitChildren(p string, n int) {
	tg.t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		kids, _, _ := tg.admin.Children(context.Background(), p)
		if len(kids) == n {
			return
		}
		if time.Now().After(deadline) {
			tg.t.Fatalf("%s has children %v, want %d", p, kids, n)
		}
		time.Sleep(5 * time.Millisecond) // polling interval
	}
}

// agent is a running kazoo_agent.py.
type agent struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  interface{ Close() error }
	lines  chan string
	stderr bytes.Buffer
	done   chan error
}

func (tg *target) start(args ...string) *agent {
	tg.t.Helper()
	a := &agent{t: tg.t, lines: make(chan string, 100), done: make(chan error, 1)}
	a.cmd = exec.Command(python, append([]string{"kazoo_agent.py", tg.hosts}, args...)...)
	a.cmd.Stderr = &a.stderr
	stdin, err := a.cmd.StdinPipe()
	if err != nil {
		tg.t.Fatal(err)
	}
	stdout, err := a.cmd.StdoutPipe()
	if err != nil {
		tg.t.Fatal(err)
	}
	if err := a.cmd.Start(); err != nil {
		tg.t.Fatal(err)
	}
	a.stdin = stdin
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			a.lines <- sc.Text()
		}
		close(a.lines)
		a.done <- a.cmd.Wait()
	}()
	tg.t.Cleanup(func() { _ = a.cmd.Process.Kill() })
	return a
}

// expect waits for the agent's next line and checks it.
func (a *agent) expect(want string) {
	a.t.Helper()
	if got := a.next(); got != want {
		a.t.Fatalf("kazoo agent said %q, want %q; stderr:\n%s", got, want, a.stderr.String())
	}
}

func (a *agent) next() string {
	a.t.Helper()
	select {
	case l, ok := <-a.lines:
		if !ok {
			a.t.Fatalf("kazoo agent exited: %v; stderr:\n%s", <-a.done, a.stderr.String())
		}
		return l
	case <-time.After(waitTimeout):
		a.t.Fatalf("kazoo agent silent for %v; stderr:\n%s", waitTimeout, a.stderr.String())
	}
	return ""
}

// silent checks that the agent says nothing for a while (it is blocked).
func (a *agent) silent(d time.Duration) {
	a.t.Helper()
	select {
	case l := <-a.lines:
		a.t.Fatalf("kazoo agent said %q while it should be blocked", l)
	case <-time.After(d):
	}
}

// release tells a holding agent to release and waits for it to exit.
func (a *agent) release() {
	a.t.Helper()
	_ = a.stdin.Close()
	a.expect("released")
	a.wait()
}

func (a *agent) wait() {
	a.t.Helper()
	for range a.lines {
	}
	select {
	case err := <-a.done:
		if err != nil {
			a.t.Fatalf("kazoo agent: %v; stderr:\n%s", err, a.stderr.String())
		}
	case <-time.After(waitTimeout):
		a.t.Fatal("kazoo agent did not exit")
	}
}

// run runs a one-shot agent and returns its lines.
func (tg *target) run(args ...string) []string {
	tg.t.Helper()
	a := tg.start(args...)
	_ = a.stdin.Close()
	var lines []string
	for l := range a.lines {
		lines = append(lines, l)
	}
	a.wait()
	return lines
}
