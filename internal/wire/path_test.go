package wire

import (
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

// Cases from reliability.md §9.4 ("paths" and "unicode (valid)" rows),
// plus edges of ZooKeeper's PathUtils.validatePath.
var pathCases = []struct {
	name  string
	path  string
	valid bool
}{
	// §9.4 paths row
	{"empty", "", false},
	{"relative", "a", false},
	{"trailing slash", "/a/", false},
	{"double slash", "//a", false},
	{"dot segment", "/./a", false},
	{"dotdot segment", "/a/..", false},
	{"NUL", "/a\x00b", false},
	{"U+0001", "/a\u0001", false},
	{"U+007F", "/a\u007f", false},
	{"U+0085", "/a\u0085", false},
	{"U+D800 as CESU bytes", "/a\xed\xa0\x80", false},
	{"U+DFFF as CESU bytes", "/\xed\xbf\xbf", false},
	{"U+E000 (in D800-F8FF)", "/a\ue000", false},
	{"U+F8FF", "/a\uf8ff", false},
	{"emoji above U+FFFF", "/smile\U0001F600", false},
	{"U+10FFFF", "/\U0010FFFF", false},
	{"U+FFFE", "/a\ufffe", false},
	{"U+FFF0", "/a\ufff0", false},
	{"U+FFFD", "/a\ufffd", false},
	{"invalid UTF-8", "/a\xff", false},
	{"truncated UTF-8", "/a\xe6\x97", false},
	{"overlong UTF-8", "/\xc0\xaf", false},
	// A 1 MiB path passes validatePath (ZooKeeper has no path length
	// limit); it is rejected by the frame limit, see TestHugePathFrame.
	{"1 MiB path", "/" + strings.Repeat("a", 1<<20), true},
	// /zookeeper children are valid paths; the server protects them.
	{"/zookeeper", "/zookeeper", true},
	{"/zookeeper/quota", "/zookeeper/quota", true},
	{"/zookeeper/config", "/zookeeper/config", true},
	// §9.4 unicode (valid) row
	{"CJK", "/日本語/中文/한국어", true},
	{"accented", "/café/naïve/Ünïcødé", true},
	{"RTL Hebrew and Arabic", "/שלום/مرحبا", true},
	// other edges
	{"root", "/", true},
	{"simple", "/a", true},
	{"nested", "/a/b/c", true},
	{"dot dot prefix", "/..a", true},
	{"trailing dot", "/a.", true},
	{"three dots", "/...", true},
	{"hidden", "/.a/b", true},
	{"dot", "/.", false},
	{"dotdot", "/..", false},
	{"mid dot", "/a/./b", false},
	{"mid dotdot", "/a/../b", false},
	{"U+001F", "/\u001f", false},
	{"space", "/a b", true},
	{"U+009F", "/\u009f", false},
	{"U+00A0", "/\u00a0", true},
	{"U+D7FF", "/\ud7ff", true},
	{"U+F900", "/\uf900", true},
	{"U+FFEF", "/\uffef", true},
	{"tab", "/a\tb", false},
	{"newline", "/a\n", false},
	{"no leading slash", "a/b", false},
	{"double slash mid", "/a//b", false},
	{"only slashes", "//", false},
}

func TestValidatePath(t *testing.T) {
	for _, c := range pathCases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidatePath(c.path)
			if c.valid {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
				require.ErrorIs(t, err, ErrBadArguments)
				require.Contains(t, err.Error(), "zk: bad arguments")
			}
			require.Equal(t, c.valid, javaValidatePath(c.path), "agrees with the port of PathUtils.validatePath")
		})
	}
}

func TestValidateSequentialPrefix(t *testing.T) {
	require.NoError(t, ValidateSequentialPrefix("/q/"))
	require.NoError(t, ValidateSequentialPrefix("/q/lock-"))
	require.Error(t, ValidateSequentialPrefix("q"))
	require.Error(t, ValidateSequentialPrefix("//"))
}

// Valid unicode names round-trip byte-exact through the codec.
func TestUnicodePathRoundTrip(t *testing.T) {
	for _, p := range []string{"/日本語/中文", "/café/naïve", "/שלום/مرحبا", "/\u00a0\uf900\uffef"} {
		require.NoError(t, ValidatePath(p))
		b := encode(&CreateRequest{Path: p, ACL: OpenACLUnsafe})
		require.Equal(t, []byte(p), b[4:4+len(p)])
		got := roundTrip(t, &CreateRequest{Path: p, ACL: OpenACLUnsafe}).(*CreateRequest)
		require.Equal(t, p, got.Path)
		ch := roundTrip(t, &GetChildrenResponse{Children: []string{BaseName(p)}}).(*GetChildrenResponse)
		require.Equal(t, BaseName(p), ch.Children[0])
	}
}

// A create with a 1 MiB path does not fit in a default frame.
func TestHugePathFrame(t *testing.T) {
	e := NewEncoder(nil)
	s := e.BeginFrame()
	(&RequestHeader{Xid: 1, Op: OpCreate}).Encode(e)
	(&CreateRequest{Path: "/" + strings.Repeat("a", 1<<20), ACL: OpenACLUnsafe}).Encode(e)
	e.EndFrame(s)
	_, err := ReadFrame(strings.NewReader(string(e.Bytes())), nil, DefaultMaxFrame)
	require.ErrorIs(t, err, ErrFrameTooLarge)
}

// javaValidatePath is a direct port of ZooKeeper's
// PathUtils.validatePath over Java's UTF-16 chars, used as an oracle.
// Invalid UTF-8 becomes U+FFFD, as Java's decoder would produce.
func javaValidatePath(path string) bool {
	if len(path) == 0 {
		return false
	}
	chars := utf16.Encode([]rune(path))
	if chars[0] != '/' {
		return false
	}
	if len(chars) == 1 {
		return true
	}
	if chars[len(chars)-1] == '/' {
		return false
	}
	lastc := uint16('/')
	for i := 1; i < len(chars); lastc, i = chars[i], i+1 {
		c := chars[i]
		switch {
		case c == 0:
			return false
		case c == '/' && lastc == '/':
			return false
		case c == '.' && lastc == '.':
			if chars[i-2] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				return false
			}
		case c == '.':
			if chars[i-1] == '/' && (i+1 == len(chars) || chars[i+1] == '/') {
				return false
			}
		case c > 0 && c <= 0x1f || c >= 0x7f && c <= 0x9f || c >= 0xd800 && c <= 0xf8ff || c >= 0xfff0:
			return false
		}
	}
	return true
}
