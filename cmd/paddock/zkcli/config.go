package zkcli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf16"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/server"
)

// The config and reconfig commands, as zkCli's GetConfigCommand and
// ReconfigCommand.

const reconfigUsage = "reconfig [-s] [-v version] [[-file path] | [-members serverID=host:port1:port2;port3[,...]*]] | [-add serverId=host:port1:port2;port3[,...]]* [-remove serverId[,...]*]"

func (s *Shell) config(ctx context.Context, c *call) error {
	var data []byte
	var st *client.Stat
	var err error
	if c.has('w') {
		var ch <-chan client.Event
		if data, st, ch, err = c.conn.GetConfigW(ctx); err == nil {
			s.watchOneShot(c.sess, kindData, client.ConfigPath, ch)
		}
	} else {
		data, st, err = c.conn.GetConfig(ctx)
	}
	if err != nil {
		return cliError(err, client.ConfigPath)
	}
	if data == nil {
		data = []byte("null")
	}
	if c.has('c') {
		fmt.Fprintln(c.out, clientConfigStr(string(data)))
	} else {
		fmt.Fprintln(c.out, string(data))
	}
	if c.has('s') {
		s.writeStat(c.out, st)
	}
	return nil
}

func (s *Shell) reconfig(ctx context.Context, c *call) error {
	file, members, add, remove := c.hasWord("file"), c.hasWord("members"), c.hasWord("add"), c.hasWord("remove")
	if !file && !members && !add && !remove {
		return failf("%s", reconfigUsage)
	}
	version := client.AnyConfig
	if v, ok := c.flags['v']; ok {
		n, err := strconv.ParseInt(v, 16, 64)
		if err != nil {
			return failf("-v must be followed by a long (configuration version)")
		}
		version = n
	}
	if (file || members) && (add || remove) {
		return failf("Can't use -file or -members together with -add or -remove (mixing incremental and non-incremental modes is not allowed)")
	}
	if file && members {
		return failf("Can't use -file and -members together (conflicting non-incremental modes)")
	}
	var data []byte
	var st *client.Stat
	var err error
	switch {
	case file:
		var m string
		if m, err = membersFromFile(c.words["file"]); err != nil {
			return err
		}
		data, st, err = c.conn.Reconfig(ctx, []string{m}, version)
	case members:
		data, st, err = c.conn.Reconfig(ctx, []string{strings.ToLower(c.words["members"])}, version)
	default:
		var joining, leaving []string
		if add {
			joining = []string{strings.ToLower(c.words["add"])}
		}
		if remove {
			leaving = []string{strings.ToLower(c.words["remove"])}
		}
		data, st, err = c.conn.IncrementalReconfig(ctx, joining, leaving, version)
	}
	if err != nil {
		return cliError(err, "")
	}
	fmt.Fprintf(c.out, "Committed new configuration:\n%s\n", data)
	if c.has('s') {
		s.writeStat(c.out, st)
	}
	return nil
}

