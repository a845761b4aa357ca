package cluster_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// procCluster runs `paddock server` processes configured by zoo.cfg files,
// as an operator would, so they can be killed with SIGKILL.
type procCluster struct {
	t       *testing.T
	bin     string
	dirs    []string
	clients []string
	procs   []*exec.Cmd
	waits   []chan error // each process's exit, from cmd.Wait
	// env is added to the environment of the nodes started from now on.
	env []string
}

// buildPaddock builds cmd/paddock, with the build tags given.
func buildPaddock(t *testing.T, tags ...string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "paddock")
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	out, err := exec.Command("go", append(args, "../../cmd/paddock")...).CombinedOutput()
	require.NoError(t, err, string(out))
	return bin
}

func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var lns []net.Listener
	var ports []int
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

func startProcCluster(t *testing.T, n int) *procCluster {
	return startProcClusterOf(t, n, buildPaddock(t), nil)
}

// startProcClusterOf starts n nodes of the binary bin, with env added to
// their environment.
func startProcClusterOf(t *testing.T, n int, bin string, env []string) *procCluster {
	c := &procCluster{t: t, bin: bin, env: env}
	ports := freePorts(t, 3*n)
	var servers strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&servers, "server.%d=127.0.0.1:%d:%d;127.0.0.1:%d\n", i+1, ports[3*i], ports[3*i+1], ports[3*i+2])
	}
	for i := 0; i < n; i++ {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "myid"), []byte(fmt.Sprint(i+1)), 0o644))
		cfg := fmt.Sprintf("tickTime=500\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nmaxClientCnxns=0\n%s",
			dir, ports[3*i+2], servers.String())
		require.NoError(t, os.WriteFile(filepath.Join(dir, "zoo.cfg"), []byte(cfg), 0o644))
		c.dirs = append(c.dirs, dir)
		c.clients = append(c.clients, fmt.Sprintf("127.0.0.1:%d", ports[3*i+2]))
	}
	c.procs = make([]*exec.Cmd, n)
	c.waits = make([]chan error, n)
	for i := range c.procs {
		c.start(i)
	}
	t.Cleanup(func() {
		for i := range c.procs {
			c.kill(i)
		}
	})
	for i := range c.procs {
		c.waitServing(i)
	}
	return c
}

func (c *procCluster) start(i int) {
	cmd := exec.Command(c.bin, "server", "--config", filepath.Join(c.dirs[i], "zoo.cfg"))
	logf, err := os.OpenFile(filepath.Join(c.dirs[i], "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(c.t, err)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), c.env...)
	require.NoError(c.t, cmd.Start())
	c.procs[i] = cmd
	c.waits[i] = waitFor(cmd)
}

// waitFor returns a channel that gets cmd's exit once it has exited.
func waitFor(cmd *exec.Cmd) chan error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}

func (c *procCluster) kill(i int) {
	if p := c.procs[i]; p != nil && p.Process != nil {
		_ = p.Process.Signal(syscall.SIGKILL)
		<-c.waits[i]
		c.procs[i] = nil
	}
}

// exited reports node i's exit status if it has exited by itself.
func (c *procCluster) exited(i int) (code int, ok bool) {
	if c.procs[i] == nil {
		return 0, false
	}
	select {
	case <-c.waits[i]:
		code = c.procs[i].ProcessState.ExitCode()
		c.procs[i] = nil
		return code, true
	default:
		return 0, false
	}
}

// fourLetter sends a four-letter word and returns the answer ("" on error).
func fourLetter(addr, word string) string {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return ""
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := conn.Write([]byte(word)); err != nil {
		return ""
	}
	var b strings.Builder
	sc := bufio.NewScanner(conn)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	return b.String()
}

func (c *procCluster) mode(i int) string {
	for _, line := range strings.Split(fourLetter(c.clients[i], "srvr"), "\n") {
		if m, ok := strings.CutPrefix(line, "Mode: "); ok {
			return m
		}
	}
	return ""
}

func (c *procCluster) waitServing(i int) {
	eventually(c.t, fmt.Sprintf("node %d serving", i+1), func() bool { return c.mode(i) != "" })
}

func (c *procCluster) leader() int {
	idx := -1
	eventually(c.t, "a leader", func() bool {
		for i := range c.procs {
			if c.procs[i] != nil && c.mode(i) == "leader" {
				idx = i
				return true
			}
		}
		return false
	})
	return idx
}

// writer creates sequential nodes until stopped and records every
// acknowledged path, and when its acknowledgement came.
type writer struct {
	mu      sync.Mutex
	acked   []string
	ackedAt []time.Time
	stop    chan struct{}
	done    chan struct{}
}

func startWriter(t *testing.T, servers []string) *writer {
	w := &writer{stop: make(chan struct{}), done: make(chan struct{})}
	conn, _ := connect(t, servers)
	go func() {
		defer close(w.done)
		for {
			select {
			case <-w.stop:
				return
			default:
			}
			p, err := conn.Create("/load/n-", []byte("x"), zk.FlagSequence, zk.WorldACL(zk.PermAll))
			if err == nil {
				w.mu.Lock()
				w.acked = append(w.acked, p)
				w.ackedAt = append(w.ackedAt, time.Now())
				w.mu.Unlock()
			}
		}
	}()
	return w
}

func (w *writer) halt() []string {
	close(w.stop)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.acked...)
}

