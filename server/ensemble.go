package server

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// ParseServerLine parses a zoo.cfg ensemble line value, as ZooKeeper's
// QuorumPeer.QuorumServer does:
//
//	host:quorumPort:electionPort[:participant|:observer][;[clientHost:]clientPort]
//
// Paddock uses quorumPort as its one cluster port (Raft and forwarding);
// electionPort is accepted and unused.
func ParseServerLine(id, value string) (Peer, error) {
	addrs, client, _ := strings.Cut(value, ";")
	parts := strings.Split(strings.TrimSpace(addrs), ":")
	if strings.HasPrefix(addrs, "[") { // [ipv6]:q:e
		end := strings.Index(addrs, "]")
		if end < 0 {
			return Peer{}, fmt.Errorf("server.%s: unterminated IPv6 address", id)
		}
		parts = append([]string{addrs[1:end]}, strings.Split(strings.TrimPrefix(addrs[end+1:], ":"), ":")...)
	}
	if len(parts) < 2 || len(parts) > 4 {
		return Peer{}, fmt.Errorf("server.%s=%s: want host:quorumPort:electionPort[:role][;clientPort]", id, value)
	}
	p := Peer{ID: id, Addr: net.JoinHostPort(parts[0], parts[1])}
	if _, err := strconv.Atoi(parts[1]); err != nil {
		return Peer{}, fmt.Errorf("server.%s: bad quorum port %q", id, parts[1])
	}
	if len(parts) >= 3 {
		if _, err := strconv.ParseUint(parts[2], 10, 16); err != nil {
			return Peer{}, fmt.Errorf("server.%s: bad election port %q", id, parts[2])
		}
		p.ElectionPort = parts[2]
	}
	if len(parts) == 4 {
		switch parts[3] {
		case "observer":
			p.Observer = true
		case "participant":
		default:
			return Peer{}, fmt.Errorf("server.%s: unknown role %q", id, parts[3])
		}
	}
	if client = strings.TrimSpace(client); client != "" {
		if !strings.Contains(client, ":") {
			client = net.JoinHostPort("0.0.0.0", client)
		}
		p.ClientAddr = client
	}
	return p, nil
}

// PeersFromZooCfg turns the server.N entries returned by ApplyZooCfg into
// peers sorted by id.
func PeersFromZooCfg(servers map[string]string) ([]Peer, error) {
	var peers []Peer
	keys := make(map[string]string) // id -> key
	for key, val := range servers {
		// The id keeps its spelling (a data dir written with server.01
		// names node "01" in its Raft configuration); myid and --id match
		// it as numbers (Config.sameID).
		id := strings.TrimPrefix(key, "server.")
		n, err := normalizeServerID(id)
		if err != nil {
			return nil, fmt.Errorf("%s: server ids are numbers", key)
		}
		if other, dup := keys[n]; dup {
			return nil, fmt.Errorf("%s and %s are the same server id %s", min(key, other), max(key, other), n)
		}
		keys[n] = key
		p, err := ParseServerLine(id, val)
		if err != nil {
			return nil, err
		}
		peers = append(peers, p)
	}
	sort.Slice(peers, func(i, j int) bool {
		a, _ := strconv.Atoi(peers[i].ID)
		b, _ := strconv.Atoi(peers[j].ID)
		return a < b
	})
	return peers, nil
}

// ReadMyID reads dataDir/myid as ZooKeeper does.
func ReadMyID(dataDir string) (string, error) {
	file := filepath.Join(dataDir, "myid")
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("%s does not exist: a cluster node's id goes there, as for ZooKeeper "+
			"(echo N > %s, N from the node's server.N line), or pass --id", file, file)
	}
	if err != nil {
		return "", fmt.Errorf("read myid: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if _, err := normalizeServerID(id); err != nil {
		return "", fmt.Errorf("myid %q is not a number", id)
	}
	return id, nil // matched to a server line as a number (Config.sameID)
}

// ParsePeerFlag parses --peer ID=HOST:PORT[;CLIENTHOST:CLIENTPORT] (an
// ":observer" suffix on the cluster address marks an observer).
func ParsePeerFlag(s string) (Peer, error) {
	id, rest, ok := strings.Cut(s, "=")
	if !ok || id == "" {
		return Peer{}, fmt.Errorf("--peer %q: want ID=HOST:PORT", s)
	}
	addr, client, _ := strings.Cut(rest, ";")
	p := Peer{ID: id, ClientAddr: client}
	if a, found := strings.CutSuffix(addr, ":observer"); found {
		addr, p.Observer = a, true
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return Peer{}, fmt.Errorf("--peer %q: %w", s, err)
	}
	p.Addr = addr
	return p, nil
}
