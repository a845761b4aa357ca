package zkimport

import (
	"errors"
	"fmt"
	"hash/adler32"
	"io"

	"github.com/paddockzk/paddock/internal/wire"
)

// File magics (FileHeader.magic): "ZKLG" for transaction logs, "ZKSN" for
// snapshots.
const (
	logMagic  = 0x5a4b4c47
	snapMagic = 0x5a4b534e
)

// txnEOR ends every log entry (Util.writeTxnBytes).
const txnEOR = 'B'

// maxEntryOverhead is what a log entry may hold beyond its largest field:
// the header and the other fields of its record.
const maxEntryOverhead = 1 << 20

// txnHeader is ZooKeeper's TxnHeader.
type txnHeader struct {
	clientID int64
	cxid     int32
	zxid     int64
	time     int64
	typ      int32
}

// txn is one decoded transaction or sub-transaction of a multi: the header
// and the fields of its record that the replay uses.
type txn struct {
	hdr            txnHeader // for a sub-transaction only typ is set
	path           string
	data           []byte
	acl            []wire.ACL
	ephemeral      bool
	parentCVersion int32
	ttl            int64
	version        int32
	timeout        int32 // createSession
	errCode        int32 // error
	ops            []txn // multi
}

// decodeTxn decodes one log entry's bytes: TxnHeader then the record of
// its type. Bytes after the record (ZooKeeper 3.6+ appends a TxnDigest,
// and closeSession may carry the paths it deletes) are ignored.
func decodeTxn(b []byte, maxField int) (*txn, error) {
	d := wire.NewDecoder(b)
	d.MaxField = maxField
	x := &txn{}
	x.hdr = txnHeader{clientID: d.Long(), cxid: d.Int(), zxid: d.Long(), time: d.Long(), typ: d.Int()}
	if d.Err() != nil {
		return nil, fmt.Errorf("%w: transaction header: %v", ErrFormat, d.Err())
	}
	switch x.hdr.typ {
	case opCreateSession:
		x.timeout = d.Int()
	case opCloseSession:
	case opMulti:
		n := d.Count(8)
		for i := 0; i < n && d.Err() == nil; i++ {
			sub := txn{hdr: txnHeader{typ: d.Int()}}
			body := d.Buffer()
			if d.Err() != nil {
				break
			}
			switch sub.hdr.typ {
			case opCreate, opCreate2, opCreateTTL, opCreateContainer, opDelete, opDeleteContainer,
				opSetData, opCheck, opError:
			default:
				return nil, fmt.Errorf("%w: multi at zxid %#x holds an operation of type %d", ErrFormat, x.hdr.zxid, sub.hdr.typ)
			}
			sd := wire.NewDecoder(body)
			sd.MaxField = maxField
			if err := decodeRecord(sd, &sub, false); err != nil {
				return nil, fmt.Errorf("multi at zxid %#x, op %d: %w", x.hdr.zxid, i, err)
			}
			x.ops = append(x.ops, sub)
		}
	default:
		if err := decodeRecord(d, x, true); err != nil {
			return nil, fmt.Errorf("transaction %#x: %w", x.hdr.zxid, err)
		}
		return x, nil
	}
	if d.Err() != nil {
		return nil, fmt.Errorf("%w: transaction %#x: %v", ErrFormat, x.hdr.zxid, d.Err())
	}
	return x, nil
}

