//go:build !linux

package workfs

import "path/filepath"

func resolve(path string) (string, error) { return filepath.EvalSymlinks(path) }
