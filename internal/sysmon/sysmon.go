package sysmon

import (
	"errors"
	"time"
)

// DefaultSlack is the timer slack `paddock server` gives sysmon: its 20
// µs sleeps become about a millisecond long instead of up to 70 µs (the
// default 50 µs slack), so it wakes about fourteen times less often while
// it polls. See the README ("Performance") for what it saves and what was
// measured with 250 µs.
const DefaultSlack = time.Millisecond

// DefaultKeepInterval is how often Keep looks for threads that inherited
// sysmon's slack.
const DefaultKeepInterval = time.Second

var (
	// ErrUnsupported is returned where there is no per-thread timer
	// slack (anything but Linux).
	ErrUnsupported = errors.New("sysmon: thread timer slack is Linux-only")
)
