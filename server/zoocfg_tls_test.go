package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pemStores writes a CA (ca.pem) and a certificate for 127.0.0.1 it
// signed, with its key (server.pem: a PEM key store), into dir; it returns
// their paths and a client certificate from the same CA.
func pemStores(t *testing.T, dir string) (keyStore, trustStore string, client tls.Certificate) {
	t.Helper()
	issue := func(serial int64, tmpl *x509.Certificate, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		if parent == nil {
			parent, parentKey = tmpl, key
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
		require.NoError(t, err)
		cert, err := x509.ParseCertificate(der)
		require.NoError(t, err)
		return cert, key, der
	}
	ca, caKey, caDER := issue(1, &x509.Certificate{Subject: pkix.Name{CommonName: "zoocfg test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}, nil, nil)
	leaf := func(serial int64, cn string) ([]byte, *ecdsa.PrivateKey) {
		_, key, der := issue(serial, &x509.Certificate{Subject: pkix.Name{CommonName: cn},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}, ca, caKey)
		return der, key
	}
	srvDER, srvKey := leaf(2, "127.0.0.1")
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	require.NoError(t, err)
	keyStore = writeFile(t, dir, "server.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}))+
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})))
	trustStore = writeFile(t, dir, "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})))
	cliDER, cliKey := leaf(3, "client")
	return keyStore, trustStore, tls.Certificate{Certificate: [][]byte{cliDER}, PrivateKey: cliKey}
}

// clientTLS is a client's TLS configuration for the server certificate of
// pemStores, presenting certs.
func clientTLS(t *testing.T, trustStore string, certs ...tls.Certificate) *tls.Config {
	t.Helper()
	roots, err := loadCAs(trustStore)
	require.NoError(t, err)
	return &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", Certificates: certs}
}

// tlsHandshakeWith reports whether a client with cli completes a TLS
// handshake (and a first read) with a server using cfg.
func tlsHandshakeWith(t *testing.T, cfg, cli *tls.Config) error {
	t.Helper()
	srvEnd, cliEnd := net.Pipe()
	defer srvEnd.Close()
	defer cliEnd.Close()
	srvErr := make(chan error, 1)
	go func() {
		s := tls.Server(srvEnd, cfg)
		err := s.Handshake()
		if err == nil {
			_, err = s.Write([]byte("x"))
		}
		srvErr <- err
		_ = srvEnd.Close()
	}()
	c := tls.Client(cliEnd, cli)
	err := c.Handshake()
	if err == nil {
		_, err = c.Read(make([]byte, 1)) // TLS 1.3: the server's verdict on the client certificate comes after
	}
	if sErr := <-srvErr; sErr != nil {
		return sErr
	}
	return err
}

// TestZooCfgClientAuthNeedWithoutTrustStore: ssl.clientAuth=need (ZooKeeper's
// default with a secure port) without ssl.trustStore.location used to ask
// no client for a certificate at all. ZooKeeper 3.8 would fail every such
// connection (its x509 provider has no trust manager without a trust
// store), so the configuration is refused; want keeps ZooKeeper's
// meaning: no certificate connects, a presented one is refused.
func TestZooCfgClientAuthNeedWithoutTrustStore(t *testing.T) {
	dir := t.TempDir()
	keyStore, trustStore, clientCert := pemStores(t, dir)
	base := "dataDir=" + dir + "\nsecureClientPort=2281\nssl.keyStore.location=" + keyStore + "\n"
	for _, text := range []string{"", "ssl.clientAuth=need\n", "ssl.clientAuth=NEED\n"} {
		cfg, _, err := loadZooCfg(t, base+text)
		require.NoError(t, err)
		require.ErrorContains(t, cfg.Validate(), "set ssl.trustStore.location", text)
	}

	cfg, _, err := loadZooCfg(t, base+"ssl.trustStore.location="+trustStore+"\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Equal(t, tls.RequireAndVerifyClientCert, cfg.TLS.ClientAuth, "need, ZooKeeper's default")
	require.Error(t, tlsHandshakeWith(t, cfg.TLS, clientTLS(t, trustStore)), "need: no certificate")
	require.NoError(t, tlsHandshakeWith(t, cfg.TLS, clientTLS(t, trustStore, clientCert)))

	cfg, _, err = loadZooCfg(t, base+"ssl.clientAuth=want\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.NoError(t, tlsHandshakeWith(t, cfg.TLS, clientTLS(t, trustStore)), "want: no certificate")
	require.Error(t, tlsHandshakeWith(t, cfg.TLS, clientTLS(t, trustStore, clientCert)),
		"want without a trust store: a certificate is refused")

	cfg, _, err = loadZooCfg(t, base+"ssl.clientAuth=none\n")
	require.NoError(t, err)
	require.NoError(t, cfg.Validate())
	require.Equal(t, tls.NoClientCert, cfg.TLS.ClientAuth)

	// Flags without a zoo.cfg keep their default: need with --tls-ca,
	// none without; --tls-client-auth need without --tls-ca is refused.
	flags := TLSFiles{KeyStore: keyStore}
	tc, err := flags.ServerTLSConfig()
	require.NoError(t, err)
	require.Equal(t, tls.NoClientCert, tc.ClientAuth)
	flags.ClientAuth = ClientAuthNeed
	_, err = flags.ServerTLSConfig()
	require.ErrorContains(t, err, "needs a trust store")
}

// A key store whose private key is encrypted (ZooKeeper reads it with
// ssl.keyStore.password) is refused with an error that says so and how to
// write the key unencrypted; it said only "tls: failed to parse private
// key".
func TestEncryptedKeyStoreIsNamed(t *testing.T) {
	dir := t.TempDir()
	keyStore, trustStore, _ := pemStores(t, dir)
	certOnly, err := os.ReadFile(keyStore)
	require.NoError(t, err)
	blk, _ := pem.Decode(certOnly)
	enc := writeFile(t, dir, "encrypted.pem", string(pem.EncodeToMemory(blk))+
		string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte("0123456789abcdef0123456789abcdef")})))
	cfg, _, err := loadZooCfg(t, "dataDir="+dir+"\nsecureClientPort=2281\nssl.keyStore.location="+enc+
		"\nssl.keyStore.password=secret\nssl.trustStore.location="+trustStore+"\n")
	require.NoError(t, err)
	err = cfg.Validate()
	require.ErrorContains(t, err, "encrypted")
	require.ErrorContains(t, err, enc)
	require.ErrorContains(t, err, "openssl pkey")
}
