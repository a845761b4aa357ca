package diff_test

import (
	"regexp"
	"slices"
	"testing"
)

// TestFourLetterWordsCountAsPackets: a four-letter word is a packet
// received (counted before its output is made) and its output a packet
// sent (counted after), in srvr's and mntr's server-wide counts, as
// ZooKeeper's checkFourLetterWord and sendBufferSync count them (Paddock
// counted neither, so srvr after srst said Received: 0, Sent: 0). Not
// parallel: srst resets the shared oracle's counts.
func TestFourLetterWordsCountAsPackets(t *testing.T) {
	counts := regexp.MustCompile(`(?m)^(Received: \d+|Sent: \d+|zk_packets_(received|sent)\t\d+)$`)
	sessBoth(t, func(t *testing.T, addr string, _ bool, note func(string, ...any)) {
		note("srst: %q", fourLetter(t, addr, "srst"))
		for _, w := range []string{"srvr", "srvr", "stat", "mntr"} {
			// sorted: mntr's keys come in ZooKeeper's hash order
			note("%s: %q", w, slices.Sorted(slices.Values(counts.FindAllString(fourLetter(t, addr, w), -1))))
		}
	})
}
