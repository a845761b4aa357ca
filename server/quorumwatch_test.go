package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// quorumWatch drops a node's clients at its second check in a row
// without a leader, once per spell; a leader that came and went between
// two checks starts a new spell.
func TestLeaderlessSpellDropsAtTheSecondCheckWithoutALeader(t *testing.T) {
	const beat = 200 * time.Millisecond
	t0 := time.Unix(1000, 0)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * beat) }
	var l leaderlessSpell
	check := func(n int, leader bool, changes uint64) (bool, bool) {
		return l.check(at(n), leader, changes, beat/2)
	}

	saw, drop := check(0, false, 0)
	require.False(t, saw)
	require.False(t, drop, "the first check without a leader")
	_, drop = check(1, false, 0)
	require.True(t, drop, "the second")
	_, drop = check(2, false, 0)
	require.False(t, drop, "once per spell")

	saw, drop = check(3, true, 1)
	require.True(t, saw)
	require.False(t, drop)
	_, drop = check(4, false, 2)
	require.False(t, drop, "the leader was lost since the last check: a new spell")
	_, drop = check(5, false, 2)
	require.True(t, drop)

	// A leader elected and lost between two checks (a cluster that
	// started, then a removed leader that handed over) ends the spell.
	_, drop = check(6, false, 4)
	require.False(t, drop)
	saw, drop = check(7, false, 6)
	require.True(t, saw, "a leader was known between the checks")
	require.False(t, drop, "the node had a leader a moment ago")
	_, drop = check(8, false, 6)
	require.True(t, drop)
}
