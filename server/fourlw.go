package server

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// Version is Paddock's version; ZooKeeperVersion is what the server reports
// to clients that branch on ZooKeeper's version (kazoo's server_version
// reads it from envi, go-zookeeper's FLWSrvr from srvr).
var (
	Version          = "0.1.0"
	ZooKeeperVersion = "3.9.0-paddock-" + Version
	// BuildTime is printed in srvr's "built on" field in the
	// MM/dd/yyyy HH:mm GMT form that go-zookeeper parses.
	BuildTime = "01/01/2026 00:00 GMT"
)

// fourLetterWord answers a four-letter word and closes the connection.
// The word is a packet received, counted before its output is made, and
// the output a packet sent, counted after, as ZooKeeper counts them
// (checkFourLetterWord, sendBufferSync): srvr after srst says Received:
// 1, Sent: 1 (srst's output).
func (c *conn) fourLetterWord(word string) {
	c.s.stats.received.Add(1)
	defer c.s.stats.sent.Add(1)
	var out string
	if !c.s.fourLetterAllowed(word) {
		out = word + " is not executed because it is not in the whitelist.\n"
	} else {
		out = c.s.FourLetterWord(word)
	}
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.s.cfg.WriteTimeout))
	_, _ = c.nc.Write([]byte(out))
}

func (s *Server) fourLetterAllowed(word string) bool {
	for _, w := range s.cfg.FourLetterWords {
		if w == "*" || w == word {
			return true
		}
	}
	return false
}

// notServing is what ZooKeeper answers most four-letter words with while
// it serves no clients (no quorum, an election running).
const notServing = "This ZooKeeper instance is not currently serving requests\n"

// serving reports whether this node serves clients: standalone, with a
// leader, or read-only.
func (s *Server) serving() bool {
	return !s.cfg.clustered() || s.Leader() != "" || s.readOnlyNow()
}

// FourLetterWord returns the output of a ZooKeeper four-letter word, in
// ZooKeeper's format. While the node serves no clients, every word but
// ruok, envi and the resets says so, as ZooKeeper's (isro: "null"), so a
// probe reading srvr's Mode or mntr's zk_server_state does not take a node
// without a quorum for a healthy follower.
func (s *Server) FourLetterWord(word string) string {
	if !s.serving() {
		switch word {
		case "ruok", "envi", "srst", "crst":
		case "isro":
			return "null"
		default:
			return notServing
		}
	}
	switch word {
	case "ruok":
		return "imok"
	case "srvr":
		return s.srvr(false)
	case "stat":
		return s.srvr(true)
	case "mntr":
		return s.mntr()
	case "cons":
		return s.cons()
	case "conf":
		return s.conf()
	case "envi":
		return s.envi()
	case "wchs":
		sum := s.watches.Summary()
		return fmt.Sprintf("%d connections watching %d paths\nTotal watches:%d\n", sum.Connections, sum.Paths, sum.Watches)
	case "wchc":
		return s.wchc()
	case "wchp":
		return s.wchp()
	case "dump":
		return s.dump()
	case "isro":
		if s.readOnlyNow() {
			return "ro"
		}
		return "rw"
	case "dirs":
		if s.cfg.separateLogDir() {
			return fmt.Sprintf("datadir_size: %d\nlogdir_size: %d\n", dirSize(s.cfg.DataDir), dirSize(s.cfg.LogDir))
		}
		return fmt.Sprintf("datadir_size: %d\nlogdir_size: 0\n", dirSize(s.cfg.DataDir))
	case "srst":
		// ZooKeeper's ServerStats.reset: latency and packet counts.
		s.stats.latency.reset()
		s.stats.received.Store(0)
		s.stats.sent.Store(0)
		return "Server stats reset.\n"
	case "crst":
		for _, c := range s.connList() {
			c.stats.reset()
		}
		return "Connection stats reset.\n"
	}
	return word + " is not supported by Paddock.\n"
}

func (s *Server) connCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

func (s *Server) outstanding() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for c := range s.conns {
		n += len(c.pending)
	}
	return n
}

