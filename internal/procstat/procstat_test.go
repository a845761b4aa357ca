package procstat

import (
	"os"
	"runtime"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	line := "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 130 0 0 20 0 50 0 123 0 0"
	d, err := ParseCPU(line)
	if err != nil || d != 3800*time.Millisecond {
		t.Errorf("ParseCPU = %v, %v; want 3.8s", d, err)
	}
	for _, bad := range []string{"garbage", "1 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 10 x 0"} {
		if _, err := ParseCPU(bad); err == nil {
			t.Errorf("no error for %q", bad)
		}
	}
}

// This process's own CPU time grows while it spins.
func TestCPUOfThisProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/stat is Linux's")
	}
	before, err := CPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if now, err := CPU(os.Getpid()); err != nil {
			t.Fatal(err)
		} else if now > before {
			return
		}
	}
	t.Fatal("CPU time did not grow over 10 s of spinning")
}
