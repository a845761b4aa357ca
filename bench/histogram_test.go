package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// exactPercentile is the nearest-rank percentile of sorted samples.
func exactPercentile(sorted []time.Duration, q float64) time.Duration {
	rank := int(math.Ceil(q * float64(len(sorted))))
	rank = max(1, min(rank, len(sorted)))
	return sorted[rank-1]
}

func TestBucketsCoverEveryValue(t *testing.T) {
	values := []int64{0, 1, 2, 127, 128, 255, 256, 257, 511, 512, 1000, 1023, 1024, 1 << 20, 1<<20 + 1,
		int64(time.Second), int64(time.Hour), math.MaxInt64 - 1, math.MaxInt64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		values = append(values, rng.Int64N(1<<uint(rng.IntN(62)+1)))
	}
	prev := -1
	slices.Sort(values)
	for _, v := range values {
		i := bucketOf(v)
		if i >= maxIndex {
			t.Fatalf("bucketOf(%d) = %d, beyond %d", v, i, maxIndex)
		}
		lo, hi := bucketRange(i)
		if v < lo || v > hi {
			t.Fatalf("value %d in bucket %d = [%d, %d]", v, i, lo, hi)
		}
		if i < prev {
			t.Fatalf("bucketOf not monotonic at %d", v)
		}
		prev = i
		if v >= subFull && float64(hi-lo+1)/float64(lo) > 1.0/subHalf+1e-12 {
			t.Fatalf("bucket %d [%d, %d] wider than 1/%d of its values", i, lo, hi, subHalf)
		}
	}
}

func TestPercentilesWithinOnePercent(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	dists := map[string]func() time.Duration{
		"uniform 0-10ms": func() time.Duration { return time.Duration(rng.Int64N(int64(10 * time.Millisecond))) },
		"exponential 1ms": func() time.Duration {
			return time.Duration(rng.ExpFloat64() * float64(time.Millisecond))
		},
		"lognormal": func() time.Duration {
			return time.Duration(math.Exp(rng.NormFloat64()*1.5) * float64(500*time.Microsecond))
		},
		"tiny": func() time.Duration { return time.Duration(rng.IntN(300)) },
	}
	for name, gen := range dists {
		t.Run(name, func(t *testing.T) {
			var h Histogram
			samples := make([]time.Duration, 100000)
			for i := range samples {
				samples[i] = gen()
				h.Record(samples[i])
			}
			slices.Sort(samples)
			for _, q := range []float64{0.001, 0.5, 0.9, 0.99, 0.999, 1} {
				got, want := h.Percentile(q), exactPercentile(samples, q)
				if diff := math.Abs(float64(got - want)); diff > 0.01*float64(want)+1 {
					t.Errorf("p%v = %v, exact %v (off by %.2f%%)", q*100, got, want, 100*diff/float64(want))
				}
			}
			if h.Min() != samples[0] || h.Max() != samples[len(samples)-1] {
				t.Errorf("min/max = %v/%v, want %v/%v", h.Min(), h.Max(), samples[0], samples[len(samples)-1])
			}
			var sum float64
			for _, s := range samples {
				sum += float64(s)
			}
			if mean := time.Duration(sum / float64(len(samples))); absDur(h.Mean()-mean) > time.Nanosecond {
				t.Errorf("mean = %v, want %v", h.Mean(), mean)
			}
		})
	}
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

func TestPercentileSmallSets(t *testing.T) {
	var h Histogram
	if h.Percentile(0.99) != 0 || h.Count() != 0 || h.Mean() != 0 {
		t.Fatal("empty histogram should report zeros")
	}
	for _, ms := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} {
		h.Record(time.Duration(ms) * time.Millisecond)
	}
	check := func(q float64, want time.Duration) {
		t.Helper()
		got := h.Percentile(q)
		if math.Abs(float64(got-want)) > 0.01*float64(want) {
			t.Errorf("p%v = %v, want %v", q*100, got, want)
		}
	}
	check(0.5, 5*time.Millisecond)
	check(0.9, 9*time.Millisecond)
	check(0.99, 10*time.Millisecond)
	check(0.999, 10*time.Millisecond)
	check(0, time.Millisecond) // rank is at least 1
	h.Record(-time.Second)     // clamped to 0
	if h.Min() != 0 {
		t.Errorf("negative sample should count as 0, min = %v", h.Min())
	}
}

func TestMergeEqualsRecordingTogether(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var a, b, both Histogram
	for i := range 5000 {
		d := time.Duration(rng.Int64N(int64(time.Second)))
		if i%3 == 0 {
			a.Record(d)
		} else {
			b.Record(d)
		}
		both.Record(d)
	}
	a.Merge(&b)
	a.Merge(nil)
	a.Merge(&Histogram{})
	if a.Count() != both.Count() || a.Min() != both.Min() || a.Max() != both.Max() {
		t.Fatalf("merged count/min/max %d/%v/%v, want %d/%v/%v", a.Count(), a.Min(), a.Max(),
			both.Count(), both.Min(), both.Max())
	}
	for _, q := range []float64{0.5, 0.99, 0.999} {
		if a.Percentile(q) != both.Percentile(q) {
			t.Errorf("p%v merged %v, together %v", q*100, a.Percentile(q), both.Percentile(q))
		}
	}
	s := a.Summary()
	if s.Count != 5000 || s.P50 <= 0 || s.P50 > s.P99 || s.P99 > s.P999 || s.P999 > s.Max {
		t.Errorf("summary not ordered: %+v", s)
	}
}
