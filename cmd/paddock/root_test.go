package main

import (
	"strings"
	"testing"
)

// runRoot runs the paddock command tree in-process with args and returns
// everything it printed.
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out strings.Builder
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}
