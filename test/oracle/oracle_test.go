package oracle

import (
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestServersSplitsOnCommas(t *testing.T) {
	t.Setenv(Env, " 127.0.0.1:2181, 127.0.0.1:2182,,127.0.0.1:2183 ")
	if got, want := Addr(t), "127.0.0.1:2181, 127.0.0.1:2182,,127.0.0.1:2183"; got != want {
		t.Errorf("Addr = %q, want %q", got, want)
	}
	want := []string{"127.0.0.1:2181", "127.0.0.1:2182", "127.0.0.1:2183"}
	if got := Servers(t); !reflect.DeepEqual(got, want) {
		t.Errorf("Servers = %q, want %q", got, want)
	}
}

func TestSkipsWithoutOracle(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(testing.TB)
		vals []string
	}{
		{"Addr", func(tb testing.TB) { Addr(tb) }, []string{"", " "}},
		{"Servers", func(tb testing.TB) { Servers(tb) }, []string{"", " ", ",", " , "}},
	} {
		name, call := tc.name, tc.call
		for _, val := range tc.vals {
			var sub *testing.T
			t.Run(name, func(t *testing.T) {
				sub = t
				t.Setenv(Env, val)
				call(t)
				t.Errorf("%s did not skip with %s=%q", name, Env, val)
			})
			if !sub.Skipped() {
				t.Errorf("%s with %s=%q: subtest not skipped", name, Env, val)
			}
		}
	}
}

// TestOracleServes checks that every server in $ZK_ORACLE answers the `srvr`
// four-letter word (zk.sh enables all of them).
func TestOracleServes(t *testing.T) {
	for _, s := range Servers(t) {
		conn, err := net.DialTimeout("tcp", s, 5*time.Second)
		if err != nil {
			t.Errorf("%s: %v", s, err)
			continue
		}
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.WriteString(conn, "srvr")
		var out []byte
		if err == nil {
			out, err = io.ReadAll(conn)
		}
		conn.Close()
		if err != nil {
			t.Errorf("%s: srvr: %v", s, err)
			continue
		}
		if !strings.Contains(string(out), "Mode: ") {
			t.Errorf("%s: srvr answered %q, want a Mode: line", s, out)
		}
		t.Logf("%s: %s", s, strings.SplitN(string(out), "\n", 2)[0])
	}
}
