// Package zkcli is `paddock cli`: a shell with the commands and output
// formats of ZooKeeper's zkCli.sh, for Paddock and for any
// ZooKeeper-compatible server.
//
// A Shell holds one session and runs command lines (Run) or argument
// vectors (RunArgs). Normal output goes to the writer given to Run; a
// failure is returned as an error whose text is what zkCli prints on
// stderr (ExitCode gives the exit status zkCli would use). Watch events,
// and with Config.StateEvents connection state changes, are printed
// asynchronously to Config.Events as zkCli prints them:
//
//	WATCHER::
//
//	WatchedEvent state:SyncConnected type:NodeDataChanged path:/a
//
// Interactive runs the read-eval-print loop on a terminal, with line
// editing, history and completion of commands and paths.
package zkcli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/paddockzk/paddock/client"
)

// DefaultTimeout is the session timeout requested when Config.Timeout is
// zero: zkCli's default (-timeout 30000).
const DefaultTimeout = 30 * time.Second

// Config configures a Shell.
type Config struct {
	// Timeout is the session timeout requested from the server (which
	// may negotiate it down). It also bounds the wait for a connection.
	Timeout time.Duration
	// Events receives what arrives asynchronously: watch events and, with
	// StateEvents, connection state changes. Nil discards them.
	Events io.Writer
	// StateEvents prints connection state changes (zkCli's
	// "WatchedEvent state:SyncConnected type:None path:null").
	StateEvents bool
	// OnStateChange, if set, is called after every connection state
	// change, from a goroutine of the Shell (to redraw a prompt).
	OnStateChange func()
	// Version is printed by the version command.
	Version string
	// ReadOnly lets the session connect to a server in read-only mode
	// (zkCli's -r).
	ReadOnly bool
	// Stderr receives what zkCli prints on stderr for a command that
	// succeeds (listquota's "absolute path is ..."). Nil discards it.
	Stderr io.Writer
	// Location is the time zone of the ctime and mtime of stat output
	// (default time.Local, as Java's Date.toString).
	Location *time.Location
}

// ErrQuit is returned by Run for the quit command.
var ErrQuit = errors.New("quit")

// Error is a failed command: Msg is what zkCli prints (on stderr), Code
// the exit status zkCli uses (1, or 127 for an unknown command).
type Error struct {
	Msg  string
	Code int
}

func (e *Error) Error() string { return e.Msg }

func failf(format string, args ...any) error {
	return &Error{Msg: fmt.Sprintf(format, args...), Code: 1}
}

// ExitCode is the process exit status for the result of a command: 0 for
// nil and ErrQuit, Error.Code for an *Error, 1 otherwise.
func ExitCode(err error) int {
	var e *Error
	switch {
	case err == nil, errors.Is(err, ErrQuit):
		return 0
	case errors.As(err, &e):
		return e.Code
	}
	return 1
}

// Shell is a zkCli-style shell over one session at a time. Run and
// RunArgs must not be called concurrently; Prompt and Complete may be
// called at any time.
type Shell struct {
	cfg Config

	// outMu serializes the output of commands and of asynchronous events,
	// so that an event is never printed in the middle of a command's
	// output.
	outMu sync.Mutex

	mu           sync.Mutex
	sess         *session // nil when not connected
	server       string   // connect string shown in the prompt
	noConnState  string   // prompt state when sess is nil
	history      []string // command number -> line
	printWatches bool
	closing      bool
}

