package server

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// adminCommands maps ZooKeeper AdminServer command names and aliases to
// the four-letter word whose data they serve.
var adminCommands = map[string]string{
	"ruok": "ruok", "srvr": "srvr", "server_stats": "srvr", "stat": "stat", "stats": "stat",
	"mntr": "mntr", "monitor": "mntr", "cons": "cons", "connections": "cons",
	"conf": "conf", "configuration": "conf", "config": "conf", "envi": "envi", "environment": "envi", "env": "envi",
	"wchs": "wchs", "watch_summary": "wchs", "wchc": "wchc", "watches": "wchc",
	"wchp": "wchp", "watches_by_path": "wchp", "dump": "dump", "dirs": "dirs",
	"leader": "leader", "lead": "leader", "isro": "isro", "is_read_only": "isro", "voting_view": "voting_view",
}

// adminCommandNames are the names ZooKeeper's AdminServer reports in a
// response's "command", whichever alias was asked for.
var adminCommandNames = map[string]string{
	"ruok": "ruok", "srvr": "server_stats", "stat": "stats", "mntr": "monitor", "cons": "connections",
	"conf": "configuration", "envi": "environment", "wchs": "watch_summary", "wchc": "watches",
	"wchp": "watches_by_path", "dump": "dump", "dirs": "dirs", "leader": "leader", "isro": "is_read_only",
	"voting_view": "voting_view",
}

// jsonValue types a mntr value as ZooKeeper's AdminServer does: a number
// when it is one, else the string.
func jsonValue(v string) any {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		return f
	}
	return v
}

// AdminHandler serves ZooKeeper's AdminServer commands as JSON under
// /commands/<name>, Prometheus metrics under /metrics, /healthz (the
// process is live), /readyz (serving with a leader), and the cluster
// membership under /cluster/members and /cluster/transfer-leadership.
func (s *Server) AdminHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/commands/{name}", s.adminCommand)
	mux.HandleFunc("/commands", func(w http.ResponseWriter, _ *http.Request) {
		names := make([]string, 0, len(adminCommands))
		for n := range adminCommands {
			names = append(names, n)
		}
		writeJSON(w, http.StatusOK, map[string]any{"commands": names})
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if s.Leader() == "" {
			http.Error(w, "no leader", http.StatusServiceUnavailable)
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /cluster/members", func(w http.ResponseWriter, _ *http.Request) {
		members, err := s.Members()
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"members": members, "leader": s.Leader()})
	})
	mux.HandleFunc("POST /cluster/members", func(w http.ResponseWriter, r *http.Request) {
		var m newMember
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil || m.ID == "" || m.Addr == "" {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "want JSON {\"id\":..., \"addr\":\"host:port\", " +
				"\"observer\":false, \"election_port\":\"3888\", \"client_addr\":\"host:2181\"} (the last two optional)"})
			return
		}
		adminResult(w, s.AddPeer(Peer{ID: m.ID, Addr: m.Addr, Observer: m.Observer,
			ElectionPort: m.ElectionPort, ClientAddr: m.ClientAddr}))
	})
	mux.HandleFunc("DELETE /cluster/members/{id}", func(w http.ResponseWriter, r *http.Request) {
		adminResult(w, s.RemoveMember(r.PathValue("id")))
	})
	mux.HandleFunc("GET /snapshot", s.serveSnapshot)
	mux.HandleFunc("POST /cluster/transfer-leadership", func(w http.ResponseWriter, r *http.Request) {
		adminResult(w, s.TransferLeadership(r.URL.Query().Get("to")))
	})
	return s.adminGuard(mux)
}

func adminResult(w http.ResponseWriter, err error) {
	switch {
	case err == nil:
		writeJSON(w, http.StatusOK, map[string]any{"error": nil})
	case errors.Is(err, ErrStandalone):
		writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
	default:
		writeJSON(w, http.StatusInternalServerError, map[string]string{"error": err.Error()})
	}
}

// newMember is the body of POST /cluster/members: the member's id and
// cluster address, and optionally its election port and client address
// for /zookeeper/config.
type newMember struct {
	ID           string `json:"id"`
	Addr         string `json:"addr"`
	Observer     bool   `json:"observer"`
	ElectionPort string `json:"election_port,omitempty"`
	ClientAddr   string `json:"client_addr,omitempty"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func (s *Server) adminCommand(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	word, ok := adminCommands[name]
	if !ok {
		// As ZooKeeper's AdminServer: 200, and the error in the body.
		writeJSON(w, http.StatusOK, map[string]any{"command": name, "error": "Unknown command: " + name})
		return
	}
	out := map[string]any{"command": adminCommandNames[word], "error": nil}
	switch word {
	case "ruok":
	case "mntr":
		for _, kv := range s.MonitorValues() {
			out[strings.TrimPrefix(kv[0], "zk_")] = jsonValue(kv[1])
		}
	case "leader":
		out["is_leader"] = s.isLeader()
		out["leader_id"] = jsonValue(s.Leader())
	case "isro":
		out["read_only"] = s.readOnlyNow()
	case "voting_view":
		members, err := s.Members()
		if err != nil {
			out["error"] = err.Error()
		}
		out["current_config"] = members
	case "wchc":
		out["session_id_to_watched_paths"] = s.watches.BySession()
	case "wchp":
		out["path_to_session_ids"] = s.watches.ByPath()
	case "wchs":
		sum := s.watches.Summary()
		out["num_connections"], out["num_paths"], out["num_total_watches"] = sum.Connections, sum.Paths, sum.Watches
	default:
		out["output"] = s.FourLetterWord(word)
	}
	writeJSON(w, http.StatusOK, out)
}

// startHTTP starts the admin and metrics listeners configured.
func (s *Server) startHTTP() error {
	serve := func(addr string, h http.Handler) error {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return err
		}
		hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		s.http = append(s.http, hs)
		go func() { _ = hs.Serve(ln) }()
		s.log.Info("serving HTTP", "addr", ln.Addr().String())
		return nil
	}
	if s.cfg.AdminAddr != "" {
		if err := serve(s.cfg.AdminAddr, s.AdminHandler()); err != nil {
			return err
		}
	}
	if s.cfg.MetricsAddr != "" {
		mux := http.NewServeMux()
		mux.Handle("/metrics", promhttp.HandlerFor(s.metrics.reg, promhttp.HandlerOpts{}))
		return serve(s.cfg.MetricsAddr, mux)
	}
	return nil
}
