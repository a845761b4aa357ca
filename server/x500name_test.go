package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	mrand "math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

// DER building blocks for test subjects.

func derTLV(tag byte, content []byte) []byte {
	n := len(content)
	var l []byte
	switch {
	case n < 0x80:
		l = []byte{byte(n)}
	case n < 0x100:
		l = []byte{0x81, byte(n)}
	default:
		l = []byte{0x82, byte(n >> 8), byte(n)}
	}
	return append(append([]byte{tag}, l...), content...)
}

func derOID(dotted string) []byte {
	var arcs []*big.Int
	for _, s := range strings.Split(dotted, ".") {
		a, ok := new(big.Int).SetString(s, 10)
		if !ok {
			panic(dotted)
		}
		arcs = append(arcs, a)
	}
	first := new(big.Int).Mul(arcs[0], big.NewInt(40))
	first.Add(first, arcs[1])
	var out []byte
	for _, a := range append([]*big.Int{first}, arcs[2:]...) {
		var groups []byte
		v := new(big.Int).Set(a)
		for {
			groups = append([]byte{byte(new(big.Int).And(v, big.NewInt(0x7f)).Int64())}, groups...)
			v.Rsh(v, 7)
			if v.Sign() == 0 {
				break
			}
		}
		for i := 0; i < len(groups)-1; i++ {
			groups[i] |= 0x80
		}
		out = append(out, groups...)
	}
	return derTLV(0x06, out)
}

type testAVA struct {
	oid   string
	value []byte // a DER-encoded value
}

func ava(oid string, tag byte, value string) testAVA {
	return testAVA{oid, derTLV(tag, []byte(value))}
}

func bmp(s string) []byte {
	var b []byte
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u>>8), byte(u))
	}
	return b
}

// derName encodes a Name: each inner slice is one RDN, in encoded order.
func derName(rdns ...[]testAVA) []byte {
	var seq []byte
	for _, rdn := range rdns {
		var set []byte
		for _, a := range rdn {
			set = append(set, derTLV(0x30, append(derOID(a.oid), a.value...))...)
		}
		seq = append(seq, derTLV(0x31, set)...)
	}
	return derTLV(0x30, seq)
}

func rdn(avas ...testAVA) []testAVA { return avas }

const (
	tUTF8      = 0x0c
	tPrintable = 0x13
	tT61       = 0x14
	tIA5       = 0x16
	tGeneral   = 0x1b
	tBMP       = 0x1e
	tNumeric   = 0x12
	tVisible   = 0x1a
	tUniversal = 0x1c

	oidCN     = "2.5.4.3"
	oidO      = "2.5.4.10"
	oidDC     = "0.9.2342.19200300.100.1.25"
	oidUID    = "0.9.2342.19200300.100.1.1"
	oidSerial = "2.5.4.5"
	oidEmail  = "1.2.840.113549.1.9.1"
)

