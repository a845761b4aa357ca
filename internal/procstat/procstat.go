// Package procstat reads a Linux process's CPU time from /proc/PID/stat,
// for the load generators (`paddock bench`, `paddock herd`) that report
// what a server outside their own process spent.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ClockTicks is USER_HZ, the unit of /proc/PID/stat times (100 on every
// Linux architecture Go supports): CPU times read here are multiples of
// 10 ms.
const ClockTicks = 100

// CPU returns the user+system CPU time process pid has used, all its
// threads together.
func CPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseCPU(string(b))
}

// ParseCPU reads utime and stime (fields 14 and 15) of a /proc/PID/stat
// line; the command name (field 2) may hold spaces and parentheses, so
// fields are counted after its last ')'.
func ParseCPU(stat string) (time.Duration, error) {
	f, err := After(stat, 15)
	if err != nil {
		return 0, err
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * time.Second / ClockTicks, nil
}

// After returns the fields of a /proc/PID/stat (or /proc/PID/task/TID/stat)
// line that follow the command name: field n of proc(5) is After's
// [n-3]. It fails unless the line holds at least field last.
func After(stat string, last int) ([]string, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, errors.New("bad /proc stat line")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < last-2 {
		return nil, errors.New("short /proc stat line")
	}
	return f, nil
}
