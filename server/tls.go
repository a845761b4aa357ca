package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/paddockzk/paddock/fsm"
	"github.com/paddockzk/paddock/internal/wire"
)

// TLS on the client port and the cluster port, with crypto/tls.
//
// The secure client port (ZooKeeper's secureClientPort) serves the same
// protocol over TLS. With ClientAuth set to verify certificates, a
// client's certificate subject becomes an "x509" identity usable in ACLs,
// in the RFC 2253 form Java prints and ZooKeeper's
// X509AuthenticationProvider uses (x509:O=example,CN=app for
// openssl's -subj /CN=app/O=example; see x500name.go).

// TLSFiles names PEM files, the way ZooKeeper 3.8 accepts PEM key and trust
// stores (ssl.keyStore.location with ssl.keyStore.type=PEM).
type TLSFiles struct {
	// KeyStore holds the certificate chain and its private key (one PEM
	// file, or set CertFile/KeyFile separately).
	KeyStore string
	CertFile string
	KeyFile  string
	// TrustStore holds the CA certificates that client (or peer)
	// certificates must chain to.
	TrustStore string
	// ClientAuth is ZooKeeper's ssl.clientAuth: "none", "want" or "need"
	// (ClientAuthNeed). Empty is need when TrustStore is set, none
	// otherwise (the --tls-client-auth default); a zoo.cfg's empty value is
	// ZooKeeper's default, need (Config.Validate).
	ClientAuth string
}

// ClientAuthNeed is ssl.clientAuth=need: every client presents a
// certificate that chains to the trust store.
const ClientAuthNeed = "need"

func (f TLSFiles) empty() bool { return f == TLSFiles{} }

// ServerTLSConfig builds a *tls.Config for a listener from PEM files.
func (f TLSFiles) ServerTLSConfig() (*tls.Config, error) {
	certFile, keyFile := f.CertFile, f.KeyFile
	if f.KeyStore != "" {
		certFile, keyFile = f.KeyStore, f.KeyStore
	}
	if certFile == "" || keyFile == "" {
		return nil, errors.New("tls: a certificate and a key are required")
	}
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		if encryptedKey(keyFile) {
			return nil, fmt.Errorf("tls: the private key in %s is encrypted; Paddock reads unencrypted PEM keys only "+
				"(ssl.keyStore.password is not used): write it unencrypted, e.g. `openssl pkey -in KEY -out PLAIN`, "+
				"and keep the file readable only by the server", keyFile)
		}
		return nil, fmt.Errorf("tls: load key pair: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if f.TrustStore != "" {
		pool, err := loadCAs(f.TrustStore)
		if err != nil {
			return nil, err
		}
		cfg.ClientCAs, cfg.RootCAs = pool, pool
	}
	switch strings.ToLower(f.ClientAuth) {
	case "":
		if cfg.ClientCAs != nil {
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
		}
	case ClientAuthNeed, "required":
		if cfg.ClientCAs == nil {
			// ZooKeeper 3.8 would check the certificate against the JVM's
			// trust store, then fail every connection: its x509
			// authentication provider has no trust manager without
			// ssl.trustStore.location.
			return nil, errors.New("tls: ssl.clientAuth=need (ZooKeeper's default with a secure client port) needs " +
				"a trust store for client certificates: set ssl.trustStore.location (--tls-ca), or " +
				"ssl.clientAuth=want or none (--tls-client-auth)")
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case "want":
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
		if cfg.ClientCAs == nil {
			// As ZooKeeper without a trust store: a client without a
			// certificate connects, one that presents a certificate is
			// refused (not checked against the system's roots, whose
			// certificates would become x509 identities).
			cfg.ClientCAs = x509.NewCertPool()
		}
	case "none":
		cfg.ClientAuth = tls.NoClientCert
	default:
		return nil, fmt.Errorf("tls: ssl.clientAuth must be none, want or need, not %q", f.ClientAuth)
	}
	return cfg, nil
}

// encryptedKey reports whether file holds an encrypted PEM private key:
// PKCS#8 "ENCRYPTED PRIVATE KEY", or OpenSSL's legacy Proc-Type
// 4,ENCRYPTED header.
func encryptedKey(file string) bool {
	rest, err := os.ReadFile(file)
	if err != nil {
		return false
	}
	for {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			return false
		}
		if blk.Type == "ENCRYPTED PRIVATE KEY" ||
			(strings.HasSuffix(blk.Type, "PRIVATE KEY") && strings.Contains(blk.Headers["Proc-Type"], "ENCRYPTED")) {
			return true
		}
	}
}

func loadCAs(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls: read trust store: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		if blk, _ := pem.Decode(b); blk == nil {
			return nil, fmt.Errorf("tls: no PEM certificates in %s", file)
		}
	}
	return pool, nil
}

// x509Identity returns the "x509" identity of a verified client
// certificate, if the connection is TLS and presented one.
func x509Identity(nc net.Conn) (wire.Id, bool) {
	tc, ok := nc.(*tls.Conn)
	if !ok {
		return wire.Id{}, false
	}
	st := tc.ConnectionState()
	if len(st.PeerCertificates) == 0 || len(st.VerifiedChains) == 0 {
		return wire.Id{}, false
	}
	id, err := x509ClientID(st.PeerCertificates[0])
	if err != nil {
		// Go's parser accepted a subject Java refuses: ZooKeeper would
		// refuse the certificate, so the client gets no x509 identity.
		return wire.Id{}, false
	}
	return wire.Id{Scheme: "x509", ID: id}, true
}

// tlsHandshake completes a TLS handshake within the handshake timeout.
func (c *conn) tlsHandshake() bool {
	tc, ok := c.nc.(*tls.Conn)
	if !ok {
		return true
	}
	_ = tc.SetDeadline(time.Now().Add(c.s.cfg.HandshakeTimeout))
	if err := tc.Handshake(); err != nil {
		c.logDrop("tls handshake", err)
		return false
	}
	_ = tc.SetDeadline(time.Time{})
	if id, ok := x509Identity(tc); ok {
		c.addIdentity(id)
		if su := c.s.cfg.X509SuperUser; su != "" && id.ID == su {
			// As ZooKeeper's X509AuthenticationProvider: the super user
			// also gets a "super" id, which every ACL check lets through.
			c.addIdentity(wire.Id{Scheme: fsm.SuperID.Scheme, ID: id.ID})
		}
	}
	return true
}

// clusterTLS wraps cluster connections in mutual TLS when configured.
func (m *clusterMux) serverTLS(c net.Conn) net.Conn {
	if m.tls == nil {
		return c
	}
	return tls.Server(c, m.tls)
}

func (m *clusterMux) clientTLS(c net.Conn, addr string) (net.Conn, error) {
	if m.tls == nil {
		return c, nil
	}
	cfg := m.tls.Clone()
	if host, _, err := net.SplitHostPort(addr); err == nil && cfg.ServerName == "" {
		cfg.ServerName = host
	}
	if !m.checkHost {
		chainOnly(cfg)
	}
	tc := tls.Client(c, cfg)
	if err := tc.Handshake(); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("cluster tls handshake with %s: %w", addr, err)
	}
	return tc, nil
}
