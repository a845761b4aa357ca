package integration_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	pclient "github.com/paddockzk/paddock/client"
	"github.com/paddockzk/paddock/test/zktest"
	"github.com/stretchr/testify/require"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and client
// certificates, all in memory.
type testPKI struct {
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	pool   *x509.CertPool
	serial int64
}

func newPKI(t *testing.T) *testPKI {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "paddock test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &testPKI{ca: ca, caKey: key, pool: pool, serial: 1}
}

func (p *testPKI) cert(t *testing.T, subject pkix.Name) tls.Certificate {
	return p.certFor(t, subject, []net.IP{net.ParseIP("127.0.0.1")})
}

// certFor issues a certificate for subject naming the addresses ips.
func (p *testPKI) certFor(t *testing.T, subject pkix.Name, ips []net.IP) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: ips,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// certRaw issues a client certificate whose subject is the DER Name raw.
func (p *testPKI) certRaw(t *testing.T, raw []byte) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	p.serial++
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(p.serial), RawSubject: raw,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func (p *testPKI) serverConfig(t *testing.T, clientAuth tls.ClientAuthType) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.cert(t, pkix.Name{CommonName: "127.0.0.1"})},
		ClientCAs: p.pool, RootCAs: p.pool, ClientAuth: clientAuth, MinVersion: tls.VersionTLS12}
}

func TestTLSGoZookeeper(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	srv := zktest.Start(t, zktest.WithTLS(pki.serverConfig(t, tls.VerifyClientCertIfGiven)))
	dialer := func(network, address string, timeout time.Duration) (net.Conn, error) {
		return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, network, address, &tls.Config{RootCAs: pki.pool})
	}
	conn, ev, err := zk.Connect([]string{srv.SecureAddr()}, 5*time.Second, zk.WithDialer(dialer), zk.WithLogInfo(false))
	require.NoError(t, err)
	defer conn.Close()
	for e := range ev {
		if e.State == zk.StateHasSession {
			break
		}
	}
	_, err = conn.Create("/over-tls", []byte("secret"), 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err)
	// A plaintext client on the TLS port gets nowhere.
	nc, err := net.Dial("tcp", srv.SecureAddr())
	require.NoError(t, err)
	defer nc.Close()
	_, _ = nc.Write([]byte("ruok"))
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 16)
	n, _ := nc.Read(buf)
	require.NotEqual(t, "imok", string(buf[:n]), "the TLS port does not speak plaintext")
}

