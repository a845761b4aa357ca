package client

import (
	"errors"
	"fmt"

	"github.com/paddockzk/paddock/internal/wire"
)

// Code is a ZooKeeper error code. Every error an operation returns because
// of the server is a Code (possibly wrapped), so errors.Is(err, ErrNoNode)
// works.
type Code = wire.Code

// Error codes, exactly as ZooKeeper's KeeperException.Code. They are the
// values of internal/wire, re-exported.
const (
	ErrSystemError              = wire.ErrSystemError
	ErrRuntimeInconsistency     = wire.ErrRuntimeInconsistency
	ErrDataInconsistency        = wire.ErrDataInconsistency
	ErrConnectionLoss           = wire.ErrConnectionLoss
	ErrMarshallingError         = wire.ErrMarshallingError
	ErrUnimplemented            = wire.ErrUnimplemented
	ErrOperationTimeout         = wire.ErrOperationTimeout
	ErrBadArguments             = wire.ErrBadArguments
	ErrUnknownSession           = wire.ErrUnknownSession
	ErrNewConfigNoQuorum        = wire.ErrNewConfigNoQuorum
	ErrReconfigInProgress       = wire.ErrReconfigInProgress
	ErrAPIError                 = wire.ErrAPIError
	ErrNoNode                   = wire.ErrNoNode
	ErrNoAuth                   = wire.ErrNoAuth
	ErrBadVersion               = wire.ErrBadVersion
	ErrNoChildrenForEphemerals  = wire.ErrNoChildrenForEphemerals
	ErrNodeExists               = wire.ErrNodeExists
	ErrNotEmpty                 = wire.ErrNotEmpty
	ErrSessionExpired           = wire.ErrSessionExpired
	ErrInvalidCallback          = wire.ErrInvalidCallback
	ErrInvalidACL               = wire.ErrInvalidACL
	ErrAuthFailed               = wire.ErrAuthFailed
	ErrSessionMoved             = wire.ErrSessionMoved
	ErrNotReadOnly              = wire.ErrNotReadOnly
	ErrEphemeralOnLocalSession  = wire.ErrEphemeralOnLocalSession
	ErrNoWatcher                = wire.ErrNoWatcher
	ErrRequestTimeout           = wire.ErrRequestTimeout
	ErrReconfigDisabled         = wire.ErrReconfigDisabled
	ErrSessionClosedRequireSASL = wire.ErrSessionClosedRequireSASL
	ErrQuotaExceeded            = wire.ErrQuotaExceeded
	ErrThrottledOp              = wire.ErrThrottledOp
)

// ErrClosed is returned by every operation on a Conn after Close, and
// carried by the final event of every pending watch when the Conn closes.
// It is a client-side error, not a protocol code.
var ErrClosed = errors.New("zk: connection closed")

// MultiError is the error of a failed Multi. ZooKeeper applies a multi
// atomically: when one op fails, none is applied.
type MultiError struct {
	// Index is the position of the first failing op.
	Index int
	// Err is that op's error code.
	Err error
	// Results holds one result per op, as ZooKeeper returns them: Err nil
	// for the ops before Index, the failing code at Index and
	// ErrRuntimeInconsistency after it.
	Results []OpResult
}

// Error implements error.
func (e *MultiError) Error() string {
	return fmt.Sprintf("zk: multi op %d failed: %v", e.Index, e.Err)
}

// Unwrap returns the failing op's error, so errors.Is(err, ErrNoNode)
// works on a *MultiError.
func (e *MultiError) Unwrap() error { return e.Err }

// errOversized is wrapped with ErrBadArguments when a request does not fit
// in the maximum frame.
func errOversized(size, limit int) error {
	return fmt.Errorf("%w: request of %d bytes exceeds the %d-byte frame limit", ErrBadArguments, size, limit)
}
