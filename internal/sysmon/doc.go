// Package sysmon lengthens the timer slack of the Go runtime's monitor
// thread, sysmon, on Linux.
//
// sysmon is a thread of its own that the runtime starts before any user
// code runs. While any P is busy or in a system call it wakes every 20 µs
// (usleep(20)) to retake Ps stuck in system calls, preempt long-running
// goroutines and poll the network, backing off only after 50 wake-ups in a
// row with nothing to do; a system call made while it sleeps deeply wakes
// it and starts that over. A server that goes idle and busy again for
// every request, and blocks in fsync for a hundred microseconds on every
// write, keeps it at the 20 µs cadence: on the machine of the README's
// results it was 32% of a cluster follower's context switches and ~5
// wake-ups per replicated write on each node, each costing a context
// switch, which on a virtual machine is the dearest thing a server does.
// The runtime has no setting for that tick (golang/go#18236).
//
// Linux lets a thread's sleeps end up to its timer slack late (50 µs by
// default), so that wake-ups can be coalesced. Relax gives sysmon's thread
// a longer slack, so that its 20 µs sleeps last about that long: the
// monitor runs about as often as the runtime's own does where timers are
// coarse (on Windows, every 0.5–1 ms), and no other thread is slowed.
// Goroutines are woken by the threads that ready them, not by sysmon, so
// a request does not wait for it; what waits is what sysmon alone does:
// handing a P blocked in a long system call to another thread when every
// other P is busy, preempting a goroutine that ran 10 ms, and the network
// poll of a process whose Ps have all been busy for 10 ms.
//
// A thread inherits its creator's slack, and sysmon starts threads (when
// it hands a P on and no idle thread is left): Keep puts those back to the
// process's slack.
//
// sysmon is found as the process's first thread after the main one: the
// runtime starts it first (runtime.main, before init), and threads are
// numbered and timed in creation order (the race detector's runtime
// too). The package's test checks the thread it finds by what it does:
// while a goroutine spins, it sleeps in nanosleep for multiples of 20 µs
// up to 10 ms. Setting another thread's slack needs CAP_SYS_NICE (root
// has it); without it Relax fails and nothing changes.
package sysmon
