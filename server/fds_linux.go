package server

import (
	"fmt"
	"os"
	"syscall"
)

// fileDescriptorValues are mntr's zk_open_file_descriptor_count and
// zk_max_file_descriptor_count, as ZooKeeper reports them on Unix.
func fileDescriptorValues() [][2]string {
	fds, err := os.ReadDir("/proc/self/fd")
	var lim syscall.Rlimit
	if err != nil || syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim) != nil {
		return nil
	}
	return [][2]string{
		{"zk_open_file_descriptor_count", fmt.Sprint(len(fds))},
		{"zk_max_file_descriptor_count", fmt.Sprint(lim.Cur)},
	}
}