// x500Cases are subjects whose Java form is interesting, as DER Names.
func x500Cases() map[string][]byte {
	cases := map[string][]byte{
		"empty":         derName(),
		"cn-o":          derName(rdn(ava(oidCN, tUTF8, "app")), rdn(ava(oidO, tUTF8, "example"))),
		"dc-escapes":    derName(rdn(ava(oidDC, tIA5, "com")), rdn(ava(oidDC, tIA5, "example")), rdn(ava(oidCN, tUTF8, "a=b#c"))),
		"serial-uid":    derName(rdn(ava(oidCN, tUTF8, "app")), rdn(ava(oidSerial, tPrintable, "42")), rdn(ava(oidUID, tUTF8, "u1"))),
		"email":         derName(rdn(ava(oidEmail, tIA5, "a@example.com")), rdn(ava(oidCN, tUTF8, "x"))),
		"multi-valued":  derName(rdn(ava(oidO, tUTF8, "org")), rdn(ava(oidUID, tUTF8, "u+1"), ava(oidCN, tUTF8, "b"), ava(oidO, tPrintable, "a"), ava("2.5.4.4", tUTF8, "sn"))),
		"empty-rdn":     derName(rdn(), rdn(ava(oidCN, tUTF8, "x"))),
		"empty-values":  derName(rdn(ava(oidCN, tUTF8, "")), rdn(ava(oidO, tPrintable, "")), rdn(ava("1.2.3", tUTF8, ""))),
		"bmp":           derName(rdn(testAVA{oidCN, derTLV(tBMP, bmp("ab é😀"))})),
		"bmp-ucs2":      derName(rdn(testAVA{oidCN, derTLV(tBMP, bmp("ab é"))})),
		"t61-latin1":    derName(rdn(ava(oidCN, tT61, "caf\xe9"))),
		"t61-utf8":      derName(rdn(ava(oidCN, tT61, "café"))),
		"unicode":       derName(rdn(ava(oidCN, tUTF8, "中文 é 😀 e\u0301 \u200b\u00a0"))),
		"spaces":        derName(rdn(ava(oidCN, tUTF8, "  a  b  ")), rdn(ava(oidO, tUTF8, "   ")), rdn(ava(oidUID, tUTF8, " "))),
		"cr-lf-tab":     derName(rdn(ava(oidCN, tUTF8, "\r a\r\n\tb \r")), rdn(ava(oidO, tUTF8, "\n\t"))),
		"nul-controls":  derName(rdn(ava(oidCN, tUTF8, "\x00a\x00\x01\x1f\x7f"))),
		"leading-hash":  derName(rdn(ava(oidCN, tUTF8, "#abc"))),
		"bs-space-end":  derName(rdn(ava(oidCN, tUTF8, "a\\ "))),
		"numeric":       derName(rdn(ava(oidCN, tNumeric, "123"))),
		"visible":       derName(rdn(ava(oidCN, tVisible, "vis"))),
		"general":       derName(rdn(ava(oidCN, tGeneral, "gen"))),
		"universal":     derName(rdn(ava(oidCN, tUniversal, "\x00\x00\x00a"))),
		"integer":       derName(rdn(testAVA{oidCN, derTLV(0x02, []byte{1})})),
		"octets":        derName(rdn(testAVA{"1.2.3.4", derTLV(0x04, []byte{0xde, 0xad})})),
		"constructed":   derName(rdn(testAVA{oidCN, derTLV(0x2c, derTLV(0x0c, []byte("x")))})),
		"context":       derName(rdn(testAVA{oidO, derTLV(0x80, []byte("x"))})),
		"big-arcs":      derName(rdn(ava("2.999.18446744073709551617.5", tUTF8, "x")), rdn(ava("1.39.4294967296", tUTF8, "y"))),
		"arc-2-large":   derName(rdn(ava("2.100.3", tUTF8, "z")), rdn(ava("0.0", tUTF8, "w"))),
		"long-value":    derName(rdn(ava(oidCN, tUTF8, strings.Repeat("long,", 100)))),
		"surrogate-t61": derName(rdn(ava(oidCN, tT61, "\xed\xa0\x80x\xed\xa0"))),
	}
	// The subject of test/integration's TestTLSX509IdentityJavaForm, as Go's
	// encoding/asn1 encodes it (a SET sorted by encoding).
	atv := func(oid asn1.ObjectIdentifier, v string) pkix.AttributeTypeAndValue {
		return pkix.AttributeTypeAndValue{Type: oid, Value: v}
	}
	dc, uid := asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 25}, asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}
	goName, err := asn1.Marshal(pkix.RDNSequence{{atv(dc, "com")}, {atv(dc, "example")},
		{atv(uid, "u1"), atv(asn1.ObjectIdentifier{2, 5, 4, 5}, "42")},
		{atv(asn1.ObjectIdentifier{2, 5, 4, 3}, " a=b#c, \\d+<é>; ")}})
	if err != nil {
		panic(err)
	}
	cases["go-marshalled"] = goName
	// Go's certificate parser ignores bytes after an attribute's value;
	// Java refuses the certificate ("AVA, extra bytes").
	cases["ava-trailing"] = derTLV(0x30, derTLV(0x31, derTLV(0x30,
		append(append(derOID(oidCN), derTLV(tUTF8, []byte("x"))...), derTLV(tUTF8, []byte("y"))...))))
	// Every attribute type Java knows a keyword for (in RFC 1779, RFC 2253
	// or neither), and some it does not.
	for i, oid := range []string{"2.5.4.3", "2.5.4.6", "2.5.4.7", "2.5.4.8", "2.5.4.10", "2.5.4.11", "2.5.4.12",
		"1.3.6.1.4.1.42.2.11.2.1", "2.5.4.9", oidDC, "2.5.4.46", "2.5.4.4", "2.5.4.42", "2.5.4.43", "2.5.4.44",
		oidEmail, oidUID, oidSerial, "2.5.4.17", "2.5.4.65", "1.3.6.1.4.1.311.60.2.1.3", "2.5.4.97"} {
		cases[fmt.Sprintf("keyword-%02d", i)] = derName(rdn(ava(oid, tUTF8, "v")), rdn(ava(oid, tPrintable, "P")))
	}
	// Each character Java escapes, alone, leading, inside and trailing, in
	// each string type that can hold it.
	for i, c := range ",=+<>#;\"\\ \r\x00'?*&" {
		for _, tag := range []byte{tUTF8, tPrintable, tIA5, tT61} {
			s := string(c)
			cases[fmt.Sprintf("char-%02d-%02x", i, tag)] = derName(rdn(ava(oidCN, tag, s)),
				rdn(ava(oidO, tag, s+"x")), rdn(ava(oidUID, tag, "x"+s+"y")), rdn(ava(oidDC, tag, "y"+s)),
				rdn(ava("2.5.4.11", tag, s+s)))
		}
	}
	// Random subjects, mostly of awkward characters.
	r := mrand.New(mrand.NewSource(1))
	oids := []string{oidCN, oidO, "2.5.4.11", "2.5.4.6", oidDC, oidUID, oidSerial, oidEmail, "2.5.4.4", "1.2.3.4.5"}
	tags := []byte{tUTF8, tUTF8, tPrintable, tIA5, tT61, tT61, tBMP, tGeneral, tNumeric, 0x04}
	alphabet := []rune(",=+<>#;\"\\ \r\n\t\x00\x01abcZ09'?é中😀\u00a0\u2028")
	for i := 0; i < 300; i++ {
		var rdns [][]testAVA
		for j := r.Intn(5); j > 0; j-- {
			var avas []testAVA
			for k := 1 + r.Intn(3); k > 0; k-- {
				tag := tags[r.Intn(len(tags))]
				var v []byte
				switch tag {
				case tT61: // any bytes: Java decodes them as UTF-8
					v = make([]byte, r.Intn(8))
					r.Read(v)
					if r.Intn(2) == 0 {
						for n := range v {
							v[n] = []byte{0x80, 0xbf, 0xc2, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xa0, 0x90, 'a', ' '}[r.Intn(13)]
						}
					}
				case tBMP:
					v = bmp(string(alphabet[r.Intn(len(alphabet))]) + "x")
				default:
					var s []rune
					for n := r.Intn(6); n > 0; n-- {
						s = append(s, alphabet[r.Intn(len(alphabet))])
					}
					v = []byte(string(s))
				}
				avas = append(avas, testAVA{oids[r.Intn(len(oids))], derTLV(tag, v)})
			}
			rdns = append(rdns, avas)
		}
		cases[fmt.Sprintf("random-%03d", i)] = derName(rdns...)
	}
	// Malformed UTF-8, which Java replaces by maximal invalid subparts:
	// T61String values of bytes around the UTF-8 boundaries.
	edges := []byte{0x00, 'a', 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf4, 0xf5, 0xf7, 0xf8, 0xff}
	for i := 0; i < 400; i++ {
		v := make([]byte, 1+r.Intn(6))
		for n := range v {
			v[n] = edges[r.Intn(len(edges))]
		}
		cases[fmt.Sprintf("utf8-%03d", i)] = derName(rdn(ava(oidCN, tT61, string(v))))
	}
	return cases
}

