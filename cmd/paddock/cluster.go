package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/paddockzk/paddock/server"
	"github.com/spf13/cobra"
)

func newClusterCmd() *cobra.Command {
	var admin string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Inspect and change cluster membership through a node's admin endpoint",
		Long: `Membership changes go through Raft on the leader; any node's admin endpoint
(paddock server --admin-addr, or admin.serverPort in zoo.cfg) forwards them.`,
	}
	cmd.PersistentFlags().StringVar(&admin, "admin", "127.0.0.1:8080", "admin address of any cluster node")
	cmd.AddCommand(
		&cobra.Command{
			Use: "list", Short: "List members and the leader", Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error { return clusterList(c.OutOrStdout(), admin) },
		},
		&cobra.Command{
			Use: "add ID HOST:CLUSTERPORT[:ELECTIONPORT][;[CLIENTHOST:]CLIENTPORT]", Args: cobra.ExactArgs(2),
			Short: "Add a voter (start it first with --join and the full --peer list)",
			Long: "Add a voter (start it first with --join and the full --peer list). The address may be written as the\n" +
				"value of a zoo.cfg server.N line, host:quorumPort:electionPort;clientPort: the election port and the\n" +
				"client address are then published in /zookeeper/config, for clients that follow it (Curator).",
			RunE: func(c *cobra.Command, args []string) error { return clusterAdd(admin, args[0], args[1], false) },
		},
		&cobra.Command{
			Use: "add-observer ID HOST:CLUSTERPORT[:ELECTIONPORT][;[CLIENTHOST:]CLIENTPORT]", Args: cobra.ExactArgs(2),
			Short: "Add an observer (a non-voting member that serves reads)",
			RunE:  func(c *cobra.Command, args []string) error { return clusterAdd(admin, args[0], args[1], true) },
		},
		&cobra.Command{
			Use: "remove ID", Short: "Remove a member", Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				return adminCall(http.MethodDelete, admin, "/cluster/members/"+url.PathEscape(args[0]), nil)
			},
		},
		&cobra.Command{
			Use: "transfer-leadership [ID]", Short: "Hand leadership to ID (or the most up-to-date follower)",
			Args: cobra.MaximumNArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				q := ""
				if len(args) == 1 {
					q = "?to=" + url.QueryEscape(args[0])
				}
				return adminCall(http.MethodPost, admin, "/cluster/transfer-leadership"+q, nil)
			},
		},
	)
	return cmd
}

var adminClient = &http.Client{Timeout: 60 * time.Second}

func adminURL(admin, path string) string {
	if !strings.Contains(admin, "://") {
		admin = "http://" + admin
	}
	return strings.TrimSuffix(admin, "/") + path
}

func adminCall(method, admin, path string, body any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, adminURL(admin, path), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := adminClient.Do(req)
	if err != nil {
		return unreachableAdmin(admin, err)
	}
	defer resp.Body.Close()
	var out struct {
		Error *string `json:"error"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusOK {
		msg := resp.Status
		if out.Error != nil {
			msg = *out.Error
		}
		return fmt.Errorf("%s %s: %s", method, path, msg)
	}
	return nil
}

func clusterList(w io.Writer, admin string) error {
	resp, err := adminClient.Get(adminURL(admin, "/cluster/members"))
	if err != nil {
		return unreachableAdmin(admin, err)
	}
	defer resp.Body.Close()
	var out struct {
		Members []struct {
			ID       string `json:"id"`
			Addr     string `json:"addr"`
			Observer bool   `json:"observer"`
			Leader   bool   `json:"leader"`
		} `json:"members"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("list members: %s", out.Error)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tADDRESS\tROLE")
	for _, m := range out.Members {
		role := "follower"
		switch {
		case m.Leader:
			role = "leader"
		case m.Observer:
			role = "observer"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", m.ID, m.Addr, role)
	}
	return tw.Flush()
}

// clusterAdd adds member id at addr, a cluster address or the value of a
// zoo.cfg server line (its role is the command's).
func clusterAdd(admin, id, addr string, observer bool) error {
	p, err := server.ParseServerLine(id, addr)
	if err != nil {
		return err
	}
	if p.Observer && !observer {
		return fmt.Errorf("%s has the observer role: add an observer with paddock cluster add-observer", addr)
	}
	body := map[string]any{"id": id, "addr": p.Addr, "observer": observer}
	if p.ElectionPort != "" {
		body["election_port"] = p.ElectionPort
	}
	if p.ClientAddr != "" {
		body["client_addr"] = p.ClientAddr
	}
	return adminCall(http.MethodPost, admin, "/cluster/members", body)
}

// unreachableAdmin says what to check when no admin endpoint answers at
// admin.
func unreachableAdmin(admin string, err error) error {
	return fmt.Errorf("no admin endpoint answers at %s: start the node with --admin-addr (or admin.serverPort in "+
		"zoo.cfg) and pass that address with --admin: %w", admin, err)
}