func (s *Server) srvr(withClients bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Zookeeper version: %s, built on %s\n", ZooKeeperVersion, BuildTime)
	if withClients {
		b.WriteString("Clients:\n")
		for _, c := range s.connList() {
			fmt.Fprintf(&b, " /%s[1](queued=%d,recved=%d,sent=%d)\n", c.nc.RemoteAddr(), len(c.pending),
				c.stats.received.Load(), c.stats.sent.Load())
		}
		b.WriteString("\n")
	}
	lmin, lavg, lmax := s.stats.latency.snapshot()
	st := s.fsm.Stats()
	fmt.Fprintf(&b, "Latency min/avg/max: %d/%.4f/%d\n", lmin, lavg, lmax)
	fmt.Fprintf(&b, "Received: %d\nSent: %d\nConnections: %d\nOutstanding: %d\n",
		s.stats.received.Load(), s.stats.sent.Load(), s.connCount(), s.outstanding())
	fmt.Fprintf(&b, "Zxid: 0x%x\nMode: %s\nNode count: %d\n", st.LastZxid, s.Mode(), st.Nodes)
	return b.String()
}

func (s *Server) connList() []*conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b *conn) int { return int(a.id) - int(b.id) })
	return out
}

// MonitorValues returns mntr's key/value pairs in order.
func (s *Server) MonitorValues() [][2]string {
	lmin, lavg, lmax := s.stats.latency.snapshot()
	st := s.fsm.Stats()
	ws := s.watches.Summary()
	wst := s.watches.Stats()
	kv := [][2]string{
		{"zk_version", ZooKeeperVersion + ", built on " + BuildTime},
		{"zk_server_state", s.Mode()},
		{"zk_avg_latency", fmt.Sprintf("%.4f", lavg)},
		{"zk_max_latency", fmt.Sprint(lmax)},
		{"zk_min_latency", fmt.Sprint(lmin)},
		{"zk_packets_received", fmt.Sprint(s.stats.received.Load())},
		{"zk_packets_sent", fmt.Sprint(s.stats.sent.Load())},
		{"zk_num_alive_connections", fmt.Sprint(s.connCount())},
		{"zk_outstanding_requests", fmt.Sprint(s.outstanding())},
		{"zk_znode_count", fmt.Sprint(st.Nodes)},
		{"zk_watch_count", fmt.Sprint(ws.Watches)},
		{"zk_ephemerals_count", fmt.Sprint(st.Ephemerals)},
		{"zk_approximate_data_size", fmt.Sprint(st.DataSize)},
		{"zk_global_sessions", fmt.Sprint(st.Sessions)},
		{"zk_last_zxid", fmt.Sprintf("0x%x", st.LastZxid)},
		{"zk_notifications_sent", fmt.Sprint(wst.Notifications)},
		{"zk_notifications_node_created", fmt.Sprint(wst.ByType[wire.EventNodeCreated])},
		{"zk_notifications_node_deleted", fmt.Sprint(wst.ByType[wire.EventNodeDeleted])},
		{"zk_notifications_node_data_changed", fmt.Sprint(wst.ByType[wire.EventNodeDataChanged])},
		{"zk_notifications_node_children_changed", fmt.Sprint(wst.ByType[wire.EventNodeChildrenChanged])},
		{"zk_watch_triggers", fmt.Sprint(wst.Triggers)},
		{"zk_watch_triggers_notified", fmt.Sprint(wst.TriggersNotified)},
		{"zk_data_watches", fmt.Sprint(wst.DataWatches)},
		{"zk_child_watches", fmt.Sprint(wst.ChildWatches)},
		{"zk_persistent_watches", fmt.Sprint(wst.PersistentWatches)},
		{"zk_persistent_recursive_watches", fmt.Sprint(wst.RecursiveWatches)},
		{"zk_connection_rejected", fmt.Sprint(s.stats.rejected.Load())},
		{"zk_slow_consumers_disconnected", fmt.Sprint(s.stats.slowConsumers.Load())},
		{"zk_uptime", fmt.Sprint(time.Since(s.started).Milliseconds())},
	}
	kv = append(kv, s.leaderValues()...)
	return append(kv, fileDescriptorValues()...)
}

func (s *Server) mntr() string {
	var b strings.Builder
	for _, kv := range s.MonitorValues() {
		fmt.Fprintf(&b, "%s\t%s\n", kv[0], kv[1])
	}
	return b.String()
}

// opAbbrev is ZooKeeper's short operation name in cons output (lop=).
func opAbbrev(op wire.OpCode) string {
	switch op {
	case wire.OpGetData:
		return "GETD"
	case wire.OpSetData:
		return "SETD"
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL:
		return "CREA"
	case wire.OpDelete:
		return "DELE"
	case wire.OpExists:
		return "EXIS"
	case wire.OpGetChildren, wire.OpGetChildren2:
		return "GETC"
	case wire.OpPing:
		return "PING"
	case wire.OpMulti:
		return "MULT"
	case wire.OpCreateSession:
		return "SESS"
	case wire.OpSetWatches, wire.OpSetWatches2:
		return "SETW"
	case wire.OpSync:
		return "SYNC"
	}
	return "NA"
}

