//go:build !linux

package sysmon

import (
	"context"
	"time"
)

// Relaxed is sysmon's thread with its slack lengthened.
type Relaxed struct{}

// Relax returns ErrUnsupported outside Linux.
func Relax(slack time.Duration) (*Relaxed, error) { return nil, ErrUnsupported }

// Thread returns 0 outside Linux.
func (r *Relaxed) Thread() int { return 0 }

// Keep returns at once outside Linux.
func (r *Relaxed) Keep(ctx context.Context, every time.Duration) {}