func TestTLSClientCertificateIsX509Identity(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	srv := zktest.Start(t, zktest.WithTLS(pki.serverConfig(t, tls.VerifyClientCertIfGiven)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	appCert := pki.cert(t, pkix.Name{CommonName: "app-1", Organization: []string{"Paddock Test"}})
	app, err := pclient.Connect(ctx, []string{srv.SecureAddr()},
		pclient.WithTLS(&tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{appCert}}))
	require.NoError(t, err)
	defer app.Close()
	ids, err := app.WhoAmI(ctx)
	require.NoError(t, err)
	// ZooKeeper's id: the subject's X500Principal.getName(), RDNs last
	// first (Go encodes O before CN; openssl's -subj /CN=app-1/O=... would
	// give O=...,CN=app-1).
	subject := "CN=app-1,O=Paddock Test"
	require.Contains(t, ids, pclient.ClientInfo{AuthScheme: "x509", User: subject})

	_, _, err = app.Create(ctx, "/app-only", []byte("x"), pclient.ModePersistent,
		[]pclient.ACL{{Perms: pclient.PermAll, ID: pclient.Id{Scheme: "x509", ID: subject}}})
	require.NoError(t, err)
	_, _, err = app.Get(ctx, "/app-only")
	require.NoError(t, err)

	// addAuth("x509", ...) is answered OK on a connection with a verified
	// certificate, as ZooKeeper's X509AuthenticationProvider (it used to
	// fail and close the connection).
	require.NoError(t, app.AddAuth(ctx, "x509", nil))
	_, _, err = app.Get(ctx, "/app-only")
	require.NoError(t, err)

	anon, err := pclient.Connect(ctx, []string{srv.SecureAddr()}, pclient.WithTLS(&tls.Config{RootCAs: pki.pool}))
	require.NoError(t, err)
	defer anon.Close()
	_, _, err = anon.Get(ctx, "/app-only")
	require.ErrorIs(t, err, pclient.ErrNoAuth)
	require.ErrorIs(t, anon.AddAuth(ctx, "x509", nil), pclient.ErrAuthFailed, "no certificate")
}

// TestTLSX509IdentityJavaForm: a subject with domain components, a
// multi-valued RDN, serialNumber and characters RFC 2253 escapes is the
// identity ZooKeeper would give it (Java's X500Principal.getName()), so an
// ACL copied from ZooKeeper matches; the form Paddock used before (Go's
// pkix.Name.String) does not.
func TestTLSX509IdentityJavaForm(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	srv := zktest.Start(t, zktest.WithTLS(pki.serverConfig(t, tls.VerifyClientCertIfGiven)))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	atv := func(oid asn1.ObjectIdentifier, v string) pkix.AttributeTypeAndValue {
		return pkix.AttributeTypeAndValue{Type: oid, Value: v}
	}
	dc, uid := asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	raw, err := asn1.Marshal(pkix.RDNSequence{
		{atv(dc, "com")}, {atv(dc, "example")},
		{atv(uid, "u1"), atv(asn1.ObjectIdentifier{2, 5, 4, 5}, "42")}, // one RDN; DER sorts serialNumber first
		{atv(asn1.ObjectIdentifier{2, 5, 4, 3}, " a=b#c, \\d+<é>; ")},
	})
	require.NoError(t, err)
	var rdns pkix.RDNSequence
	_, err = asn1.Unmarshal(raw, &rdns)
	require.NoError(t, err)
	var subject pkix.Name
	subject.FillFromRDNSequence(&rdns)
	goForm := subject.String()
	cert := pki.certRaw(t, raw)
	app, err := pclient.Connect(ctx, []string{srv.SecureAddr()},
		pclient.WithTLS(&tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{cert}}))
	require.NoError(t, err)
	defer app.Close()

	javaForm := `CN=\ a\=b\#c\, \\d\+\<é\>\;\ ,2.5.4.5=#13023432+UID=u1,DC=example,DC=com`
	ids, err := app.WhoAmI(ctx)
	require.NoError(t, err)
	require.Contains(t, ids, pclient.ClientInfo{AuthScheme: "x509", User: javaForm})

	_, _, err = app.Create(ctx, "/java-form", nil, pclient.ModePersistent,
		[]pclient.ACL{{Perms: pclient.PermAll, ID: pclient.Id{Scheme: "x509", ID: javaForm}}})
	require.NoError(t, err)
	_, _, err = app.Get(ctx, "/java-form")
	require.NoError(t, err, "an ACL with Java's form of the subject admits the client")

	// An ACL written with the old Go form no longer matches; setACL with
	// the Java form (by a client the ACL admits) rewrites it.
	require.NotEqual(t, javaForm, goForm)
	_, _, err = app.Create(ctx, "/go-form", nil, pclient.ModePersistent,
		[]pclient.ACL{{Perms: pclient.PermAll, ID: pclient.Id{Scheme: "x509", ID: goForm}}, pclient.WorldACL(pclient.PermAdmin)[0]})
	require.NoError(t, err)
	_, _, err = app.Get(ctx, "/go-form")
	require.ErrorIs(t, err, pclient.ErrNoAuth, "x509:%s", goForm)
	_, err = app.SetACL(ctx, "/go-form", []pclient.ACL{{Perms: pclient.PermAll, ID: pclient.Id{Scheme: "x509", ID: javaForm}}}, -1)
	require.NoError(t, err)
	_, _, err = app.Get(ctx, "/go-form")
	require.NoError(t, err)
}