// javaNames compiles testdata/x500name/PrintNames.java and returns what
// Java prints for each file (relative to dir): the name, or "ERR ..." if
// Java refused it.
func javaNames(t *testing.T, dir string, files []string) map[string]string {
	t.Helper()
	javac, err := exec.LookPath("javac")
	if err != nil {
		t.Skip("javac not found (apt-get install -y openjdk-17-jdk-headless): cannot compare x509 ids with Java's X500Principal.getName()")
	}
	java, err := exec.LookPath("java")
	if err != nil {
		t.Skip("java not found: cannot compare x509 ids with Java's X500Principal.getName()")
	}
	classes := t.TempDir()
	src, err := filepath.Abs(filepath.Join("testdata", "x500name", "PrintNames.java"))
	require.NoError(t, err)
	out, err := exec.Command(javac, "-d", classes, src).CombinedOutput()
	require.NoError(t, err, "javac: %s", out)
	cmd := exec.Command(java, append([]string{"-cp", classes, "PrintNames"}, files...)...)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err = cmd.Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	require.Len(t, lines, len(files))
	names := make(map[string]string, len(files))
	for i, line := range lines {
		if h, ok := strings.CutPrefix(line, "OK "); ok {
			b, err := hex.DecodeString(h)
			require.NoError(t, err)
			names[files[i]] = string(b)
		} else {
			names[files[i]] = line
		}
	}
	return names
}

