package wire

import (
	"errors"
	"strconv"
)

// Code is a ZooKeeper error code (KeeperException.Code). Code implements
// error so that protocol errors can be returned, wrapped and compared with
// errors.Is directly. OK (0) is not an error and should not be returned as
// one; use Code.Err to turn a possibly-zero code into a nil-able error.
type Code int32

// Error codes, exactly as ZooKeeper's KeeperException.Code.
const (
	OK                          Code = 0
	ErrSystemError              Code = -1
	ErrRuntimeInconsistency     Code = -2
	ErrDataInconsistency        Code = -3
	ErrConnectionLoss           Code = -4
	ErrMarshallingError         Code = -5
	ErrUnimplemented            Code = -6
	ErrOperationTimeout         Code = -7
	ErrBadArguments             Code = -8
	ErrUnknownSession           Code = -12
	ErrNewConfigNoQuorum        Code = -13
	ErrReconfigInProgress       Code = -14
	ErrAPIError                 Code = -100
	ErrNoNode                   Code = -101
	ErrNoAuth                   Code = -102
	ErrBadVersion               Code = -103
	ErrNoChildrenForEphemerals  Code = -108
	ErrNodeExists               Code = -110
	ErrNotEmpty                 Code = -111
	ErrSessionExpired           Code = -112
	ErrInvalidCallback          Code = -113
	ErrInvalidACL               Code = -114
	ErrAuthFailed               Code = -115
	ErrSessionMoved             Code = -118
	ErrNotReadOnly              Code = -119
	ErrEphemeralOnLocalSession  Code = -120
	ErrNoWatcher                Code = -121
	ErrRequestTimeout           Code = -122
	ErrReconfigDisabled         Code = -123
	ErrSessionClosedRequireSASL Code = -124
	ErrQuotaExceeded            Code = -125
	ErrThrottledOp              Code = -127
)

var codeNames = map[Code]string{
	OK:                          "ok",
	ErrSystemError:              "system error",
	ErrRuntimeInconsistency:     "runtime inconsistency",
	ErrDataInconsistency:        "data inconsistency",
	ErrConnectionLoss:           "connection loss",
	ErrMarshallingError:         "marshalling error",
	ErrUnimplemented:            "unimplemented",
	ErrOperationTimeout:         "operation timeout",
	ErrBadArguments:             "bad arguments",
	ErrUnknownSession:           "unknown session",
	ErrNewConfigNoQuorum:        "new config has no quorum",
	ErrReconfigInProgress:       "reconfig in progress",
	ErrAPIError:                 "api error",
	ErrNoNode:                   "node does not exist",
	ErrNoAuth:                   "not authenticated",
	ErrBadVersion:               "version conflict",
	ErrNoChildrenForEphemerals:  "ephemeral nodes may not have children",
	ErrNodeExists:               "node already exists",
	ErrNotEmpty:                 "node has children",
	ErrSessionExpired:           "session has been expired by the server",
	ErrInvalidCallback:          "invalid callback",
	ErrInvalidACL:               "invalid ACL specified",
	ErrAuthFailed:               "client authentication failed",
	ErrSessionMoved:             "session moved to another server, so operation is ignored",
	ErrNotReadOnly:              "not a read-only call",
	ErrEphemeralOnLocalSession:  "ephemeral node on local session",
	ErrNoWatcher:                "no such watcher",
	ErrRequestTimeout:           "request timeout",
	ErrReconfigDisabled:         "reconfig is disabled",
	ErrSessionClosedRequireSASL: "session closed because client failed to authenticate",
	ErrQuotaExceeded:            "quota has exceeded",
	ErrThrottledOp:              "op throttled due to high load",
}

// Error implements error. Messages start with "zk: ".
func (c Code) Error() string { return "zk: " + c.String() }

// String returns the code's human-readable name.
func (c Code) String() string {
	if s, ok := codeNames[c]; ok {
		return s
	}
	return "unknown error code " + strconv.Itoa(int(c))
}

// Err returns nil for OK and c otherwise.
func (c Code) Err() error {
	if c == OK {
		return nil
	}
	return c
}

// Known reports whether c is one of ZooKeeper's defined codes.
func (c Code) Known() bool {
	_, ok := codeNames[c]
	return ok
}

// CodeOf returns the protocol code carried by err: OK for nil, the Code
// itself if err is (or wraps) a Code, and ErrSystemError otherwise.
func CodeOf(err error) Code {
	if err == nil {
		return OK
	}
	var c Code
	if errors.As(err, &c) {
		return c
	}
	return ErrSystemError
}