// decodeRecord decodes the record of a create, delete, setData, setACL,
// check or error transaction. topLevel allows ZooKeeper's pre-3.3 create
// record (no parentCVersion), which SerializeUtils still accepts.
func decodeRecord(d *wire.Decoder, x *txn, topLevel bool) error {
	switch x.hdr.typ {
	case opCreate, opCreate2:
		x.path, x.data, x.acl, x.ephemeral = d.String(), d.Buffer(), wire.DecodeACLs(d), d.Bool()
		if topLevel && x.hdr.typ == opCreate && d.Err() == nil && d.Remaining() < 4 {
			x.parentCVersion = -1 // CreateTxnV0
		} else {
			x.parentCVersion = d.Int()
		}
	case opCreateContainer:
		x.path, x.data, x.acl, x.parentCVersion = d.String(), d.Buffer(), wire.DecodeACLs(d), d.Int()
	case opCreateTTL:
		x.path, x.data, x.acl, x.parentCVersion, x.ttl = d.String(), d.Buffer(), wire.DecodeACLs(d), d.Int(), d.Long()
		if d.Err() == nil && (x.ttl <= 0 || x.ttl > wire.MaxTTL) {
			return fmt.Errorf("%w: TTL %d out of range", ErrFormat, x.ttl)
		}
	case opDelete, opDeleteContainer:
		x.path = d.String()
	case opSetData, opReconfig:
		x.path, x.data, x.version = d.String(), d.Buffer(), d.Int()
	case opSetACL:
		x.path, x.acl, x.version = d.String(), wire.DecodeACLs(d), d.Int()
	case opCheck:
		x.path, x.version = d.String(), d.Int()
	case opError:
		x.errCode = d.Int()
	default:
		return fmt.Errorf("%w: unsupported transaction type %d", ErrFormat, x.hdr.typ)
	}
	if d.Err() != nil {
		return fmt.Errorf("%w: %v", ErrFormat, d.Err())
	}
	return nil
}

// logEnd says how a transaction log file ended.
type logEnd int

const (
	// endEOF: the end of the file or of its preallocated zero padding
	// (an entry of length 0).
	endEOF logEnd = iota
	// endPartial: an entry cut short or without its end-of-record byte,
	// as a crash mid-write leaves it. ZooKeeper reads it as the end of
	// that file.
	endPartial
	// endBadCRC: an entry whose checksum does not match.
	endBadCRC
	// endBadLength: an entry length that is negative or over the limit.
	endBadLength
)

func (e logEnd) String() string {
	return [...]string{"end of file", "partially written entry", "entry with a bad checksum", "entry with an impossible length"}[e]
}

// logTail describes where and how reading a log file stopped.
type logTail struct {
	end    logEnd
	offset int64
}

// readLog reads a transaction log (FileTxnLog: FileHeader "ZKLG", then
// entries of checksum long, length-prefixed TxnHeader+record, and 'B') and
// calls fn for every entry with a valid checksum, in order. It stops at
// the first entry that is empty (zero padding), cut short, has a bad
// length or a bad checksum and says which. An empty file has no entries.
// Errors are returned for a bad header, an undecodable transaction behind a
// valid checksum, or an error from fn.
func readLog(in io.Reader, maxField int, fn func(*txn) error) (logTail, error) {
	r := newReader(in, maxField)
	if r.atEOF() {
		return logTail{end: endEOF}, nil
	}
	magic, _, _ := r.int(), r.int(), r.long()
	if r.err != nil {
		return logTail{}, fmt.Errorf("log header: %w", r.err)
	}
	if magic != logMagic {
		return logTail{}, fmt.Errorf("%w: not a transaction log (magic %#x)", ErrFormat, uint32(magic))
	}
	for {
		start := r.off
		if r.atEOF() {
			return logTail{endEOF, start}, r.ioErr()
		}
		crc := r.long()
		n := r.int()
		switch {
		case r.err != nil:
			return logTail{endPartial, start}, r.ioErr()
		case n == 0:
			return logTail{endEOF, start}, nil
		case n < 0 || int(n) > r.max+maxEntryOverhead:
			return logTail{endBadLength, start}, nil
		}
		b := r.bytes(int(n))
		eor := r.u8()
		if r.err != nil || eor != txnEOR {
			return logTail{endPartial, start}, r.ioErr()
		}
		if int64(adler32.Checksum(b)) != crc {
			return logTail{endBadCRC, start}, nil
		}
		x, err := decodeTxn(b, maxField)
		if err != nil {
			return logTail{}, fmt.Errorf("log entry at offset %d: %w", start, err)
		}
		if err := fn(x); err != nil {
			return logTail{}, err
		}
	}
}

// ioErr returns a read error that is not a truncation (a real I/O error).
func (r *reader) ioErr() error {
	if r.err == nil || isTruncation(r.err) {
		return nil
	}
	return r.err
}

func isTruncation(err error) bool { return errors.Is(err, errTruncated) }
