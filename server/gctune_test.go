package server

import "testing"

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
