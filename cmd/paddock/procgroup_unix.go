//go:build unix

package main

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup reports whether the command gets its own process group, so
// that a lost lock's SIGTERM/SIGKILL reaches everything it started, not
// just its first process. Not when stdin is a terminal: the command must
// stay in the terminal's foreground group to read from it (a background
// group reading the terminal is stopped), and there the terminal's own
// Ctrl-C already reaches it.
func ownGroup(stdin *os.File) bool {
	if stdin == nil {
		return true
	}
	st, err := stdin.Stat()
	return err != nil || st.Mode()&os.ModeCharDevice == 0
}

// prepareGroup starts c in its own process group when group is set.
func prepareGroup(c *exec.Cmd, group bool) {
	if c.SysProcAttr == nil {
		c.SysProcAttr = &syscall.SysProcAttr{}
	}
	c.SysProcAttr.Setpgid = group
	setDeathSignal(c.SysProcAttr)
}

// signalCommand signals the command's process group when it has its own,
// else its process.
func signalCommand(c *exec.Cmd, group bool, sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok && group {
		_ = syscall.Kill(-c.Process.Pid, s)
		return
	}
	_ = c.Process.Signal(sig)
}
