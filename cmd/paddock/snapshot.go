package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/server"
	"github.com/paddockzk/paddock/zkimport"
	"github.com/spf13/cobra"
)

func newSnapshotCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Back up, restore and inspect Paddock state",
		Long: `A snapshot is the whole replicated state (every znode, the sessions and the
cluster secret that keys session passwords) at one zxid, in the format Raft
persists. Keep snapshot files as private as the data they hold.`,
	}
	cmd.AddCommand(newSnapshotSaveCmd(), newSnapshotRestoreCmd(), newSnapshotInspectCmd())
	return cmd
}

func newSnapshotSaveCmd() *cobra.Command {
	var admin string
	cmd := &cobra.Command{
		Use:   "save FILE",
		Short: "Stream a consistent snapshot from a running server's admin endpoint into FILE",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			res, err := saveSnapshot(admin, args[0])
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "saved %s: zxid %d (%#x), %d znodes, %d bytes\n",
				args[0], res.zxid, res.zxid, res.nodes, res.bytes)
			return nil
		},
	}
	cmd.Flags().StringVar(&admin, "admin", "127.0.0.1:8080", "admin address (paddock server --admin-addr) of the node to back up")
	return cmd
}

type saveResult struct {
	zxid  int64
	nodes int
	bytes int64
}

// snapshotClient has no overall timeout: a large state takes as long as it
// takes to stream; connecting and the response headers are bounded.
var snapshotClient = &http.Client{Transport: &http.Transport{
	Proxy:                 http.ProxyFromEnvironment,
	DialContext:           (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
	ResponseHeaderTimeout: 60 * time.Second,
}}

// saveSnapshot downloads GET /snapshot into a temporary file next to file,
// checks the body's SHA-256 against the trailer, syncs it and renames it
// into place, so file is either the complete snapshot or untouched.
func saveSnapshot(admin, file string) (saveResult, error) {
	var res saveResult
	resp, err := snapshotClient.Get(adminURL(admin, "/snapshot"))
	if err != nil {
		return res, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return res, fmt.Errorf("GET /snapshot: %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	if res.zxid, err = strconv.ParseInt(resp.Header.Get(server.SnapshotZxidHeader), 10, 64); err != nil {
		return res, fmt.Errorf("GET /snapshot: no %s header: is %s a paddock admin endpoint?", server.SnapshotZxidHeader, admin)
	}
	res.nodes, _ = strconv.Atoi(resp.Header.Get(server.SnapshotNodesHeader))
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*")
	if err != nil {
		return res, err
	}
	defer func() {
		if tmp != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	sum := sha256.New()
	if res.bytes, err = io.Copy(io.MultiWriter(tmp, sum), resp.Body); err != nil {
		return res, fmt.Errorf("download cut short after %d bytes: %w", res.bytes, err)
	}
	want := resp.Trailer.Get(server.SnapshotSHA256Trailer)
	if got := hex.EncodeToString(sum.Sum(nil)); want != got {
		if want == "" {
			return res, fmt.Errorf("download incomplete after %d bytes (the server did not finish the snapshot; see its log)", res.bytes)
		}
		return res, fmt.Errorf("download corrupt: SHA-256 %s, server sent %s", got, want)
	}
	if err := tmp.Sync(); err != nil {
		return res, err
	}
	if err := tmp.Close(); err != nil {
		return res, err
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return res, err
	}
	tmp = nil
	syncDir(filepath.Dir(file))
	return res, nil
}

// syncDir makes a rename in dir durable (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// seedFlags are the --data-dir, --id and --peer flags of restore and
// import-zk: the same as paddock server's for the node to be started.
type seedFlags struct {
	dataDir string
	id      string
	peers   []string
}

func (s *seedFlags) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&s.dataDir, "data-dir", "", "new data dir to create (must not exist, or be empty but for myid/zoo.cfg)")
	f.StringVar(&s.id, "id", "", "this node's id, for a node of a new cluster (as paddock server --id)")
	f.StringArrayVar(&s.peers, "peer", nil, "cluster member ID=HOST:CLUSTERPORT[;CLIENTHOST:CLIENTPORT] of the new cluster, repeated for every member (as paddock server --peer); none: standalone")
	_ = cmd.MarkFlagRequired("data-dir")
}

// seed writes state into the data dir and describes what was written.
func (s *seedFlags) seed(state *fsm.FSM) (string, error) {
	var peers []server.Peer
	for _, p := range s.peers {
		peer, err := server.ParsePeerFlag(p)
		if err != nil {
			return "", err
		}
		peers = append(peers, peer)
	}
	if len(peers) > 0 && s.id != "" {
		found := false
		for _, p := range peers {
			found = found || p.ID == s.id
		}
		if !found {
			return "", fmt.Errorf("--id %s is not among the --peer ids", s.id)
		}
	}
	if err := server.SeedDataDir(s.dataDir, state, peers); err != nil {
		return "", err
	}
	if len(peers) == 0 {
		return fmt.Sprintf("start it with: paddock server --data-dir %s", s.dataDir), nil
	}
	flags := make([]string, 0, len(s.peers))
	for _, p := range s.peers {
		flags = append(flags, "--peer "+p)
	}
	id := s.id
	if id == "" {
		id = "N"
	}
	return fmt.Sprintf("start it with: paddock server --data-dir %s --id %s %s\n(seed every member's data dir the same way, each with its own --id)",
		s.dataDir, id, strings.Join(flags, " ")), nil
}

func readSnapshotFile(path string) (*fsm.FSM, int64, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, 0, err
	}
	f, err := fsm.ReadSnapshotFile(fh)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", path, err)
	}
	return f, fi.Size(), nil
}

