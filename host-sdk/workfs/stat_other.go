//go:build !linux

package workfs

import (
	"io/fs"

	"github.com/rulebroker/rulebroker/shared"
)

// fileInfo leaves Dev, Ino and Ctime zero off Linux; version caches then rely
// on size and mtime alone.
func fileInfo(fi fs.FileInfo) shared.FileInfo {
	return shared.FileInfo{Name: fi.Name(), Size: fi.Size(), Mode: fi.Mode(), ModTime: fi.ModTime()}
}
