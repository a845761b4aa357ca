//go:build unix

package herd

import (
	"syscall"
	"time"
)

// processCPUSource names what processCPU measures.
const processCPUSource = "getrusage(RUSAGE_SELF): this process, server and clients together"

// processCPU returns the user+system CPU time of this process.
func processCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, err
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
