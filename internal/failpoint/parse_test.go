package failpoint

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	got, err := parse(" before-apply=exit@3, after-store-logs=exit ,")
	require.NoError(t, err)
	require.Len(t, got, 2)
	require.EqualValues(t, 3, got[BeforeApply])
	require.EqualValues(t, 1, got[AfterStoreLogs])

	none, err := parse("")
	require.NoError(t, err)
	require.Empty(t, none)

	for _, bad := range []string{
		"no-such-point=exit",  // unknown name
		"before-apply",        // no action
		"before-apply=crash",  // unknown action
		"before-apply=exit@0", // hits count from 1
		"before-apply=exit@x",
	} {
		_, err := parse(bad)
		require.Error(t, err, bad)
	}
}

func TestEveryNameIsDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names {
		require.False(t, seen[n], n)
		seen[n] = true
	}
	require.Len(t, seen, 8)
}
