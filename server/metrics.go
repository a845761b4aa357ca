package server

import (
	"sync/atomic"
	"time"

	"github.com/paddockzk/paddock/internal/wire"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// DefaultFanoutLogThreshold is the fan-out (watchers notified by one
// change) above which the server logs the change, at most once per
// fanoutLogInterval.
const (
	DefaultFanoutLogThreshold = 100
	fanoutLogInterval         = 10 * time.Second
)

// metrics are one server's Prometheus metrics, on a registry of its own so
// that servers in one process (tests) do not collide.
type metrics struct {
	reg           *prometheus.Registry
	notifications *prometheus.CounterVec
	fanout        prometheus.Histogram
	requests      map[wire.OpCode]prometheus.Counter
	otherRequests prometheus.Counter
	commit        prometheus.Histogram
	writesRefused prometheus.Counter
	lastFanoutLog atomic.Int64
}

var meteredOps = []wire.OpCode{wire.OpCreate, wire.OpDelete, wire.OpExists, wire.OpGetData, wire.OpSetData,
	wire.OpGetACL, wire.OpSetACL, wire.OpGetChildren, wire.OpSync, wire.OpPing, wire.OpGetChildren2,
	wire.OpCheck, wire.OpMulti, wire.OpCreate2, wire.OpReconfig, wire.OpCheckWatches, wire.OpRemoveWatches,
	wire.OpCreateContainer, wire.OpCreateTTL, wire.OpMultiRead, wire.OpAuth, wire.OpSetWatches,
	wire.OpSASL, wire.OpGetEphemerals, wire.OpGetAllChildrenNumber, wire.OpSetWatches2, wire.OpAddWatch,
	wire.OpWhoAmI, wire.OpCloseSession}

func newMetrics(s *Server) *metrics {
	m := &metrics{reg: prometheus.NewRegistry(), requests: make(map[wire.OpCode]prometheus.Counter)}
	m.notifications = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_watch_notifications_total",
		Help: "Watch notifications sent to clients, by event type."}, []string{"type"})
	m.fanout = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "paddock_watch_fanout",
		Help:    "Watchers notified per triggering change: the herd effect as a number.",
		Buckets: []float64{0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000}})
	reqs := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "paddock_requests_total",
		Help: "Client requests received, by opcode."}, []string{"op"})
	for _, op := range meteredOps {
		m.requests[op] = reqs.WithLabelValues(op.String())
	}
	m.otherRequests = reqs.WithLabelValues("unknown")
	m.commit = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "paddock_raft_commit_seconds",
		Help: "Time from proposing a write to its local apply.", Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)})
	m.writesRefused = prometheus.NewCounter(prometheus.CounterOpts{Name: "paddock_writes_refused_total",
		Help: "Client writes Raft did not take within the propose timeout; each closed its connection."})
	gauge := func(name, help string, f func() float64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f)
	}
	watchGauge := func(kind string, f func() int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "paddock_watches", Help: "Registered watches by type.",
			ConstLabels: prometheus.Labels{"type": kind}}, func() float64 { return float64(f()) })
	}
	m.reg.MustRegister(m.notifications, m.fanout, reqs, m.commit, m.writesRefused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		gauge("paddock_outstanding_requests", "Requests received and not yet answered.", func() float64 { return float64(s.outstanding()) }),
		gauge("paddock_sessions", "Live sessions.", func() float64 { return float64(s.fsm.Stats().Sessions) }),
		gauge("paddock_znodes", "Znodes in the tree.", func() float64 { return float64(s.fsm.Stats().Nodes) }),
		gauge("paddock_connections", "Client connections.", func() float64 { return float64(s.connCount()) }),
		gauge("paddock_last_zxid", "Last applied zxid (Raft index).", func() float64 { return float64(s.fsm.LastZxid()) }),
		watchGauge("data", func() int { return s.watches.Stats().DataWatches }),
		watchGauge("child", func() int { return s.watches.Stats().ChildWatches }),
		watchGauge("persistent", func() int { return s.watches.Stats().PersistentWatches }),
		watchGauge("persistent_recursive", func() int { return s.watches.Stats().RecursiveWatches }),
	)
	return m
}

func (m *metrics) request(op wire.OpCode) {
	if c, ok := m.requests[op]; ok {
		c.Inc()
		return
	}
	m.otherRequests.Inc()
}

// onImmediate is the watch registry's hook for the events a setWatches
// replay sends at once: counted as notifications (zk_notifications_sent
// counts them too), not as a fan-out.
func (s *Server) onImmediate(typ wire.EventType) {
	s.metrics.notifications.WithLabelValues(typ.String()).Inc()
}

// onFanout is the watch registry's per-trigger hook.
func (s *Server) onFanout(typ wire.EventType, path string, n int) {
	if n == 0 {
		return
	}
	s.metrics.notifications.WithLabelValues(typ.String()).Add(float64(n))
	s.metrics.fanout.Observe(float64(n))
	if n > s.cfg.FanoutLogThreshold && s.cfg.FanoutLogThreshold > 0 {
		now := monoNow()
		last := s.metrics.lastFanoutLog.Load()
		if (last == 0 || now-last > int64(fanoutLogInterval)) && s.metrics.lastFanoutLog.CompareAndSwap(last, now) {
			s.log.Warn("one change notified many watchers (herd effect)", "path", path, "event", typ.String(),
				"watchers", n, "threshold", s.cfg.FanoutLogThreshold)
		}
	}
}

// Registry returns the server's Prometheus registry.
func (s *Server) Registry() *prometheus.Registry { return s.metrics.reg }
