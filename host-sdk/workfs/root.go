package workfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/rulebroker/rulebroker/host-sdk/diag"
	"github.com/rulebroker/rulebroker/shared"
)

// FindRoot returns the workspace root: the nearest ancestor of cwd (cwd
// included) holding one of markers (a file or a folder, links followed), else
// cwd. It lives here, beside the filesystems, so that the broker (which hands
// the root to providers) and the instruction reconciler find the same root
// without one depending on the other.
//
// A marker that cannot be checked (permission, I/O) is a warning naming it,
// not a root, and the search goes on upwards. The warnings leave Source empty:
// the caller knows on whose behalf it looked.
func FindRoot(ctx context.Context, fsys shared.HostFS, cwd string, markers []string) (string, []diag.Warning, error) {
	var warns []diag.Warning
	for d := cwd; ; d = filepath.Dir(d) {
		for _, m := range markers {
			p := filepath.Join(d, m)
			_, err := fsys.Stat(ctx, p)
			if err == nil {
				return d, warns, nil
			}
			if ctx.Err() != nil {
				return "", nil, ctx.Err()
			}
			// A marker outside the host's allowed roots is not part of any
			// workspace the host will read; warning about every such ancestor
			// would only be noise.
			if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, shared.ErrNotDir) && !errors.Is(err, shared.ErrRefused) {
				warns = append(warns, diag.Warning{Path: p, Message: fmt.Sprintf("cannot check root marker: %v", err)})
			}
		}
		if d == filepath.Dir(d) {
			return cwd, warns, nil
		}
	}
}

// A touched path longer than MaxPathBytes (Linux's PATH_MAX) or with more
// than MaxPathParts components cannot name a real file; following one would
// cost a probe per component. The reconciler and the live broker both
// ignore such paths.
const (
	MaxPathBytes = 4096
	MaxPathParts = 256
)

// Implausible reports whether p is too long to name a real file.
func Implausible(p string) bool {
	return len(p) > MaxPathBytes || strings.Count(p, string(filepath.Separator)) > MaxPathParts
}
