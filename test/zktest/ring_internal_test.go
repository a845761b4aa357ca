package zktest

import (
	"strings"
	"testing"

	"github.com/paddockzk/paddock/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ringCluster is a Cluster with peers and a fault net only: enough for
// PartitionRing's choice of links.
func ringCluster(n int) *Cluster {
	c := &Cluster{net: newFaultNet()}
	for i := range n {
		c.peers = append(c.peers, server.Peer{ID: string(rune('a' + i))})
	}
	return c
}

func TestPartitionRingCutsBeyondTheNeighbours(t *testing.T) {
	c := ringCluster(5)
	c.PartitionRing(0, 2, 4, 1, 3) // ring a-c-e-b-d
	neighbours := map[string]bool{"ac": true, "ce": true, "be": true, "bd": true, "ad": true}
	ids := "abcde"
	for i := range ids {
		for j := i + 1; j < len(ids); j++ {
			a, b := ids[i:i+1], ids[j:j+1]
			assert.Equal(t, !neighbours[a+b], c.net.blocked(a, b), "link %s-%s", a, b)
		}
	}

	three := ringCluster(3)
	three.PartitionRing()
	assert.Empty(t, three.net.cut, "a ring of three leaves every node a majority with all links")

	seven := ringCluster(7)
	seven.PartitionRing()
	for _, p := range seven.peers {
		kept := 0
		for _, q := range seven.peers {
			if p.ID != q.ID && !seven.net.blocked(p.ID, q.ID) {
				kept++
			}
		}
		assert.Equal(t, 4, kept, "node %s keeps two neighbours each side", p.ID)
	}
}

func TestLeaderMonitorReportsTwoLeadersInOneTerm(t *testing.T) {
	m := (&Cluster{}).MonitorLeaders()
	m.mu.Lock()
	m.leaders[3] = map[int]bool{0: true}
	m.leaders[4] = map[int]bool{1: true, 2: true}
	m.mu.Unlock()
	terms, err := m.Stop()
	require.Error(t, err)
	assert.Equal(t, 2, terms)
	assert.True(t, strings.Contains(err.Error(), "term 4: nodes [1 2]"), err.Error())

	ok := (&Cluster{}).MonitorLeaders()
	ok.mu.Lock()
	ok.leaders[7] = map[int]bool{2: true}
	ok.mu.Unlock()
	terms, err = ok.Stop()
	require.NoError(t, err)
	assert.Equal(t, 1, terms)
}
