package server

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft-wal/segment"
	"github.com/hashicorp/raft-wal/types"
)

// verifyWAL checks every committed batch of the raft-wal log in dir
// against the checksum its commit frame carries, before raft-wal opens
// the log, and returns an error naming the first damage it finds.
//
// raft-wal writes a batch of entries as frames followed by a commit frame
// that holds the CRC-32C of everything written since the previous commit.
// On open it checks only the last batch of the tail segment (a crash may
// have torn it) and assumes that committed data is never damaged later
// (its README). A byte flipped on disk in any other batch would be
// replayed as if it had been written so: a znode with other data, or an
// entry the FSM cannot decode. ZooKeeper checks every transaction's
// checksum as it reads its log, and a node with a damaged store must
// refuse to start rather than serve wrong data (the test plan's F14), so
// the server verifies each batch first. Damage is:
//
//   - a batch whose checksum does not match, but for the tail segment's
//     last one: a crash while writing it leaves it torn, raft-wal drops
//     it, and it was never acknowledged;
//   - a sealed segment that ends before the commit that sealed it (zeros,
//     an unreadable frame header, the end of the file);
//   - a segment file that ends in the middle of a frame inside the space
//     raft-wal preallocated for it (truncated), or is missing.
//
// Where an open segment's frames end (zeros, an unreadable frame header),
// the rest of the file is searched for an intact batch (intactBatchAfter):
// a torn write leaves none behind it, a zeroed page or a changed header in
// the middle does. Damage to the newest batch alone cannot be told from a
// tear. The check is one sequential pass over the segments at start (the
// unwritten rest of the newest one takes 10-30 ms).
func verifyWAL(dir string, state types.PersistentState) error {
	for i, info := range state.Segments {
		tail := i == len(state.Segments)-1 && info.SealTime.IsZero()
		name := segment.FileName(info)
		if err := verifySegment(filepath.Join(dir, name), info, tail); err != nil {
			return fmt.Errorf("raft log segment %s is damaged: %w; restore the data dir from a backup "+
				"(paddock snapshot restore) or, in a cluster, start this node from an empty data dir so that "+
				"it gets the leader's snapshot", name, err)
		}
	}
	return nil
}

// walFrameHeaderLen, walFileHeaderLen and the frame types are raft-wal's
// segment format (segment/format.go, version 0).
const (
	walFileHeaderLen  = 32
	walFrameHeaderLen = 8
	walFrameEntry     = 1
	walFrameIndex     = 2
	walFrameCommit    = 3
	// walMaxFrame is raft-wal's largest entry (segment.MaxEntrySize).
	walMaxFrame = segment.MaxEntrySize
)

var walCRCTable = crc32.MakeTable(crc32.Castagnoli)

// frameReader reads raft-wal frames from r, which stands at file offset
// off, and keeps the CRC-32C of what it read since the last commit.
type frameReader struct {
	r    *bufio.Reader
	size int64 // the file's size: no frame is read past it
	off  int64 // file offset of the next frame
	crc  uint32
	buf  []byte
}

// next reads one frame and returns its type, or 0 and how the data ended
// (zeros, a header that makes no sense, the end of the file). After a
// commit frame, sum is the checksum it carries and crc still covers its
// batch (the caller resets it); entry and index frames go into crc.
func (fr *frameReader) next() (typ byte, sum uint32, end string) {
	var zero, fh [walFrameHeaderLen]byte
	if _, err := io.ReadFull(fr.r, fh[:]); err != nil {
		return 0, 0, "the end of the file"
	}
	typ, length := fh[0], binary.LittleEndian.Uint32(fh[4:8])
	switch {
	case fh == zero:
		return 0, 0, "zeros"
	case fh[1] != 0 || fh[2] != 0 || fh[3] != 0,
		typ != walFrameEntry && typ != walFrameIndex && typ != walFrameCommit,
		typ != walFrameCommit && length > walMaxFrame:
		return 0, 0, "an unreadable frame header"
	case typ == walFrameCommit:
		fr.off += walFrameHeaderLen
		return typ, length, ""
	}
	size := int(length) + walPad(int(length))
	if fr.off+walFrameHeaderLen+int64(size) > fr.size {
		return 0, 0, "the end of the file"
	}
	if cap(fr.buf) < size {
		fr.buf = make([]byte, size)
	}
	if _, err := io.ReadFull(fr.r, fr.buf[:size]); err != nil {
		return 0, 0, "the end of the file"
	}
	fr.crc = crc32.Update(crc32.Update(fr.crc, walCRCTable, fh[:]), walCRCTable, fr.buf[:size])
	fr.off += walFrameHeaderLen + int64(size)
	return typ, 0, ""
}

// segmentScan is one pass over a segment file's frames.
type segmentScan struct {
	frameReader
	// sealed: the segment was sealed by its last append (raft-wal wrote an
	// index frame and a commit after it), so the scan stops at that
	// commit, and every batch before it must match.
	sealed bool

	batchOff   int64  // where the current batch's frames start
	nextIndex  uint64 // raft index of the next entry frame
	batchFirst uint64 // raft index of the current batch's first entry
	sawIndex   bool   // an index frame was read in the current batch
	sealDone   bool   // the commit after the index frame was read
	good       int    // commits whose batch matched
	lastGood   uint64 // raft index of the last entry of a matching batch, 0 if none
	// badPending describes the first batch that did not match and that no
	// matching batch has followed yet: the torn end of an open segment,
	// unless one does; damage is set once one does.
	badPending, damage string
}

