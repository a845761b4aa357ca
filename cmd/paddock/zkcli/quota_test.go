package zkcli

import (
	"testing"

	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

func TestStatsTrack(t *testing.T) {
	for in, want := range map[string]string{
		"":                 "count=-1,bytes=-1",
		"count=5,bytes=-1": "count=5,bytes=-1",
		"bytes=7;count=2":  "count=2,bytes=7",
		"count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=1": "count=5,bytes=-1=;byteHardLimit=-1;countHardLimit=1",
		"countHardLimit=3,,": "count=-1,bytes=-1=;countHardLimit=3",
	} {
		st, err := parseStatsTrack(in)
		require.NoError(t, err, in)
		require.Equal(t, want, st.String(), in)
	}
	for _, in := range []string{"count", "count=x", ",count=1"} {
		_, err := parseStatsTrack(in)
		require.Error(t, err, in)
	}
}

// The quota commands against Paddock; their output matches zkCli's
// (TestMatchesZkCli), and the messages zkCli prefixes with a Java
// exception name come without it.
func TestQuotaCommands(t *testing.T) {
	diag := &syncBuffer{}
	f := newFixture(t, func(c *Config) { c.Stderr = diag })
	f.create("/a", "")
	f.create("/a/b", "xyz")
	f.fail("setquota /a", "Missing required option: [-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]")
	f.fail("setquota -n 1 -b 2 /a", "The option 'b' was specified but an option from this group has already been selected: 'n'")
	f.fail("setquota -n 1", setQuotaUsage)
	f.fail("setquota -n -3 /a", "the num quota must be greater than zero")
	f.fail("setquota -N 3000000000 /a", "NumberFormatException happens when parsing the option value")
	f.fail("delquota -N -B /a", "The option 'B' was specified but an option from this group has already been selected: 'N'")

	f.expect("setquota -N 1 /a", "[Warning]: the count quota you create is less than the existing count:2\n")
	f.expect("setquota -b 2 /a", "[Warning]: the count quota you create is less than the existing count:2\n"+
		"[Warning]: the bytes quota you create is less than the existing bytes:3\n")
	f.expect("listquota /a", "Output quota for /a count=-1,bytes=2=;byteHardLimit=-1;countHardLimit=1\nOutput stat for /a count=2,bytes=3\n")
	require.Equal(t, "absolute path is /zookeeper/quota/a/zookeeper_limits\n", diag.String())
	f.expect("get /zookeeper/quota/a/zookeeper_limits", "count=-1,bytes=2=;byteHardLimit=-1;countHardLimit=1\n")

	f.expect("delquota -N /a", "")
	f.expect("get /zookeeper/quota/a/zookeeper_limits", "count=-1,bytes=2=;byteHardLimit=-1;countHardLimit=-1\n")
	f.expect("delquota /a", "")
	f.fail("ls /zookeeper/quota/a", "Node does not exist: /zookeeper/quota/a")
	f.expect("delquota /a", "Quota does not exist for /a\n")
	f.fail("listquota /a", "quota for /a does not exist.")
}

// A write refused by a quota is reported as zkCli's CliWrapperException
// reports QuotaExceededException.
func TestQuotaExceededMessage(t *testing.T) {
	f := newFixtureOn(t, zktest.Start(t, zktest.WithEnforceQuota()))
	f.create("/a", "")
	f.ok("setquota -N 1 /a")
	// Paddock's server enforces hard limits separated by commas only, not
	// the ";countHardLimit=1" setquota writes.
	f.ok("set /zookeeper/quota/a/zookeeper_limits count=-1,bytes=-1,countHardLimit=1,byteHardLimit=3")
	f.fail("create /a/c", "Quota has exceeded : /a/c")
	f.fail("set /a abcd", "Quota has exceeded : /a")
}
