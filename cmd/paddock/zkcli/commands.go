package zkcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/internal/wire"
)

// command is one zkCli command.
type command struct {
	name string
	// usage is zkCli's usage line.
	usage string
	// opts lists the flag letters; a letter followed by ':' takes a value.
	opts string
	// group lists flag letters that exclude each other.
	group string
	// nargs is the number of arguments required after the flags.
	nargs int
	// offline commands run without a connection.
	offline bool
	run     func(s *Shell, ctx context.Context, c *call) error
}

// call is one invocation of a command.
type call struct {
	options
	sess *session
	conn *client.Conn
	out  io.Writer
	// errOut receives what zkCli prints on stderr for a command that
	// succeeds (Config.Stderr).
	errOut io.Writer
}

var commands = map[string]*command{}

func init() {
	for _, c := range []*command{
		{name: "addWatch", usage: "addWatch [-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE", opts: "m:", nargs: 1, run: (*Shell).addWatch},
		{name: "addauth", usage: "addauth scheme auth", nargs: 1, run: (*Shell).addAuth},
		{name: "close", usage: "close ", offline: true, run: (*Shell).closeCmd},
		{name: "config", usage: "config [-c] [-w] [-s]", opts: "cws", run: (*Shell).config},
		{name: "connect", usage: "connect host:port", offline: true, run: (*Shell).connect},
		{name: "create", usage: "create [-s] [-e] [-c] [-t ttl] path [data] [acl]", opts: "sect:", nargs: 1, run: (*Shell).create},
		{name: "delquota", usage: "delquota [-n|-b|-N|-B] path", opts: "nbNB", group: "nbNB", nargs: 1, run: (*Shell).delQuota},
		{name: "delete", usage: "delete [-v version] path", opts: "v:", nargs: 1, run: (*Shell).delete},
		{name: "deleteall", usage: "deleteall path [-b batch size]", opts: "b:", nargs: 1, run: (*Shell).deleteAll},
		{name: "get", usage: "get [-s] [-w] path", opts: "sw", nargs: 1, run: (*Shell).get},
		{name: "getAcl", usage: "getAcl [-s] path", opts: "s", nargs: 1, run: (*Shell).getACL},
		{name: "getAllChildrenNumber", usage: "getAllChildrenNumber path", nargs: 1, run: (*Shell).getAllChildrenNumber},
		{name: "getEphemerals", usage: "getEphemerals path", run: (*Shell).getEphemerals},
		{name: "help", usage: "help ", offline: true, run: (*Shell).help},
		{name: "history", usage: "history ", offline: true, run: (*Shell).historyCmd},
		{name: "listquota", usage: "listquota path", nargs: 1, run: (*Shell).listQuota},
		{name: "ls", usage: "ls [-s] [-w] [-R] path", opts: "swR", nargs: 1, run: (*Shell).ls},
		{name: "printwatches", usage: "printwatches on|off", offline: true, run: (*Shell).printWatchesCmd},
		{name: "quit", usage: "quit ", offline: true, run: func(*Shell, context.Context, *call) error { return ErrQuit }},
		{name: "reconfig", usage: reconfigUsage, opts: "sv:|file:|members:|add:|remove:", run: (*Shell).reconfig},
		{name: "redo", usage: "redo cmdno", offline: true, nargs: 1, run: func(*Shell, context.Context, *call) error { return nil }},
		{name: "removewatches", usage: "removewatches path [-c|-d|-a] [-l]", opts: "cdal", nargs: 1, run: (*Shell).removeWatches},
		{name: "set", usage: "set [-s] [-v version] path data", opts: "sv:", nargs: 2, run: (*Shell).set},
		{name: "setquota", usage: setQuotaUsage, opts: "n:b:N:B:", group: "nbNB", run: (*Shell).setQuota},
		{name: "setAcl", usage: "setAcl [-s] [-v version] [-R] path acl", opts: "sv:R", nargs: 2, run: (*Shell).setACL},
		{name: "stat", usage: "stat [-w] path", opts: "w", nargs: 1, run: (*Shell).stat},
		{name: "sync", usage: "sync path", nargs: 1, run: (*Shell).sync},
		{name: "version", usage: "version ", offline: true, run: (*Shell).version},
		{name: "whoami", usage: "whoami ", run: (*Shell).whoami},
	} {
		commands[c.name] = c
	}
}

// CommandNames returns the names of the commands, sorted.
func CommandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Usage is the list of commands printed by help and for an unknown
// command, in zkCli's format.
func Usage() string {
	var b strings.Builder
	b.WriteString("paddock cli --server host:port cmd args\n")
	for _, n := range CommandNames() {
		b.WriteString("\t" + commands[n].usage + "\n")
	}
	return b.String()
}