// TestX509ClientIDMatchesJava: the x509 identity of a certificate is what
// ZooKeeper's X509AuthenticationProvider uses,
// getSubjectX500Principal().getName(), for certificates with awkward
// subjects (and for DER Names Go's crypto/x509 would refuse in a
// certificate, through new X500Principal(byte[])).
func TestX509ClientIDMatchesJava(t *testing.T) {
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "x500 test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)

	cases := x500Cases()
	var files []string
	certs := map[string]*x509.Certificate{}
	raw := map[string][]byte{}
	serial := int64(1)
	for name, der := range cases {
		nameFile := name + ".name"
		require.NoError(t, os.WriteFile(filepath.Join(dir, nameFile), der, 0o600))
		files = append(files, nameFile)
		raw[nameFile] = der
		serial++
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), RawSubject: der,
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
		certDER, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &leafKey.PublicKey, caKey)
		if err != nil {
			continue
		}
		cert, err := x509.ParseCertificate(certDER)
		if err != nil {
			continue // Go refuses this subject in a certificate: not a TLS client's
		}
		certFile := name + ".crt"
		data := certDER
		if serial%2 == 0 {
			data = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: certDER})
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, certFile), data, 0o600))
		files = append(files, certFile)
		certs[certFile] = cert
	}
	require.Greater(t, len(certs), 150, "most subjects make certificates Go accepts")
	// Java refuses a certificate with an empty subject unless it has a
	// critical subjectAltName extension (Go marks it critical then).
	san, err := asn1.Marshal([]asn1.RawValue{{Class: asn1.ClassContextSpecific, Tag: 2, Bytes: []byte("a.example")}})
	require.NoError(t, err)
	for name, tmpl := range map[string]*x509.Certificate{
		"empty-subject-san":             {RawSubject: derName(), DNSNames: []string{"a.example"}},
		"empty-rdns-san":                {RawSubject: derName(rdn(), rdn()), DNSNames: []string{"a.example"}},
		"empty-rdns":                    {RawSubject: derName(rdn(), rdn())},
		"empty-subject-noncritical-san": {RawSubject: derName(), ExtraExtensions: []pkix.Extension{{Id: oidSubjectAltName, Value: san}}},
	} {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		certDER, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &leafKey.PublicKey, caKey)
		require.NoError(t, err, name)
		cert, err := x509.ParseCertificate(certDER)
		require.NoError(t, err, name)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".crt"), certDER, 0o600))
		files = append(files, name+".crt")
		certs[name+".crt"] = cert
	}

	java := javaNames(t, dir, files)
	var mismatches []string
	for _, f := range files {
		var got string
		var err error
		if cert, ok := certs[f]; ok {
			got, err = x509ClientID(cert)
		} else {
			got, err = javaRFC2253Name(raw[f])
		}
		want := java[f]
		switch {
		case strings.HasPrefix(want, "ERR ") && err != nil:
		case err != nil:
			mismatches = append(mismatches, fmt.Sprintf("%s: Java %q, Paddock error %v", f, want, err))
		case strings.HasPrefix(want, "ERR "):
			mismatches = append(mismatches, fmt.Sprintf("%s: Java %s, Paddock %q", f, want, got))
		case got != want:
			mismatches = append(mismatches, fmt.Sprintf("%s:\n\tJava    %q\n\tPaddock %q", f, want, got))
		}
	}
	for _, f := range []string{"cn-o.crt", "dc-escapes.crt", "serial-uid.crt", "email.crt", "multi-valued.crt", "empty-rdn.crt",
		"bmp.name", "bmp-ucs2.crt", "t61-latin1.crt", "spaces.crt", "cr-lf-tab.crt", "nul-controls.crt", "big-arcs.name", "go-marshalled.crt", "empty-subject-san.crt", "empty-rdns.crt", "ava-trailing.crt"} {
		t.Logf("%s: Java %q", f, java[f])
	}
	require.Empty(t, mismatches, "%d of %d subjects differ from Java", len(mismatches), len(files))
}

