package cluster_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
)

// snapCrashRounds is how many times TestProcessKill9DuringSnapshots kills
// the server.
const snapCrashRounds = 6

// A standalone server with a data dir, snapshotting every few hundred
// writes of a 6 MB tree, is killed with SIGKILL again and again under
// write load (reliability plan F2 and F10: a crash during a snapshot's
// Persist and during log compaction). Every restart serves again, keeps
// every acknowledged write, and removes the snapshot a kill left
// unfinished (raft's NAME.tmp directory, as large as the tree).
func TestProcessKill9DuringSnapshots(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	p := &procServer{t: t, bin: buildPaddock(t), dir: t.TempDir()}
	p.addr = fmt.Sprintf("127.0.0.1:%d", freePorts(t, 1)[0])
	p.start()
	t.Cleanup(p.kill)
	p.waitServing()

	setup, _ := connect(t, []string{p.addr})
	for _, path := range []string{"/load", "/bulk"} {
		_, err := setup.Create(path, nil, 0, zk.WorldACL(zk.PermAll))
		require.NoError(t, err)
	}
	bulk := make([]byte, 2<<10)
	for b := 0; b < 30; b++ {
		var ops []any
		for i := 0; i < 100; i++ {
			ops = append(ops, &zk.CreateRequest{Path: fmt.Sprintf("/bulk/%d-%d", b, i), Data: bulk, Acl: zk.WorldACL(zk.PermAll)})
		}
		_, err := setup.Multi(ops...)
		require.NoError(t, err)
	}
	setup.Close()

	w := startWriter(t, []string{p.addr})
	acked := w.count
	left := 0
	for round := 0; round < snapCrashRounds; round++ {
		from := acked()
		eventually(t, fmt.Sprintf("round %d: writes after the restart", round), func() bool { return acked() >= from+300 })
		time.Sleep(time.Duration(rng.IntN(40)) * time.Millisecond) // land anywhere in the snapshot cycle
		p.kill()
		unfinished := p.unfinishedSnapshots()
		left += len(unfinished)
		p.start()
		p.waitServing()
		for _, name := range unfinished {
			require.NoDirExists(t, filepath.Join(p.dir, "snapshots", name), "round %d: unfinished snapshot left behind", round)
		}
	}
	all := w.halt()
	requireAllPresent(t, []string{p.addr}, all)
	complete := 0
	entries, err := os.ReadDir(filepath.Join(p.dir, "snapshots"))
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".tmp") {
			complete++
		}
	}
	require.NotZero(t, complete, "no snapshot was taken")
	t.Logf("%d kills, %d of them during a snapshot's write; %d acknowledged writes, none lost", snapCrashRounds, left, len(all))
}

// procServer is one standalone `paddock server` process with a data dir
// that snapshots often.
type procServer struct {
	t        *testing.T
	bin, dir string
	addr     string
	cmd      *exec.Cmd
	wait     chan error // the process's exit, from cmd.Wait
	// env is added to the environment of the process started next.
	env []string
}

func (p *procServer) start() {
	_, port, _ := strings.Cut(p.addr, ":")
	cmd := exec.Command(p.bin, "server", "--port", port, "--data-dir", p.dir, "--max-client-cnxns", "0",
		"--snapshot-threshold", "300", "--snapshot-interval", "20ms")
	logf, err := os.OpenFile(filepath.Join(p.dir, "server.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(p.t, err)
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), p.env...)
	require.NoError(p.t, cmd.Start())
	p.cmd = cmd
	p.wait = waitFor(cmd)
}

func (p *procServer) kill() {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.wait
		p.cmd = nil
	}
}

// exited reports the process's exit status if it has exited by itself.
func (p *procServer) exited() (code int, ok bool) {
	if p.cmd == nil {
		return 0, false
	}
	select {
	case <-p.wait:
		code = p.cmd.ProcessState.ExitCode()
		p.cmd = nil
		return code, true
	default:
		return 0, false
	}
}

func (p *procServer) waitServing() {
	eventually(p.t, "the server serving", func() bool {
		return strings.Contains(fourLetter(p.addr, "srvr"), "Mode: ")
	})
}

// unfinishedSnapshots lists the snapshot directories still being written
// (NAME.tmp).
func (p *procServer) unfinishedSnapshots() []string {
	entries, err := os.ReadDir(filepath.Join(p.dir, "snapshots"))
	require.NoError(p.t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			names = append(names, e.Name())
		}
	}
	return names
}
