package client

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/paddockzk/paddock/internal/wire"
)

// ConfigPath is the znode holding the ensemble's dynamic configuration,
// which GetConfig reads and Reconfig changes.
const ConfigPath = "/zookeeper/config"

// AnyConfig is the fromConfig of a reconfig that applies whatever the
// current configuration's version.
const AnyConfig int64 = -1

// GetConfig returns the ensemble's configuration (the data of
// /zookeeper/config: "server.N=host:port:port:role;client" lines and
// "version=<hex>") and its Stat. As the Java client's getConfig, it reads
// /zookeeper/config whatever the chroot. A standalone server's
// configuration is empty.
func (c *Conn) GetConfig(ctx context.Context) ([]byte, *Stat, error) {
	var resp wire.GetDataResponse
	if err := c.call(ctx, wire.OpGetData, &wire.PathWatchRequest{Path: ConfigPath}, &resp, nil); err != nil {
		return nil, nil, err
	}
	return resp.Data, &resp.Stat, nil
}

// GetConfigW is GetConfig plus a one-shot watch on the configuration
// (EventNodeDataChanged after a reconfig). Its event's path is
// "/zookeeper/config" whatever the chroot (as in ZooKeeper 3.9's client,
// ZOOKEEPER-4601; 3.8's strips a chroot prefix from it).
func (c *Conn) GetConfigW(ctx context.Context) ([]byte, *Stat, <-chan Event, error) {
	var resp wire.GetDataResponse
	req := &wire.PathWatchRequest{Path: ConfigPath, Watch: true}
	ch, err := c.watchCallAs(ctx, wire.OpGetData, req, &resp, ConfigPath, ConfigPath, okOnly(watchData))
	if err != nil {
		return nil, nil, nil, err
	}
	return resp.Data, &resp.Stat, ch, nil
}

// IncrementalReconfig adds the servers of joining and removes those of
// leaving (ZooKeeper's reconfig, opcode 16). A joining entry is a line of
// the dynamic configuration, "server.N=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]";
// a leaving entry is a server id. fromConfig is the version the current
// configuration must have (the hex "version=" of GetConfig's data, as a
// number), or AnyConfig. It returns the new configuration and its Stat.
//
// The server must allow it (reconfigEnabled=true; otherwise
// ErrReconfigDisabled) and the session needs WRITE on /zookeeper/config,
// which only the super user has by default (ErrNoAuth). Other refusals:
// ErrBadVersion (fromConfig is not current), ErrNewConfigNoQuorum,
// ErrReconfigInProgress, ErrBadArguments (a malformed entry), and
// ErrUnimplemented from a standalone server. A reconfig that removes the
// server this Conn is connected to may end with ErrConnectionLoss.
func (c *Conn) IncrementalReconfig(ctx context.Context, joining, leaving []string, fromConfig int64) ([]byte, *Stat, error) {
	return c.reconfig(ctx, &wire.ReconfigRequest{
		JoiningServers: strings.Join(joining, ","),
		LeavingServers: strings.Join(leaving, ","),
		CurConfigID:    fromConfig,
	})
}

// Reconfig replaces the membership by members (a non-incremental
// reconfig): each entry is a line of the dynamic configuration,
// "server.N=host:quorumPort:electionPort[:role][;[clientHost:]clientPort]".
// See IncrementalReconfig for fromConfig, the result and the errors.
func (c *Conn) Reconfig(ctx context.Context, members []string, fromConfig int64) ([]byte, *Stat, error) {
	if len(members) == 0 {
		return nil, nil, fmt.Errorf("%w: reconfig without members", ErrBadArguments)
	}
	return c.reconfig(ctx, &wire.ReconfigRequest{NewMembers: strings.Join(members, ","), CurConfigID: fromConfig})
}

func (c *Conn) reconfig(ctx context.Context, req *wire.ReconfigRequest) ([]byte, *Stat, error) {
	var resp wire.GetDataResponse
	if err := c.call(ctx, wire.OpReconfig, req, &resp, nil); err != nil {
		return nil, nil, err
	}
	return resp.Data, &resp.Stat, nil
}

// ConfigVersion returns the version of a configuration as GetConfig and
// Reconfig return it (its "version=<hex>" line), the fromConfig of a
// reconfig that applies only to it. ok is false when there is none (a
// standalone server's empty configuration).
func ConfigVersion(config []byte) (version int64, ok bool) {
	sc := bufio.NewScanner(bytes.NewReader(config))
	for sc.Scan() {
		if v, found := strings.CutPrefix(strings.TrimSpace(sc.Text()), "version="); found {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 16, 64)
			return n, err == nil
		}
	}
	return 0, false
}
