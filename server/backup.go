package server

// Backup and restore: the admin endpoint that streams a consistent snapshot
// of the state, and the seeding of a new data dir from such a state (also
// used by the ZooKeeper importer).

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hashicorp/raft"
	"github.com/paddockzk/paddock/fsm"
)

// Headers of GET /snapshot. The body is the fsm snapshot (the format Raft
// persists, fsm.ReadSnapshotFile reads it); the zxid and node count come
// first as headers, the SHA-256 of the body last as a trailer, so a client
// can tell a complete download from a cut one.
const (
	SnapshotZxidHeader    = "X-Paddock-Zxid"
	SnapshotNodesHeader   = "X-Paddock-Nodes"
	SnapshotSHA256Trailer = "X-Paddock-Sha256"
)

// serveSnapshot streams a snapshot of this node's state at one zxid: the
// capture copies the tree's chunk list under the state lock; writes continue
// while it streams. The state includes the cluster secret that keys session
// passwords, so the admin endpoint must be reachable only by operators.
func (s *Server) serveSnapshot(w http.ResponseWriter, _ *http.Request) {
	c := s.fsm.Capture()
	defer c.Release()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="paddock-%d.snap"`, c.LastZxid()))
	h.Set(SnapshotZxidHeader, strconv.FormatInt(c.LastZxid(), 10))
	h.Set(SnapshotNodesHeader, strconv.Itoa(c.Nodes()))
	h.Set("Trailer", SnapshotSHA256Trailer)
	sum := sha256.New()
	n, err := c.WriteTo(io.MultiWriter(w, sum))
	if err != nil {
		// Headers are gone: the client sees a cut body without the trailer.
		s.log.Warn("snapshot download failed", "zxid", c.LastZxid(), "bytes", n, "err", err)
		return
	}
	h.Set(SnapshotSHA256Trailer, hex.EncodeToString(sum.Sum(nil)))
	s.log.Info("snapshot served", "zxid", c.LastZxid(), "nodes", c.Nodes(), "bytes", n)
}

// StandaloneRaftID is the Raft server id of a standalone server (startRaft
// gives a server without peers this id and a single-voter configuration).
const StandaloneRaftID = "1"

// SeedDataDir writes state into dir, which must not exist or be empty (a
// myid or zoo.cfg file may be there already), so that a server started with
// DataDir dir resumes from exactly that state: a Raft snapshot at index
// state.LastZxid() (which must be at least 1), term 1, holding the fsm
// snapshot and the Raft configuration of peers. With no peers that is the
// single voter a standalone server uses; with peers, every node of a new
// cluster is seeded with the same state and peer list and started with the
// same --id/--peer flags. Startup finds existing state, so it does not
// bootstrap and uses the snapshot's configuration.
func SeedDataDir(dir string, state *fsm.FSM, peers []Peer) error {
	index := state.LastZxid()
	if index < 1 {
		return fmt.Errorf("seed %s: the state's last zxid is %d; a Raft snapshot needs an index of at least 1", dir, index)
	}
	conf, err := seedConfiguration(peers)
	if err != nil {
		return err
	}
	if err := checkSeedDir(dir); err != nil {
		return err
	}
	// Until the snapshot is complete, the dir is marked as a seed in
	// progress; then as seeded, until a server starts from it
	// (datadirmarks.go).
	incomplete := filepath.Join(dir, seedIncompleteFile)
	if err := writeFileAtomic(incomplete, []byte("a restore or import in progress\n")); err != nil {
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	store, err := raft.NewFileSnapshotStore(dir, 2, io.Discard)
	if err != nil {
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	// The transport only encodes the legacy peer list of the metadata.
	_, trans := raft.NewInmemTransport("")
	sink, err := store.Create(raft.SnapshotVersionMax, uint64(index), 1, conf, uint64(index), trans)
	if err != nil {
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	if _, err := state.WriteSnapshot(sink); err != nil {
		_ = sink.Cancel()
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	if err := sink.Close(); err != nil {
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	if err := writeFileAtomic(filepath.Join(dir, seedFile), []byte("seeded by a restore or import; no server has started from it yet\n")); err != nil {
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	if err := os.Remove(incomplete); err != nil {
		return fmt.Errorf("seed %s: %w", dir, err)
	}
	return nil
}

// seedConfiguration is the Raft configuration startRaft would bootstrap.
func seedConfiguration(peers []Peer) (raft.Configuration, error) {
	if len(peers) == 0 {
		return raft.Configuration{Servers: []raft.Server{{ID: StandaloneRaftID, Address: "standalone", Suffrage: raft.Voter}}}, nil
	}
	var conf raft.Configuration
	ids, addrs, voters := map[string]bool{}, map[string]bool{}, 0
	for _, p := range peers {
		if p.ID == "" {
			return conf, errors.New("seed: a peer has an empty id")
		}
		if _, _, err := net.SplitHostPort(p.Addr); err != nil {
			return conf, fmt.Errorf("seed: peer %s: %w", p.ID, err)
		}
		if ids[p.ID] || addrs[p.Addr] {
			return conf, fmt.Errorf("seed: peer %s=%s: duplicate id or address", p.ID, p.Addr)
		}
		ids[p.ID], addrs[p.Addr] = true, true
		suffrage := raft.Voter
		if p.Observer {
			suffrage = raft.Nonvoter
		} else {
			voters++
		}
		conf.Servers = append(conf.Servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Addr), Suffrage: suffrage})
	}
	if voters == 0 {
		return conf, errors.New("seed: the peers include no voter")
	}
	return conf, nil
}

// checkSeedDir creates dir or checks that it holds nothing a server would
// read as state.
func checkSeedDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return os.MkdirAll(dir, 0o750)
	}
	if err != nil {
		return err
	}
	if fileExists(filepath.Join(dir, seedIncompleteFile)) {
		// An interrupted seed: start over.
		if err := os.RemoveAll(filepath.Join(dir, snapshotsDir)); err != nil {
			return err
		}
		if err := os.Remove(filepath.Join(dir, seedIncompleteFile)); err != nil {
			return err
		}
		return checkSeedDir(dir)
	}
	for _, e := range entries {
		if name := e.Name(); name != "myid" && name != "zoo.cfg" {
			return fmt.Errorf("seed: data dir %s is not empty (it has %s); restore only into a new data dir", dir, filepath.Join(dir, name))
		}
	}
	return nil
}