func newSnapshotRestoreCmd() *cobra.Command {
	var sf seedFlags
	cmd := &cobra.Command{
		Use:   "restore FILE --data-dir D [--id N --peer ID=HOST:PORT ...]",
		Short: "Seed a new data dir from a snapshot file",
		Long: `Seed a new data dir so that paddock server --data-dir D starts with exactly the
state in FILE. Without --peer the data dir is for a standalone server; with
--id and the --peer list of a new cluster it is for that node (seed every
member from the same file and start each with the same --id/--peer flags).`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, _, err := readSnapshotFile(args[0])
			if err != nil {
				return err
			}
			hint, err := sf.seed(f)
			if err != nil {
				return err
			}
			st := f.Stats()
			fmt.Fprintf(c.OutOrStdout(), "restored %s into %s: zxid %d, %d znodes, %d sessions\n%s\n",
				args[0], sf.dataDir, st.LastZxid, st.Nodes, st.Sessions, hint)
			return nil
		},
	}
	sf.register(cmd)
	return cmd
}

// inspectOutput is snapshot inspect's JSON.
type inspectOutput struct {
	File     string `json:"file"`
	FileSize int64  `json:"file_bytes"`
	fsm.Inspection
}

func newSnapshotInspectCmd() *cobra.Command {
	var asJSON bool
	var top int
	cmd := &cobra.Command{
		Use:   "inspect FILE",
		Short: "Describe a snapshot file: counts, sizes, zxid, biggest paths",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			f, size, err := readSnapshotFile(args[0])
			if err != nil {
				return err
			}
			out := inspectOutput{File: args[0], FileSize: size, Inspection: f.Inspect(top)}
			w := c.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(out)
			}
			return printInspection(w, &out)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&top, "top", 10, "rows in each top list")
	return cmd
}

func printInspection(w io.Writer, o *inspectOutput) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	rows := [][2]string{
		{"file", o.File},
		{"file size", fmt.Sprintf("%d B", o.FileSize)},
		{"last zxid", fmt.Sprintf("%d (%#x)", o.LastZxid, o.LastZxid)},
		{"znodes", strconv.Itoa(o.Znodes)},
		{"ephemerals", strconv.Itoa(o.Ephemerals)},
		{"sessions", strconv.Itoa(o.Sessions)},
		{"containers", strconv.Itoa(o.Containers)},
		{"TTL nodes", strconv.Itoa(o.TTLNodes)},
		{"ACL lists", strconv.Itoa(o.ACLLists)},
		{"data", fmt.Sprintf("%d B", o.DataBytes)},
		{"paths", fmt.Sprintf("%d B", o.PathBytes)},
	}
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", r[0], r[1])
	}
	fmt.Fprintf(tw, "\nLARGEST SUBTREES\tZNODES\tDATA BYTES\n")
	for _, p := range o.TopBySubtree {
		fmt.Fprintf(tw, "%s\t%d\t%d\n", p.Path, p.SubtreeNodes, p.SubtreeBytes)
	}
	fmt.Fprintf(tw, "\nLARGEST DATA\tDATA BYTES\n")
	for _, p := range o.TopByData {
		fmt.Fprintf(tw, "%s\t%d\n", p.Path, p.DataBytes)
	}
	return tw.Flush()
}

func newImportZKCmd() *cobra.Command {
	var sf seedFlags
	var from, logDir string
	var acceptCorruptTail bool
	cmd := &cobra.Command{
		Use:   "import-zk --from DIR --data-dir D [--log-dir DIR] [--id N --peer ID=HOST:PORT ...]",
		Short: "Migrate a stopped Apache ZooKeeper's data dir into a new Paddock data dir",
		Long: `Read Apache ZooKeeper's newest valid snapshot in DIR (its dataDir, holding
version-2/) and replay its transaction logs (in --log-dir, ZooKeeper's
dataLogDir, if separate), then seed a new Paddock data dir with the result, as
snapshot restore does. Stop ZooKeeper first (or copy its files).

Znodes keep their data, ACLs, versions, times and owners; sessions keep their
timeouts and ephemerals; zxids are renumbered 1, 2, ... in their original
order. Clients must open new sessions against Paddock. Everything imported
differently from ZooKeeper is listed as a warning.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if from == "" {
				return errors.New("--from is required")
			}
			f, rep, err := zkimport.Import(zkimport.Options{Dir: from, LogDir: logDir, AcceptCorruptTail: acceptCorruptTail})
			if err != nil {
				return err
			}
			w := c.OutOrStdout()
			for _, s := range rep.SkippedSnapshots {
				fmt.Fprintf(w, "skipped snapshot %s\n", s)
			}
			for _, s := range rep.Warnings {
				fmt.Fprintf(w, "warning: %s\n", s)
			}
			hint, err := sf.seed(f)
			if err != nil {
				return err
			}
			fmt.Fprintf(w, "imported %s (zxid %#x) + %d transactions from %d log file(s): ZooKeeper zxid %#x\n",
				rep.Snapshot, rep.SnapshotZxid, rep.Txns, len(rep.LogFiles), rep.ZooKeeperZxid)
			fmt.Fprintf(w, "into %s: zxid %d, %d znodes, %d sessions, %d ephemerals\n%s\n",
				sf.dataDir, rep.LastZxid, rep.Nodes, rep.Sessions, rep.Ephemerals, hint)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "ZooKeeper's dataDir (the directory holding version-2/)")
	cmd.Flags().StringVar(&logDir, "log-dir", "", "ZooKeeper's dataLogDir, if it differs from --from")
	cmd.Flags().BoolVar(&acceptCorruptTail, "accept-corrupt-tail", false,
		"import the transactions before a bad checksum or length in the last log file (ZooKeeper refuses such a log)")
	sf.register(cmd)
	return cmd
}
