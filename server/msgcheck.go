package server

import (
	"encoding/binary"
	"fmt"
)

// checkMsgpack checks that b starts with one well-formed msgpack value
// whose every declared length and element count fits in b, without
// decoding or allocating anything. msgpack's reflection allocates a byte
// string's declared length before reading it, so a few hostile bytes on
// the cluster port could otherwise make a node allocate gigabytes; and
// Decoder.Skip, which reads lengths in 1 MiB chunks, still allocates a
// chunk per bogus length. Bytes after the value are left alone, as
// msgpack.Unmarshal leaves them.
func checkMsgpack(b []byte) error {
	pos, values := 0, 1 // values still to read
	for values > 0 {
		if pos >= len(b) {
			return fmt.Errorf("msgpack: truncated value at byte %d", pos)
		}
		c := b[pos]
		pos++
		values--
		skip, items, err := msgpackExtent(c, b[pos:])
		if err != nil {
			return err
		}
		pos += skip
		if pos > len(b) || items > len(b)-pos {
			return fmt.Errorf("msgpack: length past the end at byte %d", pos)
		}
		values += items
	}
	return nil
}

// msgpackExtent reads the value that code c starts (rest follows c):
// how many bytes after c it takes besides its elements, and how many
// elements (values) it holds.
func msgpackExtent(c byte, rest []byte) (skip, items int, err error) {
	// size reads an n-byte big-endian length at the start of rest.
	size := func(n int) (int, error) {
		if len(rest) < n {
			return 0, fmt.Errorf("msgpack: truncated length")
		}
		var v uint64
		switch n {
		case 1:
			v = uint64(rest[0])
		case 2:
			v = uint64(binary.BigEndian.Uint16(rest))
		default:
			v = uint64(binary.BigEndian.Uint32(rest))
		}
		// No length or count can exceed the bytes left (checked here too,
		// so that it fits an int, and twice it, on any platform).
		if v > uint64(len(rest)) {
			return 0, fmt.Errorf("msgpack: length %d past the end", v)
		}
		return int(v), nil
	}
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixints, nil, bools
		return 0, 0, nil
	case c <= 0x8f: // fixmap
		return 0, 2 * int(c&0x0f), nil
	case c <= 0x9f: // fixarray
		return 0, int(c & 0x0f), nil
	case c <= 0xbf: // fixstr
		return int(c & 0x1f), 0, nil
	}
	var n int
	switch c {
	case 0xc4, 0xd9: // bin8, str8
		n, err = size(1)
		return 1 + n, 0, err
	case 0xc5, 0xda: // bin16, str16
		n, err = size(2)
		return 2 + n, 0, err
	case 0xc6, 0xdb: // bin32, str32
		n, err = size(4)
		return 4 + n, 0, err
	case 0xc7: // ext8: length, type, data
		n, err = size(1)
		return 2 + n, 0, err
	case 0xc8:
		n, err = size(2)
		return 3 + n, 0, err
	case 0xc9:
		n, err = size(4)
		return 5 + n, 0, err
	case 0xcc, 0xd0: // uint8, int8
		return 1, 0, nil
	case 0xcd, 0xd1:
		return 2, 0, nil
	case 0xca, 0xce, 0xd2: // float32, uint32, int32
		return 4, 0, nil
	case 0xcb, 0xcf, 0xd3:
		return 8, 0, nil
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16: type, data
		return 1 + 1<<(c-0xd4), 0, nil
	case 0xdc: // array16
		n, err = size(2)
		return 2, n, err
	case 0xdd:
		n, err = size(4)
		return 4, n, err
	case 0xde: // map16
		n, err = size(2)
		return 2, 2 * n, err
	case 0xdf:
		n, err = size(4)
		return 4, 2 * n, err
	}
	return 0, 0, fmt.Errorf("msgpack: invalid code 0x%x", c)
}