func (s *Shell) dispatch(ctx context.Context, args []string, out, errOut io.Writer) error {
	cmd, ok := commands[args[0]]
	if !ok {
		return &Error{Msg: Usage() + "Command not found: " + args[0], Code: 127}
	}
	o, err := parseOptionsGroup(cmd.opts, cmd.group, args[1:])
	if err != nil {
		return err
	}
	if len(o.args) < cmd.nargs {
		return failf("%s", cmd.usage)
	}
	c := &call{options: o, out: out, errOut: errOut}
	if !cmd.offline {
		if c.sess, err = s.conn(); err != nil {
			return err
		}
		c.conn = c.sess.conn
	}
	return cmd.run(s, ctx, c)
}

func (s *Shell) help(_ context.Context, c *call) error {
	io.WriteString(c.out, Usage())
	return nil
}

func (s *Shell) ls(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	watch := c.has('w')
	if c.has('R') {
		return s.lsRecursive(ctx, c, path, watch)
	}
	children, st, err := s.children(ctx, c, path, watch)
	if err != nil {
		return cliError(err, path)
	}
	sort.Strings(children)
	fmt.Fprintf(c.out, "[%s]\n", strings.Join(children, ", "))
	if c.has('s') {
		s.writeStat(c.out, st)
	}
	return nil
}

func (s *Shell) children(ctx context.Context, c *call, path string, watch bool) ([]string, *client.Stat, error) {
	if !watch {
		return c.conn.Children(ctx, path)
	}
	children, st, ch, err := c.conn.ChildrenW(ctx, path)
	if err == nil {
		s.watchOneShot(c.sess, kindChild, path, ch)
	}
	return children, st, err
}

