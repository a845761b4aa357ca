//go:build !linux

package server

// fileDescriptorValues: the counts are reported on Linux only (ZooKeeper
// reports them on Unix).
func fileDescriptorValues() [][2]string { return nil }
