//go:build linux

package workfs

import (
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// oPath is O_PATH, the same value on every Linux architecture (the syscall
// package leaves it undefined on some).
const oPath = 0x200000

// resolve lets the kernel follow every link: open the path with O_PATH
// (which needs no read permission and never blocks on a fifo) and read the
// descriptor's path back from /proc. That is three system calls whatever the
// depth, where filepath.EvalSymlinks makes one lstat per component, and the
// errors are the kernel's own (ENOENT, ENOTDIR, ELOOP, EACCES). Without /proc
// it falls back to EvalSymlinks.
func resolve(path string) (string, error) {
	fd, err := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	for err == syscall.EINTR {
		fd, err = syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	}
	if err != nil {
		return "", &fs.PathError{Op: "resolve", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	var buf [4096]byte
	n, err := syscall.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf[:])
	if err == nil && n > 0 && n < len(buf) && buf[0] == '/' {
		if p := string(buf[:n]); !strings.HasSuffix(p, " (deleted)") {
			return p, nil
		}
	}
	return filepath.EvalSymlinks(path)
}