// lsRecursive prints path and its descendants in the order of zkCli's
// ZKUtil.visitSubTreeDFS: a node's children (sorted), then each child's
// subtree. With watch it sets a data watch on path and a child watch on
// every node, as zkCli does.
func (s *Shell) lsRecursive(ctx context.Context, c *call, path string, watch bool) error {
	var err error
	if watch {
		var ch <-chan client.Event
		if _, _, ch, err = c.conn.GetW(ctx, path); err == nil {
			s.watchOneShot(c.sess, kindData, path, ch)
		}
	} else {
		_, _, err = c.conn.Get(ctx, path)
	}
	if err != nil {
		return cliError(err, path)
	}
	fmt.Fprintln(c.out, path)
	var visit func(p string) error
	visit = func(p string) error {
		children, _, err := s.children(ctx, c, p, watch)
		if errors.Is(err, client.ErrNoNode) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return cliError(err, p)
		}
		sort.Strings(children)
		for _, ch := range children {
			fmt.Fprintln(c.out, wire.JoinPath(p, ch))
		}
		for _, ch := range children {
			if err := visit(wire.JoinPath(p, ch)); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(path)
}

func (s *Shell) get(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	var data []byte
	var st *client.Stat
	var err error
	if c.has('w') {
		var ch <-chan client.Event
		if data, st, ch, err = c.conn.GetW(ctx, path); err == nil {
			s.watchOneShot(c.sess, kindData, path, ch)
		}
	} else {
		data, st, err = c.conn.Get(ctx, path)
	}
	if err != nil {
		return cliError(err, path)
	}
	writeData(c.out, data)
	if c.has('s') {
		s.writeStat(c.out, st)
	}
	return nil
}

func (s *Shell) stat(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	var st *client.Stat
	var ok bool
	var err error
	if c.has('w') {
		var ch <-chan client.Event
		if st, ok, ch, err = c.conn.ExistsW(ctx, path); err == nil {
			s.watchOneShot(c.sess, kindData, path, ch)
		}
	} else {
		st, ok, err = c.conn.Exists(ctx, path)
	}
	if err == nil && !ok {
		err = client.ErrNoNode
	}
	if err != nil {
		return cliError(err, path)
	}
	s.writeStat(c.out, st)
	return nil
}

// version parses the value of -v.
func versionFlag(c *call) (int32, error) {
	v, ok := c.flags['v']
	if !ok {
		return -1, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, failf("-v argument must be an int value")
	}
	return int32(n), nil
}

func (s *Shell) set(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	version, err := versionFlag(c)
	if err != nil {
		return err
	}
	st, err := c.conn.Set(ctx, path, []byte(c.args[1]), version)
	if err != nil {
		return cliError(err, path)
	}
	if c.has('s') {
		s.writeStat(c.out, st)
	}
	return nil
}

func (s *Shell) create(ctx context.Context, c *call) error {
	hasE, hasS, hasC, hasT := c.has('e'), c.has('s'), c.has('c'), c.has('t')
	if hasC && (hasE || hasS) {
		return failf("-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.")
	}
	var ttl int64
	if hasT {
		var err error
		if ttl, err = strconv.ParseInt(c.flags['t'], 10, 64); err != nil {
			return failf("-t argument must be a long value")
		}
		if hasE {
			return failf("TTLs cannot be used with Ephemeral znodes")
		}
		if hasC {
			return failf("TTLs cannot be used with Container znodes")
		}
	}
	var mode client.CreateMode
	switch {
	case hasE && hasS:
		mode = client.ModeEphemeralSequential
	case hasE:
		mode = client.ModeEphemeral
	case hasS && hasT:
		mode = client.ModePersistentSequentialWithTTL
	case hasS:
		mode = client.ModePersistentSequential
	case hasC:
		mode = client.ModeContainer
	case hasT:
		mode = client.ModePersistentWithTTL
	default:
		mode = client.ModePersistent
	}
	if hasT && (ttl <= 0 || ttl > wire.MaxTTL) {
		return failf("ttl must be positive and cannot be larger than: %d", wire.MaxTTL)
	}
	path := c.args[0]
	check := path
	if hasS {
		check += "1" // validated with the sequence suffix, which may follow a "/"
	}
	if err := validatePath(check); err != nil {
		return err
	}
	var data []byte
	if len(c.args) > 1 {
		data = []byte(c.args[1])
	}
	var acl []client.ACL // nil: OPEN_ACL_UNSAFE
	if len(c.args) > 2 {
		var err error
		if acl, err = ParseACL(c.args[2]); err != nil {
			return err
		}
	}
	var opts []client.CreateOption
	if hasT {
		opts = append(opts, client.WithTTL(time.Duration(ttl)*time.Millisecond))
	}
	created, _, err := c.conn.Create(ctx, path, data, mode, acl, opts...)
	switch {
	case errors.Is(err, client.ErrInvalidACL):
		return failf("%s\nAcl is not valid : %s", keeperMessage(client.ErrInvalidACL, path), path)
	case err != nil:
		return cliError(err, path)
	}
	fmt.Fprintf(c.out, "Created %s\n", created)
	return nil
}

func (s *Shell) delete(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	version, err := versionFlag(c)
	if err != nil {
		return err
	}
	return cliError(c.conn.Delete(ctx, path, version), path)
}

// deleteAll deletes path and its subtree as zkCli's ZKUtil.deleteRecursive:
// the tree is listed breadth first and deleted from the leaves up, by
// multi ops of at most -b (default 1000) deletes.
func (s *Shell) deleteAll(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	batch := 1000
	if v, ok := c.flags['b']; ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return failf("-b argument must be an int value")
		}
		batch = max(n, 1)
	}
	tree := []string{path}
	for i := 0; i < len(tree); i++ {
		children, _, err := c.conn.Children(ctx, tree[i])
		if errors.Is(err, client.ErrNoNode) && i > 0 {
			continue
		}
		if err != nil {
			return cliError(err, tree[i])
		}
		sort.Strings(children)
		for _, ch := range children {
			tree = append(tree, wire.JoinPath(tree[i], ch))
		}
	}
	var ops []client.Op
	for i := len(tree) - 1; i >= 0; i-- {
		ops = append(ops, client.DeleteOp(tree[i], -1))
		if len(ops) == batch || i == 0 {
			if _, err := c.conn.Multi(ctx, ops...); err != nil {
				return failf("Failed to delete some node(s) in the subtree!")
			}
			ops = nil
		}
	}
	return nil
}

func (s *Shell) getACL(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	acl, st, err := c.conn.GetACL(ctx, path)
	if err != nil {
		return cliError(err, path)
	}
	writeACL(c.out, acl)
	if c.has('s') {
		s.writeStat(c.out, st)
	}
	return nil
}

