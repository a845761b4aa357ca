package sysmon

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const sysNanosleep = "35" // x86-64; the test's signature check is amd64-only

// sleepRequest returns the duration thread tid asked nanosleep for, if it
// is sleeping in nanosleep now.
func sleepRequest(t *testing.T, mem *os.File, tid int) (time.Duration, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
	require.NoError(t, err)
	f := strings.Fields(string(b))
	if len(f) < 2 || f[0] != sysNanosleep {
		return 0, false
	}
	addr, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	require.NoError(t, err)
	var ts [16]byte
	if _, err := mem.ReadAt(ts[:], int64(addr)); err != nil {
		return 0, false
	}
	sec, nsec := binary.LittleEndian.Uint64(ts[:8]), binary.LittleEndian.Uint64(ts[8:])
	return time.Duration(sec)*time.Second + time.Duration(nsec), true
}

// The thread found is sysmon by what it does: while a goroutine keeps a P
// busy it sleeps in nanosleep, for 20 µs doubled up to 10 ms each time,
// which no other thread of a Go program does.
func TestThreadIsSysmon(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the nanosleep syscall number checked is amd64's")
	}
	tid, err := Thread()
	require.NoError(t, err)
	require.NotEqual(t, os.Getpid(), tid)
	mem, err := os.Open("/proc/self/mem")
	require.NoError(t, err)
	defer mem.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // keep a P busy, so that sysmon polls instead of sleeping deeply
		for ctx.Err() == nil {
		}
	}()
	seen := 0
	deadline := time.Now().Add(5 * time.Second)
	for seen < 5 && time.Now().Before(deadline) {
		if d, ok := sleepRequest(t, mem, tid); ok {
			require.Truef(t, d >= 20*time.Microsecond && d <= 10*time.Millisecond && d%(20*time.Microsecond) == 0,
				"thread %d sleeps %v: not sysmon's 20 µs doubled up to 10 ms", tid, d)
			seen++
		}
		time.Sleep(time.Millisecond)
	}
	require.Equalf(t, 5, seen, "thread %d was not seen sleeping in nanosleep while a P was busy", tid)
}

// relaxOrSkip relaxes sysmon for the test and undoes it afterwards; it
// skips the test without CAP_SYS_NICE.
func relaxOrSkip(t *testing.T, slack time.Duration) *Relaxed {
	r, err := Relax(slack)
	if errors.Is(err, os.ErrPermission) {
		t.Skipf("setting another thread's timer slack needs CAP_SYS_NICE (root): %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, writeSlack(r.tid, r.base)) })
	return r
}

func TestRelaxSetsSysmonSlackOnly(t *testing.T) {
	r := relaxOrSkip(t, 700*time.Microsecond)
	tid, err := Thread()
	require.NoError(t, err)
	require.Equal(t, tid, r.Thread())
	got, err := readSlack(tid)
	require.NoError(t, err)
	require.Equal(t, int64(700*time.Microsecond), got)
	main, err := readSlack(os.Getpid())
	require.NoError(t, err)
	require.Equal(t, r.base, main, "the main thread keeps its slack")
	require.NotEqual(t, r.slack, main)
}

func TestRelaxRefusesNonPositive(t *testing.T) {
	_, err := Relax(0)
	require.Error(t, err)
}

// A thread that inherited sysmon's slack (as one sysmon starts does) gets
// the process's back; sysmon keeps its own.
func TestKeepRestoresInheritedSlack(t *testing.T) {
	r := relaxOrSkip(t, 900*time.Microsecond)
	tids := make(chan int)
	release := make(chan struct{})
	go func() {
		runtime.LockOSThread() // a thread of its own, until it exits with the goroutine
		tids <- syscall.Gettid()
		<-release
	}()
	other := <-tids
	defer close(release)
	require.NoError(t, writeSlack(other, r.slack)) // as if sysmon had started it

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { r.Keep(ctx, 10*time.Millisecond); close(done) }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := readSlack(other)
		require.NoError(t, err)
		if s == r.base {
			break
		}
		require.Truef(t, time.Now().Before(deadline), "thread %d still has slack %d, want %d", other, s, r.base)
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	s, err := readSlack(r.Thread())
	require.NoError(t, err)
	require.Equal(t, r.slack, s, "sysmon keeps its slack")
}
