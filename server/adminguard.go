package server

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// adminGuard protects the admin endpoint's sensitive routes (anything but
// GET, GET /snapshot, /debug/pprof) from a web page in the operator's
// browser, which can reach 127.0.0.1:
//   - a request whose Origin names another site is refused, so a page
//     cannot POST a membership change or a leadership transfer (a simple
//     cross-origin POST needs no preflight);
//   - the Host header must be an IP address, "localhost", or one of
//     Config.AdminHosts, so a DNS-rebinding page (whose requests carry its
//     own host name) cannot read /snapshot (the whole tree, ignoring ACLs,
//     and the cluster secret).
//
// Read-only routes (/metrics, /commands, /healthz, /readyz, GET
// /cluster/members) stay open to any Host, for scrapers and probes that
// use a host name, as ZooKeeper's AdminServer serves its commands.
func (s *Server) adminGuard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if sensitiveAdminRoute(r) {
			if msg := s.adminRefusal(r); msg != "" {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": msg})
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// sensitiveAdminRoute reports whether r changes state or reads what the
// ACLs protect.
func sensitiveAdminRoute(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead ||
		r.URL.Path == "/snapshot" || strings.HasPrefix(r.URL.Path, "/debug/pprof")
}

// adminRefusal explains why r is refused, or returns "".
func (s *Server) adminRefusal(r *http.Request) string {
	host := hostOnly(r.Host)
	if !s.adminHostAllowed(host) {
		return "admin: Host " + r.Host + " is not an IP address, localhost or an allowed admin host " +
			"(--admin-allowed-hosts); refused to protect against DNS rebinding"
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return "admin: cross-origin request from " + origin + " refused"
		}
	}
	return ""
}

// adminHostAllowed reports whether host may name the admin endpoint on a
// sensitive route.
func (s *Server) adminHostAllowed(host string) bool {
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	return slices.ContainsFunc(s.cfg.AdminHosts, func(h string) bool { return strings.EqualFold(h, host) })
}

// hostOnly strips the port from a Host header value.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return strings.Trim(hostport, "[]")
}