// membersFromFile reads a dynamic configuration file for reconfig -file:
// its server.N lines and version, one per line. zkCli also checks every
// server line (QuorumPeerConfig.parseDynamicConfig) and sends them
// normalized; here a malformed line is left for the server to refuse.
func membersFromFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		// Java's FileNotFoundException: "path (reason)", the reason as
		// strerror writes it; zkCli runs the path and it together.
		reason := err.Error()
		var errno syscall.Errno
		if errors.As(err, &errno) {
			reason = errno.Error()
			if reason != "" {
				reason = strings.ToUpper(reason[:1]) + reason[1:]
			}
		}
		var pe *fs.PathError
		if errors.As(err, &pe) {
			reason = fmt.Sprintf("%s (%s)", pe.Path, reason)
		}
		return "", failf("Error processing %s%s", path, reason)
	}
	type member struct {
		id   int64
		line string
	}
	var members []member
	byID := map[int64]int{}
	version := int64(0)
	for _, kv := range javaProperties(string(b)) {
		key, val := strings.TrimSpace(kv[0]), strings.TrimSpace(kv[1])
		switch {
		case key == "version":
			v, err := strconv.ParseInt(val, 16, 64)
			if err != nil {
				return "", failf("Error processing %sFor input string: \"%s\" under radix 16", path, val)
			}
			version = v
		case strings.HasPrefix(key, "server."):
			id, err := strconv.ParseInt(key[len("server."):], 10, 64)
			if err != nil {
				return "", failf("Error processing %sFor input string: \"%s\"", path, key[len("server."):])
			}
			m := member{id, fmt.Sprintf("server.%d=%s", id, val)}
			if i, ok := byID[id]; ok {
				members[i] = m
			} else {
				byID[id] = len(members)
				members = append(members, m)
			}
		case strings.HasPrefix(key, "group"), strings.HasPrefix(key, "weight"):
			return "", failf("Error processing %s: hierarchical quorums (group, weight) are not supported", path)
		default:
			return "", failf("Error processing %sUnrecognised parameter: %s", path, key)
		}
	}
	sort.Slice(members, func(i, j int) bool { return members[i].id < members[j].id })
	var lines []string
	for _, m := range members {
		lines = append(lines, m.line)
	}
	return strings.Join(append(lines, fmt.Sprintf("version=%x", version)), "\n"), nil
}

// clientConfigStr is ZooKeeper's ConfigUtils.getClientConfigStr, which
// config -c prints: the version, a space and the client addresses of the
// server lines, comma-separated, in the order Java's Properties (a
// ConcurrentHashMap) iterates them. A server line Java's QuorumServer
// refuses is skipped; one without a client address leaves an empty
// entry.
func clientConfigStr(data string) string {
	m := newJavaHashMap()
	for _, kv := range javaProperties(data) {
		m.put(kv[0], kv[1])
	}
	version := ""
	var b strings.Builder
	first := true
	for _, e := range m.entries() {
		key, val := strings.TrimSpace(e.key), strings.TrimSpace(e.val)
		if key == "version" {
			version = val
		}
		if !strings.HasPrefix(key, "server.") {
			continue
		}
		addr, ok := quorumServerClientAddr(val)
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(addr)
	}
	return version + " " + b.String()
}

// quorumServerClientAddr parses a server line's value as Java's
// QuorumServer does ("host:port:port[:role][;[host:]port]") and returns
// its client address as InetSocketAddress's getHostString and getPort
// print it ("" if it has none); ok is false if Java refuses the line.
func quorumServerClientAddr(v string) (addr string, ok bool) {
	parts := strings.Split(v, ";")
	for len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1] // Java's split drops trailing empty strings
	}
	if len(parts) == 0 || len(parts) > 2 || strings.Contains(parts[0], "|") {
		return "", false // too many parts; several addresses (multiAddress is off)
	}
	if len(parts) == 2 {
		cp, ok := hostAndPort(parts[1])
		if !ok || len(cp) > 2 {
			return "", false
		}
		host := "0.0.0.0"
		if len(cp) == 2 {
			host = cp[0]
		}
		port, err := strconv.ParseInt(cp[len(cp)-1], 10, 32)
		if err != nil || port < 0 || port > 65535 {
			return "", false
		}
		addr = fmt.Sprintf("%s:%d", javaHostString(host), port)
	}
	sp, ok := hostAndPort(parts[0])
	if !ok || len(sp) < 3 || len(sp) > 4 {
		return "", false
	}
	quorum, err1 := strconv.ParseInt(sp[1], 10, 32)
	election, err2 := strconv.ParseInt(sp[2], 10, 32)
	if err1 != nil || err2 != nil || quorum < 0 || quorum > 65535 || election < 0 || election > 65535 || quorum == election {
		return "", false
	}
	if len(sp) == 4 {
		if r := strings.ToLower(sp[3]); r != "participant" && r != "observer" {
			return "", false
		}
	}
	return addr, true
}

