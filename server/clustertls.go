package server

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"time"
)

// peerLookupTimeout bounds resolving a peer certificate's host names to
// check them against the address a cluster connection comes from.
const peerLookupTimeout = 2 * time.Second

// verifyPeerHost checks, as ZooKeeper's ssl.quorum.hostnameVerification
// (on by default), that the certificate a cluster peer presented names
// the host the connection comes from: an IP SAN equal to the remote
// address, or a DNS name (SAN, or the subject CN without SANs) that
// resolves to it. Chaining to the cluster CA alone is not enough: a
// deployment that uses one CA for clients and nodes would otherwise let
// any client certificate holder join the cluster port as a peer.
func verifyPeerHost(tc *tls.Conn) error {
	certs := tc.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return errors.New("no peer certificate")
	}
	leaf := certs[0]
	host, _, err := net.SplitHostPort(tc.RemoteAddr().String())
	if err != nil {
		return err
	}
	remote := net.ParseIP(host)
	if remote == nil {
		return fmt.Errorf("remote address %q is not an IP address", host)
	}
	if leaf.VerifyHostname(remote.String()) == nil {
		return nil
	}
	names := leaf.DNSNames
	if len(names) == 0 && leaf.Subject.CommonName != "" {
		names = []string{leaf.Subject.CommonName}
	}
	ctx, cancel := context.WithTimeout(context.Background(), peerLookupTimeout)
	defer cancel()
	for _, name := range names {
		addrs, err := net.DefaultResolver.LookupHost(ctx, name)
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if ip := net.ParseIP(a); ip != nil && ip.Equal(remote) {
				return nil
			}
		}
	}
	return fmt.Errorf("peer certificate %q names no host at %s (ssl.quorum.hostnameVerification)", leaf.Subject, remote)
}

// chainOnly makes a client TLS configuration check the peer's chain but
// not its host name (ssl.quorum.hostnameVerification=false).
func chainOnly(cfg *tls.Config) {
	roots := cfg.RootCAs
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("no peer certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		return err
	}
}
