package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/internal/wire"
	"github.com/paddockzk/paddock/recipes"
	"github.com/spf13/cobra"
)

// Exit statuses of paddock lock and paddock elect, besides the command's.
const (
	exitLockTimeout = 75  // EX_TEMPFAIL: the lock was not acquired within --timeout
	exitInterrupted = 130 // interrupted (SIGINT/SIGTERM) while waiting
	exitNoCommand   = 127 // the command could not be started
)

// killGrace is how long a command has to exit after SIGTERM, when the
// lock is lost, before it gets SIGKILL.
const killGrace = 10 * time.Second

// recipeFlags are the flags shared by paddock lock and paddock elect.
type recipeFlags struct {
	servers        string
	compat         string
	sessionTimeout time.Duration
}

func (f *recipeFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.servers, "server", "127.0.0.1:2181", "servers: host:port[,host:port...][/chroot]")
	fl.StringVar(&f.compat, "compat", "paddock", "node names and order: paddock, kazoo or curator (to share the path with kazoo or Curator clients)")
	fl.DurationVar(&f.sessionTimeout, "session-timeout", 10*time.Second, "ZooKeeper session timeout: how long a holder cut off from the servers keeps the lock")
}

// connect opens a session and builds the recipe options.
func (f *recipeFlags) connect(ctx context.Context) (*client.Conn, []recipes.Option, error) {
	compat, err := recipes.ParseCompat(f.compat)
	if err != nil {
		return nil, nil, err
	}
	servers, chroot, _ := strings.Cut(f.servers, "/")
	opts := []client.Option{client.WithSessionTimeout(f.sessionTimeout)}
	if chroot != "" {
		opts = append(opts, client.WithChroot("/"+chroot))
	}
	cctx, cancel := context.WithTimeout(ctx, f.sessionTimeout)
	defer cancel()
	conn, err := client.Connect(cctx, []string{servers}, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("connect to %s: %w", f.servers, err)
	}
	host, _ := os.Hostname()
	id := fmt.Sprintf("%s:%d", host, os.Getpid())
	return conn, []recipes.Option{recipes.WithCompat(compat), recipes.WithNodeData([]byte(id))}, nil
}

func newLockCmd() *cobra.Command {
	var f recipeFlags
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "lock [flags] PATH -- COMMAND [ARGS...]",
		Short: "Run a command while holding a ZooKeeper lock",
		Long: `Acquire the fair lock PATH (a Curator InterProcessMutex / kazoo Lock / go-zookeeper
zk.Lock with --compat), run COMMAND while holding it, release it when COMMAND
ends. Works against Paddock and Apache ZooKeeper.

The command's exit status is passed through. The command gets the lock's
fencing token in $PADDOCK_LOCK_TOKEN (and its node in $PADDOCK_LOCK_NODE): pass
it to the resources it writes, so that they can refuse a stale holder.

If the session is lost while the command runs (it expired during a network
partition, or the lock node was deleted), the lock may already belong to
someone else: paddock lock prints a message, sends SIGTERM to the command
(SIGKILL 10s later) and exits with the command's status. Cut off from every
server, it learns of the loss 4/3 of the session timeout after it last heard
from one, while the servers may have expired the session (and handed the
lock on) after one timeout: this is why the fencing token matters. SIGINT, SIGTERM and
SIGHUP are passed on to the command. Unless stdin is a terminal, the command
runs in its own process group and the signals go to the whole group, so
what it started stops too; with a terminal it stays in the terminal's
foreground group, which gets Ctrl-C's SIGINT directly (so that one is not
passed on again). On Linux the command is killed if paddock lock itself
dies.

Exit statuses of its own: 75 if the lock was not acquired within --timeout,
130 if interrupted while waiting, 127 if COMMAND could not be started, 1 for
other errors.`,
		Example: `  paddock lock --server zk1:2181,zk2:2181 /locks/backup -- ./backup.sh --full
  paddock lock --compat kazoo --timeout 30s /locks/deploy -- make deploy`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			path, command := args[0], args[1:]
			if command[0] == "--" {
				command = command[1:]
			}
			if len(command) == 0 {
				return errors.New("no command given: paddock lock PATH -- COMMAND [ARGS...]")
			}
			if err := wire.ValidatePath(path); err != nil {
				return err
			}
			code, err := runLocked(cmd.Context(), &f, timeout, path, command, stdio{cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()})
			return exitWith(cmd, code, err)
		},
	}
	// Flags after PATH belong to the command.
	cmd.Flags().SetInterspersed(false)
	f.register(cmd)
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up (exit 75) if the lock is not acquired within this time (0: wait forever)")
	return cmd
}

