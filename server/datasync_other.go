//go:build !linux

package server

import "os"

// datasync is fsync where fdatasync(2) is not available.
func datasync(f *os.File) error { return f.Sync() }
