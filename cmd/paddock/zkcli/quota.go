package zkcli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/paddockzk/paddock/client"
)

// The quota commands, as zkCli 3.8's SetQuotaCommand, ListQuotaCommand
// and DelQuotaCommand: a quota on /a is the znode
// /zookeeper/quota/a/zookeeper_limits ("count=N,bytes=M" soft limits,
// then ";countHardLimit=...;byteHardLimit=..." hard ones, in StatsTrack's
// format) beside zookeeper_stats, which the server keeps.

const (
	quotaRoot     = "/zookeeper/quota"
	limitNode     = "zookeeper_limits"
	statNode      = "zookeeper_stats"
	setQuotaUsage = "setquota -n|-b|-N|-B val path"
)

// statsTrack is ZooKeeper's StatsTrack: named longs, -1 when absent.
type statsTrack map[string]int64

var statsSeparator = regexp.MustCompile(`[,;]+`)

// parseStatsTrack parses "key=long" pairs separated by ',' or ';' (the
// "bytes=M=" of the newer format reads as bytes=M).
func parseStatsTrack(s string) (statsTrack, error) {
	st := statsTrack{}
	if s == "" {
		return st, nil
	}
	pairs := statsSeparator.Split(s, -1)
	for len(pairs) > 0 && pairs[len(pairs)-1] == "" {
		pairs = pairs[:len(pairs)-1] // Java's split drops trailing empty strings
	}
	for _, p := range pairs {
		kv := strings.Split(p, "=")
		for len(kv) > 1 && kv[len(kv)-1] == "" {
			kv = kv[:len(kv)-1]
		}
		if len(kv) < 2 {
			return nil, fmt.Errorf("malformed quota %q", s)
		}
		n, err := strconv.ParseInt(kv[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("malformed quota %q", s)
		}
		st[kv[0]] = n
	}
	return st, nil
}

func (st statsTrack) get(key string) int64 {
	if v, ok := st[key]; ok {
		return v
	}
	return -1
}

// String is StatsTrack.toString: count and bytes first, then, after an
// extra "=" that older parsers skip, the other keys sorted, with ';'.
func (st statsTrack) String() string {
	s := fmt.Sprintf("count=%d,bytes=%d", st.get("count"), st.get("bytes"))
	var keys []string
	for k := range st {
		if k != "count" && k != "bytes" {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return s
	}
	sort.Strings(keys)
	s += "="
	for _, k := range keys {
		s += fmt.Sprintf(";%s=%d", k, st[k])
	}
	return s
}

// quotaFlags maps the quota options to StatsTrack keys.
var quotaFlags = map[byte]string{'n': "count", 'b': "bytes", 'N': "countHardLimit", 'B': "byteHardLimit"}

// quotaFlag returns the quota option given, if any (the parser lets
// through at most one).
func quotaFlag(c *call) (byte, bool) {
	for _, f := range []byte("nbNB") {
		if c.has(f) {
			return f, true
		}
	}
	return 0, false
}

func (s *Shell) setQuota(ctx context.Context, c *call) error {
	flag, ok := quotaFlag(c)
	if !ok {
		return failf("Missing required option: [-n num soft quota, -b bytes soft quota, -N num hard quota, -B bytes hard quota]")
	}
	if len(c.args) < 1 {
		return failf("%s", setQuotaUsage)
	}
	path := c.args[0]
	if strings.HasPrefix(path, quotaRoot) {
		return failf("cannot set a quota under the path: %s", quotaRoot)
	}
	quota := statsTrack{"count": -1, "bytes": -1, "countHardLimit": -1, "byteHardLimit": -1}
	bits := 64
	if flag == 'n' || flag == 'N' {
		bits = 32
	}
	v, err := strconv.ParseInt(c.flags[flag], 10, bits)
	switch {
	case err != nil:
		return failf("NumberFormatException happens when parsing the option value")
	case bits == 32 && v <= 0:
		return failf("the num quota must be greater than zero")
	case v < 0:
		return failf("the bytes quota must be greater than or equal to zero")
	}
	quota[quotaFlags[flag]] = v
	return s.createQuota(ctx, c, path, quota)
}

// createQuota is SetQuotaCommand.createQuota.
func (s *Shell) createQuota(ctx context.Context, c *call, path string, quota statsTrack) error {
	if err := validatePath(path); err != nil {
		return err
	}
	if _, ok, err := c.conn.Exists(ctx, path); err != nil {
		return cliError(err, path)
	} else if !ok {
		return failf("%s does not exist.", path)
	}
	if err := checkChildQuota(ctx, c.conn, path); err != nil {
		return err
	}
	if err := checkParentQuota(ctx, c.conn, path); err != nil {
		return err
	}
	exists := func(p string) (bool, error) {
		_, ok, err := c.conn.Exists(ctx, p)
		return ok, cliError(err, p)
	}
	rawCreate := func(p string, data []byte) error {
		_, _, err := c.conn.Create(ctx, p, data, client.ModePersistent, nil)
		return err
	}
	create := func(p string, data []byte) error { return cliError(rawCreate(p, data), p) }
	if ok, err := exists(quotaRoot); err != nil {
		return err
	} else if !ok {
		// As zkCli: both in one try, so /zookeeper existing skips the second.
		err := rawCreate("/zookeeper", nil)
		p := "/zookeeper"
		if err == nil {
			err, p = rawCreate(quotaRoot, nil), quotaRoot
		}
		if err != nil && !errors.Is(err, client.ErrNodeExists) {
			return cliError(err, p)
		}
	}
	quotaPath := quotaRoot
	for _, seg := range javaSplit(path, "/")[1:] {
		quotaPath += "/" + seg
		ok, err := exists(quotaPath)
		if err != nil {
			return err
		}
		if !ok {
			if err := rawCreate(quotaPath, nil); err != nil && !errors.Is(err, client.ErrNodeExists) {
				return cliError(err, quotaPath)
			}
		}
	}
	statPath, limitPath := quotaPath+"/"+statNode, quotaPath+"/"+limitNode
	ok, err := exists(limitPath)
	if err != nil {
		return err
	}
	read := func(p string) (statsTrack, error) {
		data, _, err := c.conn.Get(ctx, p)
		if err != nil {
			return nil, cliError(err, p)
		}
		st, err := parseStatsTrack(string(data))
		if err != nil {
			return nil, failf("%v", err)
		}
		return st, nil
	}
	if !ok {
		if err := create(limitPath, []byte(quota.String())); err != nil {
			return err
		}
		if err := create(statPath, []byte(statsTrack{"count": 0, "bytes": 0}.String())); err != nil {
			return err
		}
		limits, err := read(limitPath)
		if err != nil {
			return err
		}
		stats, err := read(statPath)
		if err != nil {
			return err
		}
		checkQuota(c, limits, stats)
		return nil
	}
	limits, err := read(limitPath)
	if err != nil {
		return err
	}
	for k, v := range quota {
		if v > -1 {
			limits[k] = v
		}
	}
	stats, err := read(statPath)
	if err != nil {
		return err
	}
	checkQuota(c, limits, stats)
	_, err = c.conn.Set(ctx, limitPath, []byte(limits.String()), -1)
	return cliError(err, limitPath)
}

// checkQuota prints zkCli's warnings for limits already exceeded.
func checkQuota(c *call, quota, stats statsTrack) {
	over := func(limit, hard string, have int64) bool {
		return quota.get(limit) > -1 && quota.get(limit) < have || quota.get(hard) > -1 && quota.get(hard) < have
	}
	if n := stats.get("count"); over("count", "countHardLimit", n) {
		fmt.Fprintf(c.out, "[Warning]: the count quota you create is less than the existing count:%d\n", n)
	}
	if n := stats.get("bytes"); over("bytes", "byteHardLimit", n) {
		fmt.Fprintf(c.out, "[Warning]: the bytes quota you create is less than the existing bytes:%d\n", n)
	}
}

// checkChildQuota refuses a quota on path when a node below it has one,
// visiting /zookeeper/quota/<path> as zkCli's ZKUtil.visitSubTreeDFS (a
// node's children, sorted, then each child's subtree).
func checkChildQuota(ctx context.Context, conn *client.Conn, path string) error {
	realPath := quotaRoot + path
	if err := validatePath(realPath); err != nil {
		return err
	}
	if _, _, err := conn.Get(ctx, realPath); errors.Is(err, client.ErrNoNode) {
		return nil
	} else if err != nil {
		return cliError(err, realPath)
	}
	check := func(p string) error {
		children, _, err := conn.Children(ctx, p)
		if err != nil {
			return nil // NoNode: removed meanwhile; zkCli prints others and goes on
		}
		for _, ch := range children {
			if p != realPath && ch == limitNode {
				return failf("%s has a child %s which has a quota", path, p[len(quotaRoot):])
			}
		}
		return nil
	}
	if err := check(realPath); err != nil {
		return err
	}
	var visit func(p string) error
	visit = func(p string) error {
		children, _, err := conn.Children(ctx, p)
		if err != nil {
			return nil
		}
		sort.Strings(children)
		for _, ch := range children {
			if err := check(p + "/" + ch); err != nil {
				return err
			}
		}
		for _, ch := range children {
			if err := visit(p + "/" + ch); err != nil {
				return err
			}
		}
		return nil
	}
	return visit(realPath)
}

// checkParentQuota refuses a quota on path when an ancestor has one.
func checkParentQuota(ctx context.Context, conn *client.Conn, path string) error {
	splits := javaSplit(path, "/")
	quotaPath := quotaRoot
	for i := 1; i < len(splits)-1; i++ {
		quotaPath += "/" + splits[i]
		children, _, err := conn.Children(ctx, quotaPath)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		} else if err != nil {
			return cliError(err, quotaPath)
		}
		for _, ch := range children {
			if quotaPath != quotaRoot+path && ch == limitNode {
				return failf("%s has a parent %s which has a quota", path, quotaPath[len(quotaRoot):])
			}
		}
	}
	return nil
}

// javaSplit is Java's String.split on a literal: trailing empty strings
// are dropped.
func javaSplit(s, sep string) []string {
	parts := strings.Split(s, sep)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (s *Shell) listQuota(ctx context.Context, c *call) error {
	path := c.args[0]
	limitPath := quotaRoot + path + "/" + limitNode
	fmt.Fprintf(c.errOut, "absolute path is %s\n", limitPath)
	var tracks []statsTrack
	for _, p := range []string{limitPath, quotaRoot + path + "/" + statNode} {
		if err := validatePath(p); err != nil {
			return err
		}
		data, _, err := c.conn.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			return failf("quota for %s does not exist.", path)
		} else if err != nil {
			return cliError(err, p)
		}
		st, err := parseStatsTrack(string(data))
		if err != nil {
			return failf("%v", err)
		}
		tracks = append(tracks, st)
	}
	fmt.Fprintf(c.out, "Output quota for %s %s\n", path, tracks[0])
	fmt.Fprintf(c.out, "Output stat for %s %s\n", path, tracks[1])
	return nil
}

func (s *Shell) delQuota(ctx context.Context, c *call) error {
	path := c.args[0]
	err := s.delQuotaPath(ctx, c, path)
	if errors.Is(err, client.ErrNoNode) {
		return failf("quota for %s does not exist.", path)
	}
	var e *Error
	if err != nil && !errors.As(err, &e) {
		return cliError(err, "")
	}
	return err
}

// delQuotaPath is DelQuotaCommand.delQuota: with a flag it unsets that
// limit, without one it deletes the quota and the empty quota nodes
// above it. A NoNode error is returned as it is.
func (s *Shell) delQuotaPath(ctx context.Context, c *call, path string) error {
	parentPath := quotaRoot + path
	limitPath := parentPath + "/" + limitNode
	if err := validatePath(limitPath); err != nil {
		return err
	}
	if _, ok, err := c.conn.Exists(ctx, limitPath); err != nil {
		return cliError(err, limitPath)
	} else if !ok {
		fmt.Fprintf(c.out, "Quota does not exist for %s\n", path)
		return nil
	}
	data, _, err := c.conn.Get(ctx, limitPath)
	if err != nil {
		return keep(err, limitPath)
	}
	limits, err := parseStatsTrack(string(data))
	if err != nil {
		return failf("%v", err)
	}
	if flag, ok := quotaFlag(c); ok {
		limits[quotaFlags[flag]] = -1
		_, err := c.conn.Set(ctx, limitPath, []byte(limits.String()), -1)
		return keep(err, limitPath)
	}
	children, _, err := c.conn.Children(ctx, parentPath)
	if err != nil {
		return keep(err, parentPath)
	}
	for _, ch := range children {
		if err := c.conn.Delete(ctx, parentPath+"/"+ch, -1); err != nil {
			return keep(err, parentPath+"/"+ch)
		}
	}
	// Delete the quota nodes above that are left empty.
	for p := parentPath; p != quotaRoot; p = p[:strings.LastIndexByte(p, '/')] {
		children, _, err := c.conn.Children(ctx, p)
		if err != nil {
			return keep(err, p)
		}
		if len(children) > 0 {
			break
		}
		if err := c.conn.Delete(ctx, p, -1); err != nil {
			return keep(err, p)
		}
	}
	return nil
}

// keep returns NoNode as it is (the caller reports it zkCli's way) and
// any other error as zkCli prints it.
func keep(err error, path string) error {
	if err == nil || errors.Is(err, client.ErrNoNode) {
		return err
	}
	return cliError(err, path)
}
