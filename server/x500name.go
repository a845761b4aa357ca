package server

import (
	"bytes"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// A TLS client's x509 identity, formatted as ZooKeeper forms it.
//
// ZooKeeper's X509AuthenticationProvider (3.8) uses
// cert.getSubjectX500Principal().getName() as the id: the RFC 2253 form
// OpenJDK's sun.security.x509.X500Name.getRFC2253Name() builds. ACL ids
// written for ZooKeeper only match here if Paddock prints the same string,
// so javaRFC2253Name follows OpenJDK 17's rules (X500Name, RDN, AVA and
// AVAKeyword; String's UTF-8 decoder) rather than RFC 2253 or Go's
// pkix.Name.String:
//
//   - RDNs are printed last first, joined with ','; the attributes of a
//     multi-valued RDN are joined with '+' in their encoded order (Java
//     only sorts them for the canonical form); an empty RDN prints as "".
//   - An attribute type is one of the keywords Java's RFC 2253 form knows
//     (CN, C, L, ST, O, OU, STREET, DC, UID), else its dotted OID (so
//     serialNumber is 2.5.4.5 and emailAddress 1.2.840.113549.1.9.1).
//   - A value is '#' and the lower-case hex of its DER encoding when the
//     type is a dotted OID or the value is not PrintableString, T61String,
//     IA5String, GeneralString, BMPString or UTF8String.
//   - Otherwise its content bytes are decoded as UTF-8, whatever the string
//     type (so a BMPString "ab", bytes 00 61 00 62, prints as \00a\00b),
//     replacing malformed input as java.lang.String does; then each of
//     ,=+<>#;"\ is preceded by '\', NUL becomes \00, and each leading or
//     trailing space or carriage return is preceded by '\'. Other
//     characters, printable or not, are kept as they are.
//
// The DER must be a Name as Go's crypto/x509 accepts it (definite,
// minimal lengths, one-byte tags); an AVA with anything after its value,
// which Java refuses and Go's parser allows, is an error.

// x509ClientID is the x509 identity of a verified client certificate, as
// ZooKeeper's X509AuthenticationProvider.getClientId forms it. Java refuses
// a certificate whose subject holds no attribute unless it has a critical,
// non-empty subjectAltName extension (X509CertInfo.verifyCert): such a
// certificate gives no identity.
func x509ClientID(cert *x509.Certificate) (string, error) {
	name, err := javaRFC2253Name(cert.RawSubject)
	if err != nil {
		return "", err
	}
	if strings.Trim(name, ",") == "" && !hasCriticalSAN(cert) {
		return "", errors.New("x500 name: empty subject without a critical subjectAltName (Java refuses the certificate)")
	}
	return name, nil
}

func hasCriticalSAN(cert *x509.Certificate) bool {
	for _, ext := range cert.Extensions {
		if ext.Id.Equal(oidSubjectAltName) {
			return ext.Critical && !bytes.Equal(ext.Value, []byte{0x30, 0x00})
		}
	}
	return false
}

var oidSubjectAltName = asn1.ObjectIdentifier{2, 5, 29, 17}

// javaRFC2253Name returns what Java's new X500Principal(der).getName()
// returns for the DER-encoded X.500 Name der.
func javaRFC2253Name(der []byte) (string, error) {
	tag, rdns, rest, err := readDER(der)
	if err != nil {
		return "", err
	}
	if tag != 0x30 || len(rest) != 0 {
		return "", errors.New("x500 name: not a single SEQUENCE")
	}
	var names []string
	for len(rdns) > 0 {
		var set []byte
		tag, set, rdns, err = readDER(rdns)
		if err != nil {
			return "", err
		}
		if tag != 0x31 {
			return "", errors.New("x500 name: RDN is not a SET")
		}
		var avas []string
		for len(set) > 0 {
			var seq []byte
			tag, seq, set, err = readDER(set)
			if err != nil {
				return "", err
			}
			if tag != 0x30 {
				return "", errors.New("x500 name: AVA is not a SEQUENCE")
			}
			ava, err := formatAVA(seq)
			if err != nil {
				return "", err
			}
			avas = append(avas, ava)
		}
		names = append(names, strings.Join(avas, "+"))
	}
	var b strings.Builder
	for i := len(names) - 1; i >= 0; i-- {
		b.WriteString(names[i])
		if i > 0 {
			b.WriteByte(',')
		}
	}
	return b.String(), nil
}

// rfc2253Keywords are the attribute types Java's RFC 2253 form names.
var rfc2253Keywords = map[string]string{
	"2.5.4.3":                    "CN",
	"2.5.4.6":                    "C",
	"2.5.4.7":                    "L",
	"2.5.4.8":                    "ST",
	"2.5.4.10":                   "O",
	"2.5.4.11":                   "OU",
	"2.5.4.9":                    "STREET",
	"0.9.2342.19200300.100.1.25": "DC",
	"0.9.2342.19200300.100.1.1":  "UID",
}

// formatAVA formats the contents of an AttributeTypeAndValue SEQUENCE.
func formatAVA(seq []byte) (string, error) {
	tag, oid, rest, err := readDER(seq)
	if err != nil {
		return "", err
	}
	if tag != 0x06 {
		return "", errors.New("x500 name: attribute type is not an OID")
	}
	oidStr, err := formatOID(oid)
	if err != nil {
		return "", err
	}
	valueTLV := rest
	tag, value, rest, err := readDER(rest)
	if err != nil {
		return "", err
	}
	if len(rest) != 0 {
		return "", errors.New("x500 name: extra bytes after an attribute value")
	}
	valueTLV = valueTLV[:len(valueTLV)-len(rest)]
	keyword, known := rfc2253Keywords[oidStr]
	if !known {
		keyword = oidStr
	}
	var b strings.Builder
	b.WriteString(keyword)
	b.WriteByte('=')
	switch {
	case !known, !javaStringTag(tag):
		b.WriteByte('#')
		b.WriteString(hex.EncodeToString(valueTLV))
	default:
		b.WriteString(escapeRFC2253(javaUTF8(value)))
	}
	return b.String(), nil
}

// javaStringTag reports whether AVA.toRFC2253String prints a value with
// this tag as a string.
func javaStringTag(tag byte) bool {
	switch tag {
	case 0x13, // PrintableString
		0x14, // T61String
		0x16, // IA5String
		0x1b, // GeneralString
		0x1e, // BMPString
		0x0c: // UTF8String
		return true
	}
	return false
}

// escapeRFC2253 escapes a value as AVA.toRFC2253String does.
func escapeRFC2253(s []rune) string {
	const escapees = ",=+<>#;\"\\"
	var esc []rune
	for _, c := range s {
		switch {
		case strings.ContainsRune(escapees, c):
			esc = append(esc, '\\', c)
		case c == 0:
			esc = append(esc, '\\', '0', '0')
		default:
			esc = append(esc, c)
		}
	}
	white := func(c rune) bool { return c == ' ' || c == '\r' }
	lead := 0
	for lead < len(esc) && white(esc[lead]) {
		lead++
	}
	trail := len(esc) - 1
	for trail >= 0 && white(esc[trail]) {
		trail--
	}
	var b strings.Builder
	for i, c := range esc {
		if i < lead || i > trail {
			b.WriteByte('\\')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// javaUTF8 decodes b as new String(b, UTF_8) does in OpenJDK 17, where a
// malformed sequence becomes one U+FFFD per maximal invalid subpart (Go's
// decoder gives one per byte), an encoded surrogate one U+FFFD for its
// three bytes, and a truncated sequence at the end one U+FFFD.
func javaUTF8(b []byte) []rune {
	const repl = '\uFFFD'
	cont := func(c byte) bool { return c&0xc0 == 0x80 }
	out := make([]rune, 0, len(b))
	for i := 0; i < len(b); {
		b1 := b[i]
		n := len(b) - i - 1 // bytes after b1
		switch {
		case b1 < 0x80:
			out = append(out, rune(b1))
			i++
		case b1 >= 0xc2 && b1 <= 0xdf:
			switch {
			case n == 0:
				return append(out, repl)
			case !cont(b[i+1]):
				out = append(out, repl)
				i++
			default:
				out = append(out, rune(b1&0x1f)<<6|rune(b[i+1]&0x3f))
				i += 2
			}
		case b1 >= 0xe0 && b1 <= 0xef:
			// The second byte cannot follow b1 (an overlong E0 or not a
			// continuation byte): the malformed part is b1 alone.
			bad2 := func(b2 byte) bool { return (b1 == 0xe0 && b2&0xe0 == 0x80) || !cont(b2) }
			switch {
			case n >= 2:
				b2, b3 := b[i+1], b[i+2]
				switch {
				case bad2(b2):
					out = append(out, repl)
					i++
				case !cont(b3):
					out = append(out, repl)
					i += 2
				default:
					c := rune(b1&0x0f)<<12 | rune(b2&0x3f)<<6 | rune(b3&0x3f)
					if c >= 0xd800 && c <= 0xdfff {
						c = repl
					}
					out = append(out, c)
					i += 3
				}
			case n == 1 && bad2(b[i+1]):
				out = append(out, repl)
				i++
			default:
				return append(out, repl)
			}
		case b1 >= 0xf0 && b1 <= 0xf7:
			bad2 := func(b2 byte) bool {
				return b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) ||
					(b1 == 0xf4 && b2&0xf0 != 0x80) || !cont(b2)
			}
			switch {
			case n >= 3:
				b2, b3, b4 := b[i+1], b[i+2], b[i+3]
				c := rune(b1&0x07)<<18 | rune(b2&0x3f)<<12 | rune(b3&0x3f)<<6 | rune(b4&0x3f)
				if cont(b2) && cont(b3) && cont(b4) && c >= 0x10000 && c <= 0x10ffff {
					out = append(out, c)
					i += 4
					break
				}
				out = append(out, repl)
				switch {
				case bad2(b2):
					i++
				case !cont(b3):
					i += 2
				default:
					i += 3
				}
			case b1 > 0xf4 || (n >= 1 && bad2(b[i+1])):
				out = append(out, repl)
				i++
			default:
				out = append(out, repl)
				if n == 2 && !cont(b[i+2]) {
					i += 2
					break
				}
				return out
			}
		default:
			out = append(out, repl)
			i++
		}
	}
	return out
}

// formatOID formats the contents of an OBJECT IDENTIFIER in dotted form,
// as Java's ObjectIdentifier.toString, refusing what Java refuses.
func formatOID(b []byte) (string, error) {
	if len(b) == 0 || b[len(b)-1]&0x80 != 0 {
		return "", errors.New("x500 name: OID not ended")
	}
	if len(b) > 4096 {
		return "", errors.New("x500 name: OID too long")
	}
	var sb strings.Builder
	first := true
	for start := 0; start < len(b); {
		if b[start] == 0x80 {
			return "", errors.New("x500 name: OID component with a leading zero octet")
		}
		end := start
		for b[end]&0x80 != 0 {
			end++
		}
		arc := new(big.Int)
		for _, c := range b[start : end+1] {
			arc.Lsh(arc, 7)
			arc.Or(arc, big.NewInt(int64(c&0x7f)))
		}
		if first {
			first = false
			switch {
			case arc.IsInt64() && arc.Int64() < 40:
				sb.WriteString("0.")
			case arc.IsInt64() && arc.Int64() < 80:
				sb.WriteString("1.")
				arc.Sub(arc, big.NewInt(40))
			default:
				sb.WriteString("2.")
				arc.Sub(arc, big.NewInt(80))
			}
		} else {
			sb.WriteByte('.')
		}
		sb.WriteString(arc.String())
		start = end + 1
	}
	return sb.String(), nil
}

// readDER reads one DER element with a one-byte tag and a definite,
// minimally encoded length, as Go's crypto/x509 requires in a Name.
func readDER(b []byte) (tag byte, content, rest []byte, err error) {
	if len(b) < 2 {
		return 0, nil, nil, errors.New("x500 name: truncated")
	}
	tag = b[0]
	if tag&0x1f == 0x1f {
		return 0, nil, nil, errors.New("x500 name: multi-byte tag")
	}
	n, off := int(b[1]), 2
	if n >= 0x80 {
		k := n & 0x7f
		if k == 0 || k > 4 || len(b) < 2+k {
			return 0, nil, nil, errors.New("x500 name: bad length")
		}
		n, off = 0, 2+k
		for _, c := range b[2:off] {
			n = n<<8 | int(c)
		}
		if n < 0x80 || b[2] == 0 {
			return 0, nil, nil, errors.New("x500 name: length not minimally encoded")
		}
	}
	if n > len(b)-off {
		return 0, nil, nil, errors.New("x500 name: truncated, length " + strconv.Itoa(n))
	}
	return tag, b[off : off+n], b[off+n:], nil
}
