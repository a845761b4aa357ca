package watch

import (
	"fmt"
	"testing"

	"github.com/paddockzk/paddock/internal/wire"
)

// nopWatcher counts events without recording them.
type nopWatcher struct {
	sid int64
	n   int
}

func (w *nopWatcher) Notify(wire.WatcherEvent, int64) { w.n++ }
func (w *nopWatcher) SessionID() int64                { return w.sid }

func nops(n int) []*nopWatcher {
	ws := make([]*nopWatcher, n)
	for i := range ws {
		ws[i] = &nopWatcher{sid: int64(i + 1)}
	}
	return ws
}

// BenchmarkTrigger measures one Trigger fanning out to N watchers of one
// path. persistent: the watches stay (steady state of the fan-out itself);
// standard: one-shot watches, re-registered each iteration (the herd: N
// getData/exists re-registrations plus the trigger).
func BenchmarkTrigger(b *testing.B) {
	for _, n := range []int{1, 100, 10000} {
		b.Run(fmt.Sprintf("persistent/%d", n), func(b *testing.B) {
			m := New(Options{OnFanout: func(wire.EventType, string, int) {}})
			for _, w := range nops(n) {
				if err := m.AddPersistent("/lock/n1", w, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if got := m.Trigger(int64(i), "/lock/n1", wire.EventNodeDataChanged); got != n {
					b.Fatalf("notified %d, want %d", got, n)
				}
			}
		})
		b.Run(fmt.Sprintf("standard/%d", n), func(b *testing.B) {
			m := New()
			ws := nops(n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, w := range ws {
					_ = m.AddData("/lock/n1", w)
				}
				if got := m.Trigger(int64(i), "/lock/n1", wire.EventNodeDeleted); got != n {
					b.Fatalf("notified %d, want %d", got, n)
				}
			}
		})
	}
}

// BenchmarkTriggerFire measures one Trigger firing N one-shot watches
// alone: the re-registrations run with the timer stopped, so this is
// what the apply loop spends in the registry for a herd (collecting and
// dropping the watches), without delivery.
func BenchmarkTriggerFire(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			m := New(Options{Deliver: func(wire.WatcherEvent, int64, []Watcher) {}})
			ws := nops(n)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				for _, w := range ws {
					_ = m.AddData("/lock/n1", w)
				}
				b.StartTimer()
				if got := m.Trigger(int64(i), "/lock/n1", wire.EventNodeDataChanged); got != n {
					b.Fatalf("notified %d, want %d", got, n)
				}
			}
		})
	}
}

// BenchmarkTriggerNoWatchers measures a change nobody watches (the common
// case for most writes); it must not allocate. "recursive-elsewhere" pays
// for the ancestor walk that a recursive watch anywhere enables.
func BenchmarkTriggerNoWatchers(b *testing.B) {
	for _, recursive := range []bool{false, true} {
		name := "plain"
		if recursive {
			name = "recursive-elsewhere"
		}
		b.Run(name, func(b *testing.B) {
			m := New(Options{OnFanout: func(wire.EventType, string, int) {}})
			ws := nops(100)
			for i, w := range ws {
				_ = m.AddData(fmt.Sprintf("/other/%d", i), w)
			}
			if recursive {
				_ = m.AddPersistent("/elsewhere", ws[0], true)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Trigger(int64(i), "/app/locks/lock-0000000042", wire.EventNodeDeleted)
			}
		})
	}
}