// New returns a Shell that is not connected yet; call Connect.
func New(cfg Config) *Shell {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Events == nil {
		cfg.Events = io.Discard
	}
	if cfg.Stderr == nil {
		cfg.Stderr = io.Discard
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	return &Shell{cfg: cfg, noConnState: "NOT_CONNECTED", printWatches: true}
}

// session is one connection and the watches set through it.
type session struct {
	conn *client.Conn
	// wg counts the goroutines printing this session's events.
	wg sync.WaitGroup
	// ready is closed once the first Connected state has been handled
	// (printed), so that it comes before anything printed after Connect.
	ready chan struct{}
	// slots and persistent are guarded by Shell.mu (see watch.go).
	slots      map[string]*[numKinds]*slot
	persistent map[persistentKey]*client.PersistentWatch
}

// Connect closes the current session, if any, and connects to server, a
// connect string "host:port[,host:port...][/chroot]", waiting at most the
// session timeout for a session.
func (s *Shell) Connect(ctx context.Context, server string) error {
	s.closeSession("CLOSED")
	hosts, chroot := splitConnectString(server)
	s.mu.Lock()
	s.server = server
	s.mu.Unlock()
	opts := []client.Option{client.WithSessionTimeout(s.cfg.Timeout), client.WithReadOnly(s.cfg.ReadOnly)}
	if chroot != "" {
		opts = append(opts, client.WithChroot(chroot))
	}
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	conn, err := client.Connect(cctx, hosts, opts...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("no server answered within %v", s.cfg.Timeout)
		}
		s.mu.Lock()
		s.noConnState = "NOT_CONNECTED"
		s.mu.Unlock()
		s.stateChanged()
		return failf("Unable to connect to %s: %v", server, err)
	}
	sess := &session{
		conn:       conn,
		ready:      make(chan struct{}),
		slots:      make(map[string]*[numKinds]*slot),
		persistent: make(map[persistentKey]*client.PersistentWatch),
	}
	s.mu.Lock()
	s.sess = sess
	s.mu.Unlock()
	sess.wg.Add(1)
	go s.watchState(sess)
	select {
	case <-sess.ready:
	case <-ctx.Done():
	}
	return nil
}

// splitConnectString splits "h1:p1,h2:p2/chroot" into hosts and chroot.
func splitConnectString(server string) ([]string, string) {
	chroot := ""
	if i := strings.IndexByte(server, '/'); i >= 0 {
		server, chroot = server[:i], server[i:]
	}
	return strings.Split(server, ","), chroot
}

// watchState prints the session's state changes (as zkCli's default
// watcher does) and reports them to OnStateChange.
func (s *Shell) watchState(sess *session) {
	defer sess.wg.Done()
	ready := sync.OnceFunc(func() { close(sess.ready) })
	defer ready()
	for ev := range sess.conn.Events() {
		s.mu.Lock()
		quiet := s.closing || !s.printWatches
		s.mu.Unlock()
		if name := keeperState(ev.State); s.cfg.StateEvents && !quiet && name != "" && ev.State != client.StateConnecting {
			s.printEvent(name, "None", "")
		}
		s.stateChanged()
		if ev.State != client.StateConnecting {
			ready()
		}
	}
}

func (s *Shell) stateChanged() {
	if s.cfg.OnStateChange != nil {
		s.cfg.OnStateChange()
	}
}

// closeSession closes the current session, if any, and waits until its
// events have been printed; the prompt then shows state.
func (s *Shell) closeSession(state string) {
	s.mu.Lock()
	sess := s.sess
	s.sess = nil
	s.noConnState = state
	s.mu.Unlock()
	if sess == nil {
		return
	}
	_ = sess.conn.Close()
	sess.wg.Wait()
}

// Close ends the session without printing its Closed event. The Shell
// may be connected again.
func (s *Shell) Close() error {
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	s.closeSession("CLOSED")
	s.mu.Lock()
	s.closing = false
	s.mu.Unlock()
	return nil
}

// conn returns the connection of a live session, or the "Not connected"
// error zkCli prints.
func (s *Shell) conn() (*session, error) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if sess == nil {
		return nil, failf("Not connected")
	}
	switch sess.conn.State() {
	case client.StateClosed, client.StateExpired:
		return nil, failf("Not connected")
	}
	return sess, nil
}

// Prompt returns zkCli's prompt: "[zk: host:port(CONNECTED) 3] ", with
// the number of the next command.
func (s *Shell) Prompt() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := s.noConnState
	if s.sess != nil {
		state = promptState(s.sess.conn.State())
	}
	return fmt.Sprintf("[zk: %s(%s) %d] ", s.server, state, len(s.history))
}

