package zktest

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"
)

// leaderSampleInterval is how often a LeaderMonitor reads every node's
// Raft state.
const leaderSampleInterval = 2 * time.Millisecond

// LeaderMonitor watches a cluster for two leaders in one Raft term, the
// election safety property every other guarantee rests on. It samples
// each running node's term and state (Raft's Stats) every
// leaderSampleInterval; a node counts as the leader of term T when two
// reads in a row, one just after the other, both found it leading in T
// (a node cannot lose and regain leadership within one term, so it led
// in T between them). Sampling can miss a short-lived leader, never
// invent one.
type LeaderMonitor struct {
	nodes   []*Server // the cluster's nodes when the monitor started
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	leaders map[uint64]map[int]bool // term -> node indexes seen leading in it
}

// MonitorLeaders starts a LeaderMonitor on the cluster's nodes (not on
// nodes added later); call Stop to end it and read its verdict.
func (c *Cluster) MonitorLeaders() *LeaderMonitor {
	m := &LeaderMonitor{nodes: append([]*Server(nil), c.nodes...), stop: make(chan struct{}), done: make(chan struct{}),
		leaders: make(map[uint64]map[int]bool)}
	go m.run()
	return m
}

func (m *LeaderMonitor) run() {
	defer close(m.done)
	tick := time.NewTicker(leaderSampleInterval)
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
		}
		for i, n := range m.nodes {
			if term, ok := leadingTerm(n); ok {
				m.mu.Lock()
				if m.leaders[term] == nil {
					m.leaders[term] = make(map[int]bool)
				}
				m.leaders[term][i] = true
				m.mu.Unlock()
			}
		}
	}
}

// leadingTerm reports the term node n leads in, if two reads in a row
// find it leading in the same term.
func leadingTerm(n *Server) (uint64, bool) {
	srv := n.running()
	if srv == nil {
		return 0, false
	}
	read := func() (uint64, bool) {
		st := srv.RaftStats()
		term, err := strconv.ParseUint(st["term"], 10, 64)
		return term, err == nil && st["state"] == "Leader"
	}
	t1, ok1 := read()
	t2, ok2 := read()
	return t1, ok1 && ok2 && t1 == t2
}

// Stop ends the monitor and returns the number of terms in which it saw a
// leader, and an error naming every term in which it saw more than one.
func (m *LeaderMonitor) Stop() (terms int, err error) {
	select {
	case <-m.stop:
	default:
		close(m.stop)
	}
	<-m.done
	m.mu.Lock()
	defer m.mu.Unlock()
	var bad []string
	for term, nodes := range m.leaders {
		if len(nodes) > 1 {
			var ids []int
			for i := range nodes {
				ids = append(ids, i)
			}
			sort.Ints(ids)
			bad = append(bad, fmt.Sprintf("term %d: nodes %v", term, ids))
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return len(m.leaders), fmt.Errorf("zktest: two leaders in one term: %v", bad)
	}
	return len(m.leaders), nil
}