// count returns how many writes have been acknowledged so far.
func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.acked)
}

// firstAckAfter returns when the first write sent after t was
// acknowledged (a write in flight at t may have been sent before it, so
// the one after the first acknowledgement at or after t).
func (w *writer) firstAckAfter(t time.Time) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, at := range w.ackedAt {
		if !at.Before(t) && i+1 < len(w.ackedAt) {
			return w.ackedAt[i+1], true
		}
	}
	return time.Time{}, false
}

// createLoad creates /load, under which writers create their nodes.
func createLoad(t *testing.T, servers []string) {
	t.Helper()
	setup, _ := connect(t, servers)
	_, err := setup.Create("/load", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	setup.Close()
}

func requireAllPresent(t *testing.T, servers []string, acked []string) {
	t.Helper()
	conn, _ := connect(t, servers)
	_, err := conn.Sync("/load")
	require.NoError(t, err)
	kids, _, err := conn.Children("/load")
	require.NoError(t, err)
	have := make(map[string]bool, len(kids))
	for _, k := range kids {
		have["/load/"+k] = true
	}
	for _, p := range acked {
		require.True(t, have[p], "acknowledged write %s lost", p)
	}
}

func TestProcessClusterLeaderKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startProcCluster(t, 3)
	createLoad(t, c.clients)
	w := startWriter(t, c.clients)
	eventually(t, "some writes", func() bool { return w.count() > 50 })
	old := c.leader()
	c.kill(old)
	elected, firstWrite := recovery(t, c, old, w, time.Now())
	t.Logf("leader killed: a new leader after %v, the first write acknowledged after %v (the writer may have been a client of the killed node)",
		elected.Round(time.Millisecond), firstWrite.Round(time.Millisecond))
	acked := w.halt()
	c.start(old)
	c.waitServing(old)
	requireAllPresent(t, c.clients, acked)
	// The restarted node caught up: it serves every acknowledged write too.
	requireAllPresent(t, []string{c.clients[old]}, acked)
	t.Logf("%d acknowledged writes, none lost", len(acked))
}

func TestProcessClusterFullRestartKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	c := startProcCluster(t, 3)
	createLoad(t, c.clients)
	w := startWriter(t, c.clients)
	eventually(t, "some writes", func() bool { return w.count() > 100 })
	for i := range c.procs {
		c.kill(i)
	}
	acked := w.halt()
	for i := range c.procs {
		c.start(i)
	}
	for i := range c.procs {
		c.waitServing(i)
	}
	requireAllPresent(t, c.clients, acked)
	t.Logf("%d acknowledged writes survived kill -9 of every node", len(acked))
}