// hostAndPort is ZooKeeper's ConfigUtils.getHostAndPort: "[v6]:p:q" or
// "h:p:q" split at the colons (Java's split: trailing empty strings go).
func hostAndPort(s string) ([]string, bool) {
	var out []string
	if strings.HasPrefix(s, "[") {
		i := strings.IndexByte(s, ']')
		if i < 0 || i+2 == len(s) {
			return nil, false
		}
		if i+2 > len(s) {
			return []string{strings.NewReplacer("[", "", "]", "").Replace(s)}, true
		}
		out = append([]string{s[1:i]}, strings.Split(s[i+2:], ":")...)
	} else {
		out = strings.Split(s, ":")
	}
	for len(out) > 1 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out, true
}

// javaHostString is what InetSocketAddress.getHostString returns for a
// host: an IP literal in Java's text form (IPv6 uncompressed), a name as
// given.
func javaHostString(host string) string {
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return host
	case ip.To4() != nil:
		return ip.To4().String()
	}
	groups := make([]string, 8)
	for i := range groups {
		groups[i] = strconv.FormatUint(uint64(ip[2*i])<<8|uint64(ip[2*i+1]), 16)
	}
	return strings.Join(groups, ":")
}

// javaProperties parses text as java.util.Properties.load does (the
// server's zoo.cfg reader, keys and values trimmed as ZooKeeper's
// ConfigUtils and parseDynamicConfig trim them) and returns its key/value
// pairs in order (a key may repeat); a malformed escape ends it.
func javaProperties(text string) [][2]string {
	var out [][2]string
	_ = server.ScanProperties(strings.NewReader(text), "configuration", func(key, val string) error {
		out = append(out, [2]string{key, val})
		return nil
	})
	return out
}

// javaHashMap reproduces the iteration order of Java's ConcurrentHashMap
// (which backs java.util.Properties): 16 bins at first, doubled when
// three quarters are used, a bin's entries in insertion order except as
// a resize's split reorders them.
type javaHashMap struct {
	bins    [][]javaEntry
	size    int
	sizeCtl int
}

type javaEntry struct {
	key, val string
	hash     int32
}

func newJavaHashMap() *javaHashMap {
	return &javaHashMap{bins: make([][]javaEntry, 16), sizeCtl: 12}
}

// javaStringHash is String.hashCode, spread as ConcurrentHashMap does.
func javaStringHash(s string) int32 {
	var h int32
	for _, c := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(c)
	}
	return (h ^ int32(uint32(h)>>16)) & 0x7fffffff
}

func (m *javaHashMap) put(key, val string) {
	h := javaStringHash(key)
	i := int(h) & (len(m.bins) - 1)
	for j := range m.bins[i] {
		if m.bins[i][j].key == key {
			m.bins[i][j].val = val
			return
		}
	}
	m.bins[i] = append(m.bins[i], javaEntry{key: key, val: val, hash: h})
	m.size++
	for m.size >= m.sizeCtl {
		m.resize()
	}
}

// resize is ConcurrentHashMap.transfer: each bin splits into a low and a
// high bin; the bin's last run of entries going the same way keeps its
// order, the entries before it are pushed in front, one by one.
func (m *javaHashMap) resize() {
	n := len(m.bins)
	next := make([][]javaEntry, 2*n)
	for i, bin := range m.bins {
		if len(bin) == 0 {
			continue
		}
		runBit, lastRun := int(bin[0].hash)&n, 0
		for j := 1; j < len(bin); j++ {
			if b := int(bin[j].hash) & n; b != runBit {
				runBit, lastRun = b, j
			}
		}
		var lo, hi []javaEntry
		tail := append([]javaEntry(nil), bin[lastRun:]...)
		if runBit == 0 {
			lo = tail
		} else {
			hi = tail
		}
		for _, e := range bin[:lastRun] {
			if int(e.hash)&n == 0 {
				lo = append([]javaEntry{e}, lo...)
			} else {
				hi = append([]javaEntry{e}, hi...)
			}
		}
		next[i], next[i+n] = lo, hi
	}
	m.bins = next
	m.sizeCtl = 2*n - n/2
}

func (m *javaHashMap) entries() []javaEntry {
	var out []javaEntry
	for _, bin := range m.bins {
		out = append(out, bin...)
	}
	return out
}