func (s *Shell) setACL(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	version, err := versionFlag(c)
	if err != nil {
		return err
	}
	acl, err := ParseACL(c.args[1])
	if err != nil {
		return err
	}
	if !c.has('R') {
		st, err := c.conn.SetACL(ctx, path, acl, version)
		if err != nil {
			return cliError(err, path)
		}
		if c.has('s') {
			s.writeStat(c.out, st)
		}
		return nil
	}
	// -R: every node of the subtree, in visitSubTreeDFS order; a node
	// that fails is reported and the others are still done.
	if _, _, err := c.conn.Exists(ctx, path); err != nil {
		return cliError(err, path)
	}
	var failed []string
	var rootStat *client.Stat
	var visit func(p string)
	visit = func(p string) {
		st, err := c.conn.SetACL(ctx, p, acl, version)
		if err != nil {
			failed = append(failed, cliError(err, p).Error())
		}
		if p == path {
			rootStat = st
		}
		children, _, err := c.conn.Children(ctx, p)
		if err != nil {
			return
		}
		sort.Strings(children)
		for _, ch := range children {
			visit(wire.JoinPath(p, ch))
		}
	}
	visit(path)
	if c.has('s') && rootStat != nil {
		s.writeStat(c.out, rootStat)
	}
	if len(failed) > 0 {
		return failf("%s", strings.Join(failed, "\n"))
	}
	return nil
}

func (s *Shell) sync(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	if err := c.conn.Sync(ctx, path); err != nil {
		var code client.Code
		if errors.As(err, &code) {
			return failf("Sync has failed. rc=%d", int32(code))
		}
		return cliError(err, path)
	}
	fmt.Fprintln(c.out, "Sync is OK")
	return nil
}

func (s *Shell) addAuth(ctx context.Context, c *call) error {
	var auth []byte
	if len(c.args) > 1 {
		auth = []byte(c.args[1])
	}
	return cliError(c.conn.AddAuth(ctx, c.args[0], auth), "")
}

func (s *Shell) whoami(ctx context.Context, c *call) error {
	infos, err := c.conn.WhoAmI(ctx)
	if err != nil {
		return cliError(err, "")
	}
	fmt.Fprintln(c.out, "Auth scheme: User")
	for _, in := range infos {
		fmt.Fprintf(c.out, "%s: %s\n", in.AuthScheme, in.User)
	}
	return nil
}

func (s *Shell) getEphemerals(ctx context.Context, c *call) error {
	path := "/"
	if len(c.args) > 0 {
		path = c.args[0]
	}
	if err := validatePath(path); err != nil {
		return err
	}
	paths, err := c.conn.GetEphemerals(ctx, path)
	if err != nil {
		return cliError(err, path)
	}
	sort.Strings(paths)
	fmt.Fprintf(c.out, "[%s]\n", strings.Join(paths, ", "))
	return nil
}

func (s *Shell) getAllChildrenNumber(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	n, err := c.conn.GetAllChildrenNumber(ctx, path)
	if err != nil {
		return cliError(err, path)
	}
	fmt.Fprintln(c.out, n)
	return nil
}

func (s *Shell) addWatch(ctx context.Context, c *call) error {
	recursive := true
	if m, ok := c.flags['m']; ok {
		switch m {
		case "PERSISTENT":
			recursive = false
		case "PERSISTENT_RECURSIVE":
		default:
			return failf("%s", commands["addWatch"].usage)
		}
	}
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	return cliError(s.watchPersistent(ctx, c.sess, path, recursive), path)
}

func (s *Shell) removeWatches(ctx context.Context, c *call) error {
	path := c.args[0]
	if err := validatePath(path); err != nil {
		return err
	}
	typ := client.WatcherAny
	switch {
	case c.has('c'):
		typ = client.WatcherChildren
	case c.has('d'):
		typ = client.WatcherData
	}
	// -l (remove locally even when the server cannot be reached) is
	// accepted; the client always removes on the server and locally.
	return cliError(c.conn.RemoveWatches(ctx, path, typ), path)
}

func (s *Shell) connect(ctx context.Context, c *call) error {
	s.mu.Lock()
	server := s.server
	s.mu.Unlock()
	if len(c.args) > 0 {
		server = c.args[0]
	}
	return s.Connect(ctx, server)
}

func (s *Shell) closeCmd(context.Context, *call) error {
	s.closeSession("CLOSED")
	return nil
}

func (s *Shell) historyCmd(_ context.Context, c *call) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.history) - 1 // this command
	for i := max(n-10, 0); i <= n; i++ {
		fmt.Fprintf(c.out, "%d - %s\n", i, s.history[i])
	}
	return nil
}

func (s *Shell) printWatchesCmd(_ context.Context, c *call) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(c.args) == 0 {
		state := "off"
		if s.printWatches {
			state = "on"
		}
		fmt.Fprintf(c.out, "printwatches is %s\n", state)
		return nil
	}
	s.printWatches = c.args[0] == "on"
	return nil
}

func (s *Shell) version(_ context.Context, c *call) error {
	fmt.Fprintf(c.out, "ZooKeeper CLI version: %s\n", s.cfg.Version)
	return nil
}
