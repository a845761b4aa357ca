//go:build unix && !linux

package main

import "syscall"

// setDeathSignal: only Linux has a parent-death signal.
func setDeathSignal(*syscall.SysProcAttr) {}