// verifySegment scans one segment file (see verifyWAL). A segment is open
// ended when it is the tail or was sealed by a tail truncation (no index
// frame): its data may end in a torn batch, and, after a crash, in what
// is left of one past the batches written over it since.
func verifySegment(path string, info types.SegmentInfo, tail bool) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) && tail {
		return nil // its creation failed (a full disk): raft-wal creates it again
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	s := &segmentScan{frameReader: frameReader{r: bufio.NewReaderSize(f, 1<<20), size: st.Size()},
		sealed: info.IndexStart > 0, nextIndex: info.BaseIndex, batchFirst: info.BaseIndex}
	end := s.run()
	if !s.sealed && s.damage == "" && end != "the end of the file" {
		if at, ok, err := intactBatchAfter(f, s.off+walFrameHeaderLen, s.size); err != nil {
			return err
		} else if ok {
			s.damage = fmt.Sprintf("its frames stop making sense at offset %d (%s), but an intact batch "+
				"follows at offset %d", s.off, end, at)
		}
	}
	switch {
	case s.damage != "":
		return errors.New(s.damage)
	case s.sealed && s.badPending != "":
		return errors.New(s.badPending)
	case s.sealed && !s.sealDone:
		return fmt.Errorf("it ends (%s at offset %d) before the commit that sealed it", end, s.off)
	case !tail && s.lastGood < info.MaxIndex:
		return fmt.Errorf("its last intact batch ends at entry %d, short of entry %d (%s at offset %d)",
			s.lastGood, info.MaxIndex, end, s.off)
	case s.good > 0 && info.SizeLimit > 0 && st.Size() < int64(info.SizeLimit):
		return fmt.Errorf("the file is %d bytes, shorter than the %d raft-wal allocated for it (truncated?)",
			st.Size(), info.SizeLimit)
	}
	return nil
}

// run reads frames until the written data ends, and says how it ended.
func (s *segmentScan) run() string {
	hdr := make([]byte, walFileHeaderLen)
	if _, err := io.ReadFull(s.r, hdr); err != nil {
		return "the end of the file"
	}
	s.crc = crc32.Update(0, walCRCTable, hdr)
	s.off = walFileHeaderLen
	for !s.sealDone {
		switch typ, sum, end := s.next(); typ {
		case 0:
			return end
		case walFrameCommit:
			s.commit(sum)
		case walFrameEntry:
			s.nextIndex++
		case walFrameIndex:
			s.sawIndex = true
		}
	}
	return "the commit that sealed it"
}

// commit checks the batch a commit frame (just read) ends and starts the
// next one.
func (s *segmentScan) commit(want uint32) {
	if s.crc == want {
		if s.badPending != "" && s.damage == "" {
			s.damage = s.badPending // an intact batch follows a damaged one
		}
		s.good++
		if s.nextIndex > s.batchFirst {
			s.lastGood = s.nextIndex - 1
		}
	} else if s.badPending == "" {
		s.badPending = fmt.Sprintf("the batch at offsets %d-%d (entries %d-%d) does not match its checksum "+
			"(CRC-32C %08x, its commit frame says %08x)", s.batchOff, s.off-walFrameHeaderLen, s.batchFirst,
			s.nextIndex-1, s.crc, want)
	}
	if s.sealed && s.sawIndex {
		s.sealDone = true
	}
	s.sawIndex = false
	s.crc = 0
	s.batchOff = s.off
	s.batchFirst = s.nextIndex
}

// intactBatchAfter looks past the point where an open segment's frames
// ended (zeros or an unreadable frame header at from-8) for a batch that
// is intact: one that starts right after something shaped like a commit
// frame, holds at least one entry, and ends in a commit whose checksum
// matches. raft-wal writes a segment front to back and a crash tears at
// most its last batch, so an intact batch past that point means the end
// was not a torn write but damage: a zeroed page or a changed frame header
// in the middle, behind which raft-wal would drop acknowledged entries.
func intactBatchAfter(f *os.File, from, fileSize int64) (int64, bool, error) {
	const chunk = 1 << 20
	buf := make([]byte, chunk)
	for base := from; ; base += chunk - walFrameHeaderLen {
		n, err := f.ReadAt(buf, base)
		if n < walFrameHeaderLen {
			if err != nil && !errors.Is(err, io.EOF) {
				return 0, false, err
			}
			return 0, false, nil
		}
		// Candidates: a commit type byte at a frame boundary (base is one),
		// found at memory speed through the zeros of the unwritten rest.
		for i := 0; ; {
			j := bytes.IndexByte(buf[i:n], walFrameCommit)
			if j < 0 {
				break
			}
			p := i + j
			i = p + 1
			h := buf[p:min(p+walFrameHeaderLen, n)]
			if p%walFrameHeaderLen != 0 || len(h) < walFrameHeaderLen || h[1] != 0 || h[2] != 0 || h[3] != 0 {
				continue
			}
			at := base + int64(p) + walFrameHeaderLen
			if intactBatchAt(f, at, fileSize) {
				return at, true, nil
			}
		}
		if n < chunk {
			return 0, false, nil
		}
	}
}

// intactBatchAt reports whether the frames from offset at form a batch of
// at least one entry whose commit frame's checksum matches.
func intactBatchAt(f *os.File, at, fileSize int64) bool {
	fr := frameReader{r: bufio.NewReaderSize(io.NewSectionReader(f, at, max(0, fileSize-at)), 64<<10),
		size: fileSize, off: at}
	entries := 0
	for {
		switch typ, sum, _ := fr.next(); typ {
		case 0:
			return false
		case walFrameCommit:
			return entries > 0 && fr.crc == sum
		case walFrameEntry:
			entries++
		}
	}
}

// walPad is raft-wal's padding of a frame payload to 8 bytes.
func walPad(n int) int { return (walFrameHeaderLen - n%walFrameHeaderLen) & (walFrameHeaderLen - 1) }
