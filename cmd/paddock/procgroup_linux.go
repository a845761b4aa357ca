package main

import "syscall"

// setDeathSignal has the kernel SIGKILL the command if paddock lock dies
// (killed, OOM) while it runs: it would otherwise run on without the lock.
// The thread that starts it is locked for the start (runHolding), as the
// signal follows the thread that forked.
func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
