package server

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The admin endpoint's sensitive routes refuse what a web page in the
// operator's browser can send: a cross-origin POST (CSRF) and a request
// naming another host (DNS rebinding); read-only routes stay open.
func TestAdminGuard(t *testing.T) {
	srv := attachServer(t, func(cfg *Config) { cfg.AdminHosts = []string{"zk1.internal"} })
	h := srv.AdminHandler()
	do := func(method, target, origin string) int {
		var body *strings.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"id":"evil","addr":"203.0.113.9:2888","observer":true}`)
		} else {
			body = strings.NewReader("")
		}
		req := httptest.NewRequest(method, target, body)
		req.Header.Set("Content-Type", "text/plain")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	require.Equal(t, http.StatusForbidden, do(http.MethodPost, "http://127.0.0.1:8080/cluster/members", "http://evil.example"))
	require.Equal(t, http.StatusForbidden, do(http.MethodGet, "http://attacker.example:8080/snapshot", ""))
	require.Equal(t, http.StatusForbidden, do(http.MethodGet, "http://attacker.example:8080/debug/pprof/heap", ""))
	require.Equal(t, http.StatusOK, do(http.MethodGet, "http://127.0.0.1:8080/snapshot", ""))
	require.Equal(t, http.StatusOK, do(http.MethodGet, "http://zk1.internal:8080/snapshot", ""), "an allowed host")
	require.Equal(t, http.StatusOK, do(http.MethodGet, "http://[::1]:8080/snapshot", "http://[::1]:8080"), "same origin")
	require.Equal(t, http.StatusOK, do(http.MethodGet, "http://attacker.example:8080/metrics", ""), "read-only routes stay open")
	require.NotEqual(t, http.StatusOK, do(http.MethodGet, "http://127.0.0.1:8080/debug/pprof/cmdline", ""),
		"the command line (it may hold --super-digest) is not served")
	require.Equal(t, http.StatusConflict, do(http.MethodPost, "http://localhost:8080/cluster/members", ""),
		"a standalone server has no members to change, but the request gets through")
}

// Cluster TLS without a CA is refused: Go would check peers against the
// system's roots, and any public certificate would pass for a member.
func TestClusterTLSNeedsACA(t *testing.T) {
	cfg := DefaultConfig()
	cfg.ClusterTLS = &tls.Config{MinVersion: tls.VersionTLS12}
	require.ErrorContains(t, cfg.Validate(), "cluster TLS needs a CA")
	cfg = DefaultConfig()
	cfg.ClusterTLS = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: x509.NewCertPool()}
	require.NoError(t, cfg.Validate())
}
