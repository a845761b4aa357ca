// Command paddock is Paddock's single binary: a ZooKeeper-compatible
// server and the tools around it.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	if err := newRootCmd().Execute(); err != nil {
		os.Exit(exitCode(err))
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "paddock",
		Short:         "A ZooKeeper-compatible coordination service in one Go binary",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newServerCmd(), newVersionCmd(), newClusterCmd(), newBenchCmd(), newSnapshotCmd(), newImportZKCmd(), newCLICmd(), newLockCmd(), newElectCmd(), newHerdCmd())
	return root
}

// exitError carries a process exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func exitCode(err error) int {
	if e, ok := err.(exitError); ok {
		return e.code
	}
	return 1
}