func (s *Server) cons() string {
	var b strings.Builder
	for _, c := range s.connList() {
		llat, minlat, avglat, maxlat := c.stats.latency.connSnapshot()
		fmt.Fprintf(&b, " /%s[1](queued=%d,recved=%d,sent=%d,sid=0x%x,lop=%s,est=%d,to=%d,lcxid=0x%x,lzxid=0x%x,lresp=%d,llat=%d,minlat=%d,avglat=%d,maxlat=%d)\n",
			c.nc.RemoteAddr(), len(c.pending), c.stats.received.Load(), c.stats.sent.Load(), c.SessionID(),
			opAbbrev(wire.OpCode(c.stats.lastOp.Load())), c.created.UnixMilli(), c.timeout,
			uint64(int64(c.stats.lastXid.Load())), uint64(c.stats.lastZxid.Load()), c.stats.lastResp.Load(),
			llat, minlat, avglat, maxlat)
	}
	b.WriteString("\n")
	return b.String()
}

// conf is ZooKeeper's conf: in a cluster, with this node's id and the
// membership (the server.N lines and version of /zookeeper/config), as a
// quorum peer prints them.
func (s *Server) conf() string {
	c := s.cfg
	id := "0"
	if c.clustered() {
		id = c.ID
	}
	out := fmt.Sprintf("clientPort=%d\nclientPortAddress=%s\ndataDir=%s\ndataLogDir=%s\ntickTime=%d\nmaxClientCnxns=%d\nminSessionTimeout=%d\nmaxSessionTimeout=%d\nserverId=%s\n",
		s.port(), c.Bind, c.DataDir, c.logDir(), c.TickTime.Milliseconds(), c.MaxClientCnxns,
		c.MinSessionTimeout.Milliseconds(), c.MaxSessionTimeout.Milliseconds(), id)
	if members, _, err := s.fsm.Get(fsm.ConfigPath); err == nil && c.clustered() && len(members) > 0 {
		out += "membership: \n" + strings.TrimSuffix(string(members), "\n") + "\n"
	}
	return out
}

// port is the plaintext client port; -1 without one, as ZooKeeper's
// getClientPort.
func (s *Server) port() int {
	if s.ln == nil {
		return -1
	}
	if a, ok := s.ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return s.cfg.Port
}

func (s *Server) envi() string {
	host, _ := os.Hostname()
	wd, _ := os.Getwd()
	return fmt.Sprintf("Environment:\nzookeeper.version=%s, built on %s\nhost.name=%s\npaddock.version=%s\ngo.version=%s\nos.name=%s\nos.arch=%s\nuser.dir=%s\n",
		ZooKeeperVersion, BuildTime, host, Version, runtime.Version(), runtime.GOOS, runtime.GOARCH, wd)
}

func (s *Server) wchc() string {
	return indented(s.watches.BySession(), "0x%x", "%s")
}

func (s *Server) wchp() string {
	return indented(s.watches.ByPath(), "%s", "0x%x")
}

// indented lists m by sorted key, each key's values below it indented
// by a tab, as wchc and wchp print them.
func indented[K cmp.Ordered, V any](m map[K][]V, keyFormat, valueFormat string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m)) {
		fmt.Fprintf(&b, keyFormat+"\n", k)
		for _, v := range m[k] {
			fmt.Fprintf(&b, "\t"+valueFormat+"\n", v)
		}
	}
	return b.String()
}

func (s *Server) dump() string {
	var b strings.Builder
	sessions := s.fsm.Sessions()
	fmt.Fprintf(&b, "SessionTracker dump:\nGlobal Sessions(%d):\n", len(sessions))
	for _, si := range sessions {
		fmt.Fprintf(&b, "0x%x\t%dms\n", si.ID, si.Timeout)
	}
	withEph := 0
	for _, si := range sessions {
		if si.Ephemerals > 0 {
			withEph++
		}
	}
	fmt.Fprintf(&b, "ephemeral nodes dump:\nSessions with Ephemerals (%d):\n", withEph)
	for _, si := range sessions {
		if si.Ephemerals == 0 {
			continue
		}
		fmt.Fprintf(&b, "0x%x:\n", si.ID)
		for _, p := range s.fsm.Ephemerals(si.ID, "/") {
			fmt.Fprintf(&b, "\t%s\n", p)
		}
	}
	return b.String()
}

func dirSize(dir string) int64 {
	if dir == "" {
		return 0
	}
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, e := d.Info(); e == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
