package bench

import (
	"time"

	"github.com/paddockzk/paddock/internal/procstat"
)

// cpuMeter counts the CPU time of the servers' processes (Config.CPUPIDs)
// from a run's measure time to its stop: the same window for every server,
// so two servers' CPU per operation compares what each spent on the load,
// which their throughput on shared cores does not show on its own.
type cpuMeter struct {
	pids  []int
	first chan time.Duration // the sum at the measure time; -1 if unreadable
	done  chan struct{}
}

// meterCPU starts counting at measure (now if it has passed). It returns
// nil when no process is to be counted.
func (r *runner) meterCPU(measure time.Time) *cpuMeter {
	if len(r.cfg.CPUPIDs) == 0 {
		return nil
	}
	m := &cpuMeter{pids: r.cfg.CPUPIDs, first: make(chan time.Duration, 1), done: make(chan struct{})}
	go func() {
		t := time.NewTimer(time.Until(measure))
		defer t.Stop()
		select {
		case <-t.C:
			m.first <- m.sum()
		case <-m.done: // stopped before its window opened
			m.first <- -1
		}
	}()
	return m
}

// sum is the processes' CPU time now, or -1 if one cannot be read (it
// exited: its time would be lost).
func (m *cpuMeter) sum() time.Duration {
	var total time.Duration
	for _, pid := range m.pids {
		d, err := procstat.CPU(pid)
		if err != nil {
			return -1
		}
		total += d
	}
	return total
}

// stop ends the window and returns the CPU time spent in it, or -1 if it
// was not counted.
func (m *cpuMeter) stop() time.Duration {
	if m == nil {
		return -1
	}
	close(m.done)
	start := <-m.first
	end := m.sum()
	if start < 0 || end < start {
		return -1
	}
	return end - start
}

// setServerCPU records the servers' CPU time over the window and per
// operation.
func (r *Result) setServerCPU(cpu time.Duration) {
	if cpu < 0 || r.Ops <= 0 {
		return
	}
	r.ServerCPUSeconds = cpu.Seconds()
	r.ServerCPUPerOp = float64(cpu.Microseconds()) / float64(r.Ops)
}
