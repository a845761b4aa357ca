package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
)

// scanProperties calls apply for each key and value of a Java properties
// file, read as java.util.Properties.load reads it (ZooKeeper reads zoo.cfg
// and its dynamic config file with it), then trimmed as ZooKeeper's
// QuorumPeerConfig trims both; what names the file in errors.
//
//   - Blank lines and lines whose first non-blank character is '#' or '!'
//     are comments.
//   - A line ending in an odd number of backslashes continues on the next,
//     whose leading blanks are dropped.
//   - The key runs to the first unescaped '=', ':' or blank; blanks, then
//     one '=' or ':', then blanks separate it from the value, so "key
//     value", "key: value" and "key = value" are all key=value. A line
//     with a key alone has an empty value.
//   - Backslash escapes: \t \n \r \f, \uXXXX, and a backslash before any
//     other character stands for that character ("a\:b", "C:\\zk").
func scanProperties(r io.Reader, what string, apply func(key, val string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxPropertiesLine)
	sc.Split(scanJavaLines)
	line := 0
	for sc.Scan() {
		line++
		first := line
		text := strings.TrimLeft(sc.Text(), propBlanks)
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		for continued(text) && sc.Scan() {
			line++
			text = text[:len(text)-1] + strings.TrimLeft(sc.Text(), propBlanks)
		}
		if continued(text) {
			text = text[:len(text)-1] // a continuation at the end of the file
		}
		rawKey, rawVal := splitProperty(text)
		key, err := unescapeProperty(rawKey)
		if err == nil {
			var val string
			if val, err = unescapeProperty(rawVal); err == nil {
				err = apply(javaTrim(key), javaTrim(val))
			}
		}
		if err != nil {
			return fmt.Errorf("%s line %d: %s: %w", what, first, javaTrim(rawKey), err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s line %d: %w", what, line+1, err)
	}
	return nil
}

// ScanProperties is scanProperties for callers outside the server
// (paddock cli's reconfig -file and config -c).
func ScanProperties(r io.Reader, what string, apply func(key, val string) error) error {
	return scanProperties(r, what, apply)
}

// scanJavaLines splits at "\n", "\r\n" or a lone "\r", as
// Properties.load ends lines.
func scanJavaLines(data []byte, atEOF bool) (int, []byte, error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	}
	return 0, nil, nil // a "\r" at the end of the buffer: is "\n" next?
}

// maxPropertiesLine bounds one physical line of a properties file.
const maxPropertiesLine = 1 << 20

// propBlanks are the characters Properties.load treats as blanks.
const propBlanks = " \t\f"

// continued reports whether a line ends in an odd number of backslashes.
func continued(s string) bool {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line (no leading blanks) into its key
// and value, both still escaped.
func splitProperty(s string) (key, val string) {
	i := 0
	for i < len(s) {
		c := s[i]
		if c == '\\' {
			i += 2
			continue
		}
		if c == '=' || c == ':' || strings.IndexByte(propBlanks, c) >= 0 {
			break
		}
		i++
	}
	i = min(i, len(s))
	key, rest := s[:i], strings.TrimLeft(s[i:], propBlanks)
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], propBlanks)
	}
	return key, rest
}

// unescapeProperty resolves a key's or value's backslash escapes.
func unescapeProperty(s string) (string, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf(`malformed \uxxxx escape`)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf(`malformed \uxxxx escape %q`, s[i-1:i+5])
			}
			i += 4
			// Java strings are UTF-16: a surrogate pair escaped as two
			// \u escapes is one character.
			if utf16.IsSurrogate(rune(r)) && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if lo, err := strconv.ParseUint(s[i+3:i+7], 16, 16); err == nil {
					if c := utf16.DecodeRune(rune(r), rune(lo)); c != unicode.ReplacementChar {
						b.WriteRune(c)
						i += 6
						continue
					}
				}
			}
			b.WriteRune(rune(r))
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

// javaTrim is Java's String.trim: it drops every character up to ' ' at
// both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}
