package diff_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/paddockzk/paddock/test/oracle"
)

// zkScript starts and stops an oracle (relative to this package's dir).
const zkScript = "../oracle/zk.sh"

// TestMain gives the suite a ZooKeeper of its own. test/run.sh starts one
// oracle for every package, and `go test ./...` runs packages side by
// side, so other packages' sessions, watches and packets would land in
// this suite's server-wide observations: session ids that follow each
// other, srvr's packet counts after srst, wchs and mntr's watch counts.
// When $ZK_ORACLE names one standalone server and zk.sh can start
// another, the suite runs against a private one, started like the
// shared one; DIFF_SHARED_ORACLE=1 keeps $ZK_ORACLE as it is.
func TestMain(m *testing.M) {
	stop, err := privateOracle()
	if err != nil {
		fmt.Fprintf(os.Stderr, "test/diff: no private ZooKeeper oracle (%v); using the shared one at $%s\n", err, oracle.Env)
	}
	code := m.Run()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// privateOracle starts a ZooKeeper with zk.sh and points $ZK_ORACLE at it,
// returning the function that stops it; (nil, nil) when the suite keeps
// $ZK_ORACLE (unset, an ensemble, or DIFF_SHARED_ORACLE=1).
func privateOracle() (func(), error) {
	shared := os.Getenv(oracle.Env)
	if shared == "" || strings.Contains(shared, ",") || os.Getenv("DIFF_SHARED_ORACLE") == "1" {
		return nil, nil
	}
	dir, err := os.MkdirTemp("", "diff-oracle-")
	if err != nil {
		return nil, err
	}
	stop := func() {
		_ = exec.Command(zkScript, "stop", dir).Run()
		_ = os.RemoveAll(dir)
	}
	cmd := exec.Command(zkScript, "start", dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		stop()
		return nil, fmt.Errorf("%s start: %w", zkScript, err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if addr, ok := strings.CutPrefix(sc.Text(), oracle.Env+"="); ok {
			if err := os.Setenv(oracle.Env, addr); err != nil {
				stop()
				return nil, err
			}
			return stop, nil
		}
	}
	stop()
	return nil, fmt.Errorf("%s start printed no %s line", zkScript, oracle.Env)
}
