package bench

import (
	"math"
	"math/bits"
	"time"
)

// Histogram records durations in log-linear buckets, as HdrHistogram does
// with 2 significant digits: values below 256 ns are exact, larger ones
// fall in buckets 1/128 of their power of two wide, so any percentile is
// within 0.8% of the true sample. It is not safe for concurrent use: give
// every client its own and Merge them.
type Histogram struct {
	counts   []uint64
	count    uint64
	sum      float64 // ns
	min, max int64   // ns
}

const (
	subBits  = 7
	subHalf  = 1 << subBits       // 128 sub-buckets per power of two
	subFull  = 1 << (subBits + 1) // values below 256 are exact
	maxIndex = subFull + (63-subBits)*subHalf
)

// bucketOf returns the bucket index of v (ns, >= 0).
func bucketOf(v int64) int {
	if v < subFull {
		return int(v)
	}
	shift := bits.Len64(uint64(v)) - (subBits + 1)
	return subFull + (shift-1)*subHalf + int(v>>uint(shift)) - subHalf
}

// bucketRange returns the lowest and highest value bucket i holds.
func bucketRange(i int) (lo, hi int64) {
	if i < subFull {
		return int64(i), int64(i)
	}
	shift := uint((i-subFull)/subHalf + 1)
	m := int64((i-subFull)%subHalf + subHalf)
	return m << shift, (m+1)<<shift - 1
}

// Record adds one sample; negative durations count as 0.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 0 {
		v = 0
	}
	i := bucketOf(v)
	if i >= len(h.counts) {
		n := 2 * len(h.counts)
		if n <= i {
			n = i + 1
		}
		if n > maxIndex {
			n = maxIndex
		}
		c := make([]uint64, n)
		copy(c, h.counts)
		h.counts = c
	}
	h.counts[i]++
	if h.count == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.count++
	h.sum += float64(v)
}

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o == nil || o.count == 0 {
		return
	}
	if len(o.counts) > len(h.counts) {
		c := make([]uint64, len(o.counts))
		copy(c, h.counts)
		h.counts = c
	}
	for i, n := range o.counts {
		h.counts[i] += n
	}
	if h.count == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.count += o.count
	h.sum += o.sum
}

// Count is the number of samples.
func (h *Histogram) Count() int64 { return int64(h.count) }

// Min and Max are exact.
func (h *Histogram) Min() time.Duration { return time.Duration(h.min) }

// Max is the largest sample.
func (h *Histogram) Max() time.Duration { return time.Duration(h.max) }

// Mean is exact (up to float rounding).
func (h *Histogram) Mean() time.Duration {
	if h.count == 0 {
		return 0
	}
	return time.Duration(h.sum / float64(h.count))
}

// Percentile returns the q-quantile (0 < q <= 1) with the nearest-rank
// definition: the smallest sample that at least q of the samples do not
// exceed, reported as the middle of its bucket (clamped to [Min, Max]).
func (h *Histogram) Percentile(q float64) time.Duration {
	if h.count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.count)))
	if rank < 1 {
		rank = 1
	}
	if rank > h.count {
		rank = h.count
	}
	var seen uint64
	for i, n := range h.counts {
		seen += n
		if seen >= rank {
			lo, hi := bucketRange(i)
			v := lo + (hi-lo)/2
			if v < h.min {
				v = h.min
			}
			if v > h.max {
				v = h.max
			}
			return time.Duration(v)
		}
	}
	return time.Duration(h.max)
}

// Summary is the latency part of a Result, in milliseconds.
func (h *Histogram) Summary() Latency {
	return Latency{
		Count: h.Count(),
		Min:   ms(h.Min()),
		Mean:  ms(h.Mean()),
		P50:   ms(h.Percentile(0.50)),
		P90:   ms(h.Percentile(0.90)),
		P99:   ms(h.Percentile(0.99)),
		P999:  ms(h.Percentile(0.999)),
		Max:   ms(h.Max()),
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