// TestX509ClientIDExamples pins Java's forms of some subjects (checked
// against Java by TestX509ClientIDMatchesJava) where java is missing.
func TestX509ClientIDExamples(t *testing.T) {
	cases := x500Cases()
	for name, want := range map[string]string{
		"cn-o":          `O=example,CN=app`,
		"dc-escapes":    `CN=a\=b\#c,DC=example,DC=com`,
		"serial-uid":    `UID=u1,2.5.4.5=#13023432,CN=app`,
		"email":         `CN=x,1.2.840.113549.1.9.1=#160d61406578616d706c652e636f6d`,
		"multi-valued":  `UID=u\+1+CN=b+O=a+2.5.4.4=#0c02736e,O=org`,
		"empty":         ``,
		"empty-rdn":     `CN=x,`,
		"spaces":        `UID=\ ,O=\ \ \ ,CN=\ \ a  b\ \ `,
		"nul-controls":  "CN=\\00a\\00\x01\x1f\x7f",
		"bmp":           "CN=\\00a\\00b\\00 \\00\uFFFD\uFFFD\\=\uFFFD\\00",
		"integer":       `CN=#020101`,
		"go-marshalled": `CN=\ a\=b\#c\, \\d\+\<é\>\;\ ,2.5.4.5=#13023432+UID=u1,DC=example,DC=com`,
	} {
		got, err := javaRFC2253Name(cases[name])
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
	}
}

// FuzzJavaRFC2253Name: any bytes as a certificate's RawSubject give a name
// or an error, never a panic.
func FuzzJavaRFC2253Name(f *testing.F) {
	for _, der := range x500Cases() {
		f.Add(der)
	}
	f.Add([]byte{0x30, 0x84, 0x00, 0x00, 0x00, 0x01, 0x31})
	f.Fuzz(func(t *testing.T, der []byte) {
		s, err := javaRFC2253Name(der)
		if err != nil && s != "" {
			t.Fatalf("error %v with a name %q", err, s)
		}
	})
}
