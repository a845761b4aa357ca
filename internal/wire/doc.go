// Package wire is Paddock's codec for ZooKeeper's client wire protocol
// (Apache ZooKeeper's "jute" records).
//
// Contract:
//   - Every record is encoded and decoded by hand-written code, with no
//     reflection. Encoding appends to an Encoder; decoding reads from a
//     Decoder over one complete frame.
//   - Every length read from the wire (strings, buffers, vector counts) is
//     checked against the bytes that remain in the frame before anything is
//     allocated, so a decoder's allocations are bounded by a small constant
//     multiple of the frame it was given (a vector element costs more in
//     memory than its minimum wire size), never by a length field. A
//     malformed or truncated frame is an error value (ErrMalformed,
//     wrapped), never a panic.
//   - Frames are bounded by a configured maximum (DefaultMaxFrame, the
//     jute.maxbuffer default of 0xfffff bytes).
//   - Error codes are values of type Code, which implements error, so
//     errors.Is(err, wire.ErrNoNode) works and messages start with "zk: ".
//   - ValidatePath implements ZooKeeper's path rules exactly
//     (PathUtils.validatePath).
//
// The package imports nothing from the rest of Paddock; the server, the
// client and the fsm all share it.
package wire
