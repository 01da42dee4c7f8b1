package workfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/rulebroker/rulebroker/shared"
)

// ErrOutsideRoots is wrapped by every refusal of a Policy, together with
// shared.ErrRefused and fs.ErrPermission.
var ErrOutsideRoots = errors.New("outside the allowed roots")

// Policy confines a shared.HostFS to allowed roots: a path is allowed when it
// equals a root or lies below one. Both the path asked for and the path it
// resolves to through symlinks must be allowed, so a link inside the roots
// that points outside them is refused rather than followed. This is the
// "filesystem policy gate" the follow-symlinks note relies on.
type Policy struct {
	inner shared.HostFS
	roots []string
}

var _ shared.HostFS = (*Policy)(nil)

// NewPolicy returns a Policy over inner allowing roots. Each root must be
// absolute; it is cleaned, and its resolved form (through inner) is allowed
// too, so a root reached through a symlink (say /tmp on some systems) still
// admits the resolved paths below it.
func NewPolicy(ctx context.Context, inner shared.HostFS, roots ...string) (*Policy, error) {
	if inner == nil {
		return nil, errors.New("workfs: policy needs an inner filesystem")
	}
	if len(roots) == 0 {
		return nil, errors.New("workfs: policy needs at least one root")
	}
	p := &Policy{inner: inner}
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return nil, fmt.Errorf("workfs: policy root %q is not absolute", r)
		}
		p.add(filepath.Clean(r))
		if res, err := inner.Resolve(ctx, r); err == nil {
			p.add(filepath.Clean(res))
		}
	}
	return p, nil
}

func (p *Policy) add(root string) {
	for _, r := range p.roots {
		if r == root {
			return
		}
	}
	p.roots = append(p.roots, root)
}

// Roots returns the allowed roots, including resolved forms.
func (p *Policy) Roots() []string { return append([]string(nil), p.roots...) }

func (p *Policy) allowed(path string) bool {
	if !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	for _, r := range p.roots {
		if path == r || strings.HasPrefix(path, r+string(filepath.Separator)) || r == string(filepath.Separator) {
			return true
		}
	}
	return false
}

func refuse(op, path string) error {
	return &refusal{op: op, path: path}
}

// refusal is a Policy's "no": a permission error that says why.
type refusal struct{ op, path string }

func (r *refusal) Error() string { return r.op + " " + r.path + ": " + ErrOutsideRoots.Error() }
func (r *refusal) Unwrap() []error {
	return []error{ErrOutsideRoots, shared.ErrRefused, fs.ErrPermission}
}

// check allows path lexically, then resolves it and allows the result. It
// returns the resolved path so the caller operates on exactly what was
// checked.
func (p *Policy) check(ctx context.Context, op, path string) (string, error) {
	if !p.allowed(path) {
		return "", refuse(op, path)
	}
	res, err := p.inner.Resolve(ctx, path)
	if err != nil {
		return "", err
	}
	if !p.allowed(res) {
		return "", refuse(op, fmt.Sprintf("%s (resolves to %s)", path, res))
	}
	return res, nil
}

// Stat stats the resolved target; the name stays the one asked for, as a
// symlink-following stat reports it.
func (p *Policy) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	res, err := p.check(ctx, "stat", path)
	if err != nil {
		return shared.FileInfo{}, err
	}
	fi, err := p.inner.Stat(ctx, res)
	if err != nil {
		return shared.FileInfo{}, err
	}
	fi.Name = filepath.Base(path)
	return fi, nil
}

// Resolve refuses a path outside the roots and a path resolving outside them.
func (p *Policy) Resolve(ctx context.Context, path string) (string, error) {
	return p.check(ctx, "resolve", path)
}

// ReadDir lists the resolved directory.
func (p *Policy) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	res, err := p.check(ctx, "readdir", path)
	if err != nil {
		return nil, err
	}
	return p.inner.ReadDir(ctx, res)
}

// ReadFile reads the resolved file.
func (p *Policy) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	res, err := p.check(ctx, "read", path)
	if err != nil {
		return nil, err
	}
	return p.inner.ReadFile(ctx, res, max)
}

// ReadFiles checks each path; refused ones get their error in place and the
// allowed ones are read in one inner batch.
func (p *Policy) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	out := make([]shared.FileContent, len(paths))
	var batch []string
	var idx []int
	for i, path := range paths {
		out[i].Path = path
		res, err := p.check(ctx, "read", path)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out[i].Err = err
			continue
		}
		batch = append(batch, res)
		idx = append(idx, i)
	}
	if len(batch) == 0 {
		return out, nil
	}
	got, err := p.inner.ReadFiles(ctx, batch, max)
	if err != nil {
		return nil, err
	}
	if len(got) != len(batch) {
		return nil, fmt.Errorf("workfs: inner ReadFiles returned %d results for %d paths", len(got), len(batch))
	}
	for j, i := range idx {
		out[i].Data, out[i].Err = got[j].Data, got[j].Err
	}
	return out, nil
}
