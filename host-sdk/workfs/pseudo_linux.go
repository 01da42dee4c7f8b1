//go:build linux

package workfs

import (
	"os"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// openFlags open a file for a policed read: never block on a fifo, and never
// make a terminal the controlling one, so opening is harmless whatever the
// path turns out to be; the type checks come right after, on the open file.
const openFlags = os.O_RDONLY | syscall.O_NONBLOCK | syscall.O_NOCTTY

// Magic numbers that golang.org/x/sys/unix does not name.
const (
	configfsMagic = 0x62656570
	fusectlMagic  = 0x65735543
	mqueueMagic   = 0x19800202
)

// pseudoTypes name the file systems whose files are windows onto the kernel
// or onto processes (environment, memory, keys, devices) rather than stored
// data. Reading them can leak secrets or block or change state, and no rule
// file ever lives on one. devtmpfs is missing: it reports itself as tmpfs,
// so /dev is refused by its path instead.
var pseudoTypes = map[uint32]string{
	unix.PROC_SUPER_MAGIC:      "proc",
	unix.SYSFS_MAGIC:           "sysfs",
	unix.DEVPTS_SUPER_MAGIC:    "devpts",
	unix.CGROUP_SUPER_MAGIC:    "cgroup",
	unix.CGROUP2_SUPER_MAGIC:   "cgroup2",
	unix.DEBUGFS_MAGIC:         "debugfs",
	unix.TRACEFS_MAGIC:         "tracefs",
	unix.SECURITYFS_MAGIC:      "securityfs",
	unix.BPF_FS_MAGIC:          "bpf",
	unix.PSTOREFS_MAGIC:        "pstore",
	unix.EFIVARFS_MAGIC:        "efivarfs",
	unix.BINFMTFS_MAGIC:        "binfmt_misc",
	unix.SELINUX_MAGIC:         "selinuxfs",
	unix.SMACK_MAGIC:           "smackfs",
	unix.NSFS_MAGIC:            "nsfs",
	unix.PIPEFS_MAGIC:          "pipefs",
	unix.SOCKFS_MAGIC:          "sockfs",
	unix.ANON_INODE_FS_MAGIC:   "anon_inodefs",
	unix.BDEVFS_MAGIC:          "bdev",
	unix.OPENPROM_SUPER_MAGIC:  "openpromfs",
	unix.USBDEVICE_SUPER_MAGIC: "usbdevfs",
	unix.PID_FS_MAGIC:          "pidfs",
	unix.SECRETMEM_MAGIC:       "secretmem",
	unix.DMA_BUF_MAGIC:         "dmabuf",
	configfsMagic:              "configfs",
	fusectlMagic:               "fusectl",
	mqueueMagic:                "mqueue",
}

// openedFacts reports where an open file really is and which pseudo file
// system, if any, holds it, asking the kernel about the descriptor itself
// (fstatfs, and its link in /proc/self/fd) so no rename or link swap after
// the open can change the answer. A fact the kernel will not give is left
// empty: the path checks made before the open then stand alone.
func openedFacts(f *os.File) (realPath, pseudo string, err error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return "", "", err
	}
	var statErr error
	cerr := rc.Control(func(fd uintptr) {
		var st unix.Statfs_t
		for {
			statErr = unix.Fstatfs(int(fd), &st)
			if statErr != unix.EINTR {
				break
			}
		}
		if statErr == nil {
			pseudo = pseudoTypes[uint32(st.Type)]
		}
		var buf [4096]byte
		n, rerr := syscall.Readlink("/proc/self/fd/"+strconv.Itoa(int(fd)), buf[:])
		if rerr == nil && n > 0 && n < len(buf) && buf[0] == '/' {
			if p := string(buf[:n]); !strings.HasSuffix(p, " (deleted)") {
				realPath = p
			}
		}
	})
	if cerr != nil {
		return "", "", cerr
	}
	if statErr != nil {
		return "", "", statErr
	}
	return realPath, pseudo, nil
}