// exitWith turns a status into the command's error.
func exitWith(cmd *cobra.Command, code int, err error) error {
	if err != nil {
		return err
	}
	if code != 0 {
		cmd.SilenceErrors = true // the reason, if any, has been printed
		return exitError{code}
	}
	return nil
}

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// runLocked acquires the lock, runs the command and releases the lock.
func runLocked(ctx context.Context, f *recipeFlags, timeout time.Duration, path string, command []string, std stdio) (int, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	cctx, stopConnect := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	conn, opts, err := f.connect(cctx)
	interrupted := cctx.Err() != nil && ctx.Err() == nil
	stopConnect()
	switch {
	case err != nil && interrupted:
		fmt.Fprintf(std.err, "paddock lock: interrupted while connecting for %s\n", path)
		return exitInterrupted, nil
	case err != nil:
		return 0, err
	}
	defer conn.Close()
	m := recipes.NewMutex(conn, path, opts...)
	lease, code := acquire(ctx, m, timeout, path, sigs, std.err)
	if lease == nil {
		return code, nil
	}
	defer release(m)
	return runHolding(lease, path, command, sigs, std), nil
}

// acquire waits for the lock; on failure it prints why and returns the
// exit status.
func acquire(ctx context.Context, m *recipes.Mutex, timeout time.Duration, path string, sigs <-chan os.Signal, stderr io.Writer) (*recipes.Lease, int) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	interrupted := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			close(interrupted)
			cancel()
		case <-ctx.Done():
		}
	}()
	lease, err := m.Lock(ctx)
	switch {
	case err == nil:
		return lease, 0
	case isClosed(interrupted):
		fmt.Fprintf(stderr, "paddock lock: interrupted while waiting for %s\n", path)
		return nil, exitInterrupted
	case errors.Is(err, context.DeadlineExceeded) && timeout > 0:
		fmt.Fprintf(stderr, "paddock lock: timed out after %v waiting for %s\n", timeout, path)
		return nil, exitLockTimeout
	}
	fmt.Fprintf(stderr, "paddock lock: %s: %v\n", path, err)
	return nil, 1
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func release(m *recipes.Mutex) {
	ctx, cancel := context.WithTimeout(context.Background(), recipes.DefaultCleanupTimeout)
	defer cancel()
	_ = m.Unlock(ctx) // a failed deletion goes with the session, closed next
}

// runHolding runs the command, signalling it if the lock is lost, and
// returns its exit status.
func runHolding(lease *recipes.Lease, path string, command []string, sigs <-chan os.Signal, std stdio) int {
	c := exec.Command(command[0], command[1:]...)
	c.Stdin, c.Stdout, c.Stderr = std.in, std.out, std.err
	c.Env = append(os.Environ(),
		"PADDOCK_LOCK_TOKEN="+strconv.FormatInt(lease.Token(), 10),
		"PADDOCK_LOCK_NODE="+lease.Node())
	in, _ := std.in.(*os.File)
	group := ownGroup(in)
	prepareGroup(c, group)
	runtime.LockOSThread() // the parent-death signal follows the forking thread
	err := c.Start()
	runtime.UnlockOSThread()
	if err != nil {
		fmt.Fprintf(std.err, "paddock lock: %v\n", err)
		return exitNoCommand
	}
	done := make(chan struct{})
	go func() {
		_ = c.Wait()
		close(done)
	}()
	lost := lease.Lost()
	var kill <-chan time.Time
	for {
		select {
		case <-done:
			return exitStatus(c.ProcessState)
		case sig := <-sigs:
			if sig == os.Interrupt && !group {
				// Stdin is a terminal and the command shares its
				// foreground group: the terminal's Ctrl-C reached it too.
				continue
			}
			signalCommand(c, group, sig)
		case <-lost:
			lost = nil
			fmt.Fprintf(std.err, "paddock lock: lost the lock on %s (%v); someone else may hold it now: sending SIGTERM to %s\n",
				path, lease.Err(), command[0])
			signalCommand(c, group, syscall.SIGTERM)
			kill = time.After(killGrace)
		case <-kill:
			signalCommand(c, group, syscall.SIGKILL)
		}
	}
}

