package sysmon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/paddockzk/paddock/internal/procstat"
)

// Relaxed is sysmon's thread with its slack lengthened.
type Relaxed struct {
	tid   int
	slack int64 // what sysmon was given, ns
	base  int64 // the main thread's slack: what other threads get back
}

// Relax gives sysmon's thread a timer slack of slack. It fails, changing
// nothing, outside Linux or without CAP_SYS_NICE.
func Relax(slack time.Duration) (*Relaxed, error) {
	if slack <= 0 {
		return nil, fmt.Errorf("sysmon: slack %v is not positive", slack)
	}
	tid, err := Thread()
	if err != nil {
		return nil, err
	}
	base, err := readSlack(os.Getpid())
	if err != nil {
		return nil, err
	}
	if err := writeSlack(tid, int64(slack)); err != nil {
		if errors.Is(err, os.ErrPermission) {
			return nil, fmt.Errorf("sysmon: setting another thread's timer slack needs CAP_SYS_NICE: %w", err)
		}
		return nil, err
	}
	return &Relaxed{tid: tid, slack: int64(slack), base: base}, nil
}

// Thread returns sysmon's thread id: the process's first thread after the
// main one.
func Thread() (int, error) {
	pid := os.Getpid()
	tids, err := threads()
	if err != nil {
		return 0, err
	}
	best, bestStart := 0, uint64(0)
	for _, tid := range tids {
		if tid == pid {
			continue
		}
		start, err := threadStart(tid)
		if err != nil {
			continue // the thread exited
		}
		if best == 0 || start < bestStart || (start == bestStart && tid < best) {
			best, bestStart = tid, start
		}
	}
	if best == 0 {
		return 0, errors.New("sysmon: the process has no thread besides the main one")
	}
	return best, nil
}

// Thread returns the id of the thread Relax gave the slack to.
func (r *Relaxed) Thread() int { return r.tid }

// Keep gives the process's slack back, every interval until ctx ends, to
// any other thread found with sysmon's (one sysmon started). Errors are
// ignored: a thread may exit between listing and writing.
func (r *Relaxed) Keep(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = DefaultKeepInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		r.restoreInherited()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// restoreInherited sets the base slack on every thread but sysmon that
// has sysmon's, and returns how many it reset.
func (r *Relaxed) restoreInherited() int {
	if r.slack == r.base {
		return 0
	}
	tids, err := threads()
	if err != nil {
		return 0
	}
	n := 0
	for _, tid := range tids {
		if tid == r.tid {
			continue
		}
		if s, err := readSlack(tid); err == nil && s == r.slack && writeSlack(tid, r.base) == nil {
			n++
		}
	}
	return n
}

// threads lists the ids of the process's threads.
func threads() ([]int, error) {
	ents, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, err
	}
	tids := make([]int, 0, len(ents))
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// threadStart is a thread's start time in clock ticks since boot (field
// 22 of proc(5)'s stat).
func threadStart(tid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		return 0, err
	}
	f, err := procstat.After(string(b), 22)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(f[22-3], 10, 64)
}

// slackPath is where a thread's slack is read and set: /proc/TID names
// any thread of any process (/proc/self/task/TID has no such file).
func slackPath(tid int) string { return fmt.Sprintf("/proc/%d/timerslack_ns", tid) }

func readSlack(tid int) (int64, error) {
	b, err := os.ReadFile(slackPath(tid))
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

func writeSlack(tid int, ns int64) error {
	f, err := os.OpenFile(slackPath(tid), os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(strconv.FormatInt(ns, 10))
	return errors.Join(err, f.Close())
}
