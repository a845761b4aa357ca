package wire

import (
	"fmt"
	"unicode/utf8"
)

// ValidatePath checks a znode path exactly as ZooKeeper's
// PathUtils.validatePath does, and additionally rejects invalid UTF-8 and
// characters above U+FFFF (which Java sees as surrogate pairs in the
// rejected range U+D800–U+F8FF). It returns nil or an error wrapping
// ErrBadArguments that says what is wrong.
func ValidatePath(path string) error {
	if path == "" {
		return badPath(path, "path must not be empty")
	}
	if path[0] != '/' {
		return badPath(path, "path must start with / character")
	}
	if len(path) == 1 {
		return nil
	}
	if path[len(path)-1] == '/' {
		return badPath(path, "path must not end with / character")
	}
	if !utf8.ValidString(path) {
		return badPath(path, "path is not valid UTF-8")
	}
	var prev rune = '/'
	segStart := 1
	for i, c := range path {
		if i == 0 {
			continue
		}
		switch {
		case c == 0:
			return badPath(path, fmt.Sprintf("null character not allowed @%d", i))
		case c == '/' && prev == '/':
			return badPath(path, fmt.Sprintf("empty node name specified @%d", i))
		case invalidRune(c):
			return badPath(path, fmt.Sprintf("invalid character @%d", i))
		}
		if c == '/' {
			if seg := path[segStart:i]; seg == "." || seg == ".." {
				return badPath(path, fmt.Sprintf("relative paths not allowed @%d", i))
			}
			segStart = i + 1
		}
		prev = c
	}
	if seg := path[segStart:]; seg == "." || seg == ".." {
		return badPath(path, "relative paths not allowed")
	}
	return nil
}

// ValidateSequentialPrefix validates the path of a sequential create, which
// ZooKeeper checks with the sequence suffix in place: a prefix may end in
// "/" (e.g. "/q/" becomes "/q/0000000007").
func ValidateSequentialPrefix(path string) error {
	return ValidatePath(path + "1")
}

func invalidRune(c rune) bool {
	return (c > 0 && c < 0x1f+1) || (c >= 0x7f && c <= 0x9f) ||
		(c >= 0xd800 && c <= 0xf8ff) || (c >= 0xfff0 && c <= 0xffff) || c > 0xffff
}

type pathError struct {
	path, msg string
}

func (e *pathError) Error() string {
	return fmt.Sprintf("zk: bad arguments: invalid path %q: %s", e.path, e.msg)
}

func (e *pathError) Unwrap() error { return ErrBadArguments }

func badPath(path, msg string) error { return &pathError{path: path, msg: msg} }

// ParentPath returns the parent of an absolute path ("/" for top-level
// nodes and for "/" itself).
func ParentPath(path string) string {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return "/"
}

// BaseName returns the last component of an absolute path.
func BaseName(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if path[i] == '/' {
			return path[i+1:]
		}
	}
	return path
}

// JoinPath joins a parent path and a child name.
func JoinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