// exitStatus is the shell's view of a finished process: its exit code, or
// 128 plus the signal that killed it.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

func newElectCmd() *cobra.Command {
	var f recipeFlags
	cmd := &cobra.Command{
		Use:   "elect [flags] PATH VALUE",
		Short: "Campaign for leadership and print leader changes",
		Long: `Join the fair election PATH (a Curator LeaderLatch / kazoo Election with --compat)
as VALUE, and print a line each time the leader changes:

  leader: VALUE (token N)

then "elected: VALUE" once this process leads. It keeps leading until it
is interrupted (SIGINT, SIGTERM: it resigns and exits 0) or it loses the
leadership (session expired, node deleted: exits 1).`,
		Example: `  paddock elect --server zk1:2181 /election/scheduler "$(hostname)"`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := wire.ValidatePath(args[0]); err != nil {
				return err
			}
			code, err := runElect(cmd.Context(), &f, args[0], args[1], cmd.OutOrStdout(), cmd.ErrOrStderr())
			return exitWith(cmd, code, err)
		},
	}
	f.register(cmd)
	return cmd
}

func runElect(ctx context.Context, f *recipeFlags, path, value string, stdout, stderr io.Writer) (int, error) {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	conn, opts, err := f.connect(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil // interrupted while connecting: as while campaigning
		}
		return 0, err
	}
	defer conn.Close()
	e := recipes.NewElection(conn, path, opts...)
	printed := make(chan struct{})
	shown := newShownLeader()
	go printLeaders(e.Observe(ctx), stdout, printed, shown)
	defer func() { stop(); <-printed }()
	lease, err := e.Campaign(ctx, []byte(value))
	if err != nil {
		if ctx.Err() != nil {
			return 0, nil
		}
		return 0, err
	}
	// "elected" follows the "leader:" line naming this process, and only
	// that: an interrupt or a loss before it ends the wait without it.
	for !shown.is(lease.Token()) {
		select {
		case <-shown.wake:
			continue
		case <-ctx.Done():
		case <-lease.Lost():
		}
		break
	}
	if shown.is(lease.Token()) {
		fmt.Fprintf(stdout, "elected: %s\n", value)
	}
	select {
	case <-ctx.Done():
		rctx, cancel := context.WithTimeout(context.Background(), recipes.DefaultCleanupTimeout)
		defer cancel()
		return 0, e.Resign(rctx)
	case <-lease.Lost():
		fmt.Fprintf(stderr, "paddock elect: lost the leadership of %s (%v)\n", path, lease.Err())
		return 1, nil
	}
}

// shownLeader is the token of the last leader line printed, and a wake-up
// for whoever waits for a given one (a later line replaces an earlier, so
// nothing is lost however many leaders come and go meanwhile).
type shownLeader struct {
	mu    sync.Mutex
	token int64
	wake  chan struct{} // one pending wake-up
}

func newShownLeader() *shownLeader { return &shownLeader{wake: make(chan struct{}, 1)} }

func (s *shownLeader) set(token int64) {
	s.mu.Lock()
	s.token = token
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *shownLeader) is(token int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token == token
}

// printLeaders prints each leader change and records it in shown.
func printLeaders(leaders <-chan recipes.LeaderInfo, w io.Writer, done chan<- struct{}, shown *shownLeader) {
	defer close(done)
	for l := range leaders {
		fmt.Fprintf(w, "leader: %s (token %d)\n", l.Value, l.Token)
		shown.set(l.Token)
	}
}