func TestTLSCluster(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	nodeCfg := &tls.Config{Certificates: []tls.Certificate{pki.cert(t, pkix.Name{CommonName: "127.0.0.1"})},
		RootCAs: pki.pool, MinVersion: tls.VersionTLS12}
	c := zktest.StartCluster(t, 3, zktest.WithClusterTLS(nodeCfg))
	follower := (c.Leader() + 1) % 3
	conn := connect(t, c.Node(follower))
	_, err := conn.Create("/replicated", nil, 0, zk.WorldACL(zk.PermAll))
	require.NoError(t, err, "writes are forwarded and replicated over mutual TLS")

	// A peer without a certificate the nodes trust cannot talk to them.
	members, err := c.Node(0).Server().Members()
	require.NoError(t, err)
	stranger := newPKI(t)
	_, err = tls.Dial("tcp", members[0].Addr, &tls.Config{RootCAs: pki.pool,
		Certificates: []tls.Certificate{stranger.cert(t, pkix.Name{CommonName: "127.0.0.1"})}})
	if err == nil {
		t.Log("handshake accepted on the client side; the server must reject the first read")
	}
	tc, err := tls.Dial("tcp", members[0].Addr, &tls.Config{RootCAs: pki.pool})
	if err == nil {
		_, err = tc.Write([]byte("R\x01x"))
		if err == nil {
			_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = tc.Read(make([]byte, 1))
		}
		tc.Close()
	}
	require.Error(t, err, "a cluster port without a client certificate is refused")

	// Nor can a certificate from the cluster's CA that names another host
	// (a client's, when one CA serves clients and nodes): the peer's
	// certificate must name the host it connects from, as ZooKeeper's
	// ssl.quorum.hostnameVerification.
	app := pki.certFor(t, pkix.Name{CommonName: "app-1"}, nil)
	tc, err = tls.Dial("tcp", members[0].Addr, &tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{app}})
	require.NoError(t, err, "the certificate chains to the cluster CA")
	_, err = tc.Write([]byte("F\x04evil"))
	if err == nil {
		_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err = tc.Read(make([]byte, 1))
	}
	tc.Close()
	require.ErrorIs(t, err, io.EOF, "a certificate naming another host is refused as a peer")
}

// TestTLSX509SuperUser: the client whose certificate gives the configured
// X509AuthenticationProvider.superUser id bypasses ACLs and holds a super
// identity, as in ZooKeeper; another client does not.
func TestTLSX509SuperUser(t *testing.T) {
	t.Parallel()
	pki := newPKI(t)
	const admin = "CN=admin,O=Paddock Test" // Go encodes O before CN: Java prints CN first
	srv := zktest.Start(t, zktest.WithTLS(pki.serverConfig(t, tls.VerifyClientCertIfGiven)), zktest.WithX509SuperUser(admin))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dial := func(cn string) *pclient.Conn {
		cert := pki.cert(t, pkix.Name{CommonName: cn, Organization: []string{"Paddock Test"}})
		c, err := pclient.Connect(ctx, []string{srv.SecureAddr()},
			pclient.WithTLS(&tls.Config{RootCAs: pki.pool, Certificates: []tls.Certificate{cert}}))
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	app, root := dial("app"), dial("admin")
	_, _, err := app.Create(ctx, "/private", []byte("x"), pclient.ModePersistent,
		[]pclient.ACL{{Perms: pclient.PermAll, ID: pclient.Id{Scheme: "x509", ID: "CN=app,O=Paddock Test"}}})
	require.NoError(t, err)
	ids, err := root.WhoAmI(ctx)
	require.NoError(t, err)
	require.Contains(t, ids, pclient.ClientInfo{AuthScheme: "super", User: admin})
	data, _, err := root.Get(ctx, "/private")
	require.NoError(t, err, "the x509 super user reads a node whose ACL names another client")
	require.Equal(t, []byte("x"), data)
	require.NoError(t, root.Delete(ctx, "/private", -1))

	other := dial("other")
	_, _, err = other.Create(ctx, "/private2", nil, pclient.ModePersistent,
		[]pclient.ACL{{Perms: pclient.PermAll, ID: pclient.Id{Scheme: "x509", ID: "CN=app,O=Paddock Test"}}})
	require.NoError(t, err)
	_, _, err = other.Get(ctx, "/private2")
	require.ErrorIs(t, err, pclient.ErrNoAuth)
}
