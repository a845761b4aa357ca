package server

import (
	"fmt"
	"testing"
)

func TestGCPercentFor(t *testing.T) {
	tune := GCTuning{MinHeadroom: 64 << 20, Percent: 25}
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, maxGCPercent},
		{1 << 10, maxGCPercent}, // nearly empty: capped
		{16 << 20, 400},         // 64 MiB of headroom over 16 MiB live
		{256 << 20, 25},         // 64 MiB is exactly 25%
		{1 << 30, 25},           // large trees: 25% of the live heap
		{128 << 20, 50},         // in between: the byte floor
	} {
		if got := gcPercentFor(tc.live, tune); got != tc.want {
			t.Errorf("gcPercentFor(%d) = %d, want %d", tc.live, got, tc.want)
		}
	}
}

func TestIdleTracker(t *testing.T) {
	tr := idleTracker{threshold: 10}
	var total uint64
	var got []bool
	// First sample (no interval yet), idle, busy, busy, idle, idle, busy, idle.
	for _, alloc := range []uint64{100, 1, 50, 20, 2, 0, 10, 9} {
		total += alloc
		got = append(got, tr.fellIdle(total))
	}
	want := []bool{false, false, false, false, true, false, false, true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fellIdle = %v, want %v", got, want)
	}
	// With a gap of 3 intervals: the first report comes at once, a burst
	// right after a report waits.
	gap := idleTracker{threshold: 10, minGap: 3}
	got = got[:0]
	total = 0
	for _, alloc := range []uint64{0, 50, 0, 50, 0, 0, 50, 0, 0} {
		total += alloc
		got = append(got, gap.fellIdle(total))
	}
	want = []bool{false, false, true, false, false, true, false, false, true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("with a gap: fellIdle = %v, want %v", got, want)
	}
	early := idleTracker{threshold: 10, minGap: 5}
	if early.fellIdle(0) || early.fellIdle(50) || !early.fellIdle(50) {
		t.Error("the first idle interval after start-up must report even within minGap")
	}
	// With after = 3: a lull of two idle intervals is not rest; the third
	// idle interval in a row reports, once.
	rest := idleTracker{threshold: 10, after: 3}
	got = got[:0]
	total = 0
	for _, alloc := range []uint64{0, 50, 0, 0, 50, 0, 0, 0, 0, 0} {
		total += alloc
		got = append(got, rest.fellIdle(total))
	}
	want = []bool{false, false, false, false, false, false, false, true, false, false}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after 3 idle intervals: fellIdle = %v, want %v", got, want)
	}
	off := idleTracker{}
	for _, v := range []uint64{0, 100, 100, 100} {
		if off.fellIdle(v) {
			t.Error("threshold 0 never reports idle")
		}
	}
}
