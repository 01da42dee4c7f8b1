//go:build linux

package workfs

import (
	"io/fs"
	"syscall"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

func fileInfo(fi fs.FileInfo) shared.FileInfo {
	out := shared.FileInfo{Name: fi.Name(), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		out.Dev = uint64(st.Dev)
		out.Ino = uint64(st.Ino)
		out.Ctime = time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
	return out
}