// promptState is the name Java's ZooKeeper.States gives a state.
func promptState(st client.State) string {
	switch st {
	case client.StateConnected:
		return "CONNECTED"
	case client.StateConnectedReadOnly:
		return "CONNECTEDREADONLY"
	case client.StateConnecting, client.StateDisconnected:
		return "CONNECTING"
	case client.StateAuthFailed:
		return "AUTH_FAILED"
	}
	return "CLOSED"
}

// keeperState is the name Java's Watcher.Event.KeeperState gives a state
// ("" for none).
func keeperState(st client.State) string {
	switch st {
	case client.StateConnected:
		return "SyncConnected"
	case client.StateDisconnected:
		return "Disconnected"
	case client.StateExpired:
		return "Expired"
	case client.StateAuthFailed:
		return "AuthFailed"
	case client.StateConnectedReadOnly:
		return "ConnectedReadOnly"
	case client.StateClosed:
		return "Closed"
	}
	return ""
}

// Run runs one command line, as typed at the zkCli prompt, writing its
// output to out. Blank lines do nothing; every other line gets a command
// number (shown by the prompt and by history).
func (s *Shell) Run(ctx context.Context, line string, out io.Writer) error {
	args := SplitLine(line)
	if len(args) == 0 {
		return nil
	}
	return s.record(ctx, line, args, out)
}

// RunArgs runs one command given as arguments (not split again: an
// argument may contain spaces), as `zkCli.sh -server H:P cmd args...`.
// There is no history before it, so `redo N` is out of range, as in zkCli.
func (s *Shell) RunArgs(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return nil
	}
	return s.record(ctx, strings.Join(args, " "), args, out)
}

// record adds line to the history, replaces a redo with the command it
// names, and runs the command.
func (s *Shell) record(ctx context.Context, line string, args []string, out io.Writer) error {
	s.mu.Lock()
	n := len(s.history)
	s.history = append(s.history, line)
	s.mu.Unlock()
	if args[0] == "redo" && len(args) >= 2 {
		redone, err := s.redo(args[1], n)
		if err != nil {
			return err
		}
		args = SplitLine(redone)
	}
	return s.exec(ctx, args, out)
}

// redo replaces history entry n with entry arg and returns it.
func (s *Shell) redo(arg string, n int) (string, error) {
	var i int
	if _, err := fmt.Sscan(arg, &i); err != nil || i < 0 || i >= n {
		return "", failf("Command index out of range")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	line := s.history[i]
	if a := SplitLine(line); len(a) > 0 && a[0] == "redo" {
		return "", failf("No redoing redos")
	}
	s.history[n] = line
	return line, nil
}

// exec runs a command; its output is collected and written to out in
// one piece, so that asynchronous events do not split it.
func (s *Shell) exec(ctx context.Context, args []string, out io.Writer) error {
	var buf, errBuf bytes.Buffer
	err := s.dispatch(ctx, args, &buf, &errBuf)
	s.outMu.Lock()
	defer s.outMu.Unlock()
	_, _ = s.cfg.Stderr.Write(errBuf.Bytes())
	if _, werr := out.Write(buf.Bytes()); werr != nil && err == nil {
		err = werr
	}
	return err
}

// WriteError writes the message of a failed command and a newline to w,
// without splitting, or being split by, asynchronous output.
func (s *Shell) WriteError(w io.Writer, err error) {
	if err == nil || errors.Is(err, ErrQuit) {
		return
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintln(w, err.Error())
}

// printEvent prints a watch or state event as zkCli's default watcher.
func (s *Shell) printEvent(state, typ, path string) {
	if path == "" {
		path = "null"
	}
	s.outMu.Lock()
	defer s.outMu.Unlock()
	fmt.Fprintf(s.cfg.Events, "\nWATCHER::\n\nWatchedEvent state:%s type:%s path:%s\n", state, typ, path)
}
