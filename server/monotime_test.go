package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestMonoTimeRoundTrips(t *testing.T) {
	before := time.Now()
	m := monoNow()
	require.NotZero(t, m)
	at := monoTime(m)
	require.False(t, at.Before(before.Add(-time.Millisecond)), "monoTime(monoNow()) is before the call")
	require.False(t, at.After(time.Now()), "monoTime(monoNow()) is in the future")
	require.Contains(t, at.String(), "m=", "monoTime's result has no monotonic reading")
}

// The server measures no duration from a wall-clock timestamp: a
// timestamp it keeps as a number is a monoNow reading (monotime.go), so
// a wall-clock step expires nothing and stalls nothing (the test plan's
// clock jumps, F9). Wall time is only for node times and TTLs, in
// milliseconds (UnixMilli), as in ZooKeeper.
func TestNoDurationFromWallClockTimestamps(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, _ := sel.X.(*ast.Ident)
			switch {
			case sel.Sel.Name == "UnixNano",
				sel.Sel.Name == "Unix" && pkg != nil && pkg.Name == "time":
				t.Errorf("%s: %s: a wall-clock timestamp; use monoNow/monoTime", fset.Position(call.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
}
