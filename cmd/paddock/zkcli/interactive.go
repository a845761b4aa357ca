package zkcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"

	"github.com/chzyer/readline"
)

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return readline.IsTerminal(int(f.Fd())) }

// Interactive runs the shell on the terminal of stdin and stdout: it
// connects to server, then reads commands with line editing (emacs
// keys), history (up and down arrows, Ctrl-R; kept in historyFile unless
// it is empty) and Tab completion of command names and znode paths,
// until quit or end of input (Ctrl-D). Watch events and connection
// state changes are printed as they arrive, above the line being
// edited. Ctrl-C clears the line being edited, or interrupts the
// running command.
func Interactive(ctx context.Context, cfg Config, server, historyFile string) error {
	var sh *Shell
	rl, err := readline.NewEx(&readline.Config{
		HistoryFile:       historyFile,
		HistorySearchFold: true,
		AutoComplete:      completer{ctx: ctx, shell: &sh},
		InterruptPrompt:   "^C",
	})
	if err != nil {
		return err
	}
	defer rl.Close()
	stdout, stderr := rl.Stdout(), rl.Stderr()
	cfg.Events, cfg.Stderr = stdout, stderr
	cfg.StateEvents = true
	// leaving is set once the shell stops reading commands: closing the
	// session then changes its state, and a prompt drawn for that would
	// land below the last command (after quit, a stray prompt).
	// promptMu makes a redraw and the leaving atomic to each other: a
	// state change that began before the shell left draws nothing after.
	var (
		promptMu sync.Mutex
		leaving  bool
	)
	cfg.OnStateChange = func() {
		promptMu.Lock()
		defer promptMu.Unlock()
		if leaving {
			return
		}
		rl.SetPrompt(sh.Prompt())
		rl.Refresh()
	}
	sh = New(cfg)
	defer sh.Close()
	// Before sh.Close, and before anything else may redraw the line
	// (readline redraws the prompt after output while it thinks it is
	// reading): no prompt once the shell is leaving, not even an empty
	// line's (CI's tmux test once saw "[zk: ...] " after quit).
	defer func() {
		promptMu.Lock()
		defer promptMu.Unlock()
		leaving = true
		rl.SetPrompt("")
	}()
	fmt.Fprintf(stdout, "Connecting to %s\n", server)
	if err := sh.Connect(ctx, server); err != nil {
		sh.WriteError(stderr, err)
	}
	for {
		rl.SetPrompt(sh.Prompt())
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		cmdCtx, stop := signal.NotifyContext(ctx, os.Interrupt)
		err = sh.Run(cmdCtx, line, stdout)
		stop()
		if errors.Is(err, ErrQuit) {
			return nil
		}
		sh.WriteError(stderr, err)
	}
}

// completer adapts Shell.Complete to readline.
type completer struct {
	ctx   context.Context
	shell **Shell
}

func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	sh := *c.shell
	if sh == nil {
		return nil, 0
	}
	cands, n := sh.Complete(c.ctx, string(line[:pos]))
	word := []rune(string(line[:pos])[len(string(line[:pos]))-n:])
	var out [][]rune
	for _, cand := range cands {
		out = append(out, []rune(cand)[len(word):])
	}
	return out, len(word)
}
