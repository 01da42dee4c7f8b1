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

// The reasons a Policy refuses a path. Every refusal wraps one of them,
// together with shared.ErrRefused and fs.ErrPermission.
var (
	// ErrOutsideRoots: the path, or where its links lead, is outside the
	// allowed roots.
	ErrOutsideRoots = errors.New("outside the allowed roots")
	// ErrPseudoFS: the file is on a pseudo file system (/proc, /sys, /dev
	// and their kind wherever mounted), which is never read.
	ErrPseudoFS = errors.New("on a pseudo-filesystem")
	// ErrNotRegular: a read of something that is neither a regular file nor
	// (for a listing) a directory: a fifo, a socket, a device.
	ErrNotRegular = errors.New("not a regular file")
)

// Root is one place a Policy lets the host read.
type Root struct {
	// Path is absolute.
	Path string
	// Exact allows Path itself only, so a single file (or a single probe
	// location such as an ancestor's .clinerules) can be allowed without its
	// parent. Otherwise Path and everything below it are allowed.
	Exact bool
}

// Tree returns roots allowing each path and everything below it.
func Tree(paths ...string) []Root {
	out := make([]Root, len(paths))
	for i, p := range paths {
		out[i] = Root{Path: p}
	}
	return out
}

// Exact returns roots allowing each path itself only.
func Exact(paths ...string) []Root {
	out := make([]Root, len(paths))
	for i, p := range paths {
		out[i] = Root{Path: p, Exact: true}
	}
	return out
}

// Ancestors returns dir/name, then the same name in each parent of dir, up
// to and including the file system root: the places an upward search for
// name probes.
func Ancestors(dir, name string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		out = append(out, filepath.Join(d, name))
		if d == filepath.Dir(d) {
			return out
		}
	}
}

// Locations are the places a host's default policy is built from. Empty
// fields contribute nothing.
type Locations struct {
	Home          string // the user's home directory
	WorkspaceRoot string // the workspace the session works in
	DSHHome       string // holds the user-global AGENTS.md ($DSH_HOME, else <home>/.dsh)
	Cwd           string // the session's working directory
}

// DefaultRoots lists exactly what the built-in providers and the instruction
// reconciler read, so a host that reads through a Policy of these roots
// loses nothing while a repository's symlinks cannot reach the rest of the
// disk:
//   - the workspace root, as a tree;
//   - under home: .xcsh/agent/rules (native user rules) and .cursor/rules
//     (Cursor user rules), as trees, and Windsurf's single
//     .codeium/windsurf/memories/global_rules.md, exactly;
//   - DSHHome/AGENTS.md, exactly (the reconciler reads no other file there);
//   - .clinerules and .cline/rules in cwd and each of its ancestors up to
//     "/", as trees, because Cline loads the nearest one, file or
//     directory, wherever it is; the ancestors themselves stay closed.
//
// A host adds its own roots (an --allow-root flag) to the result.
func DefaultRoots(l Locations) []Root {
	var out []Root
	if l.WorkspaceRoot != "" {
		out = append(out, Tree(l.WorkspaceRoot)...)
	}
	if l.Home != "" {
		out = append(out, Tree(
			filepath.Join(l.Home, ".xcsh", "agent", "rules"),
			filepath.Join(l.Home, ".cursor", "rules"),
		)...)
		out = append(out, Exact(filepath.Join(l.Home, ".codeium", "windsurf", "memories", "global_rules.md"))...)
	}
	if l.DSHHome != "" {
		out = append(out, Exact(filepath.Join(l.DSHHome, "AGENTS.md"))...)
	}
	if l.Cwd != "" {
		out = append(out, Tree(Ancestors(l.Cwd, ".clinerules")...)...)
		out = append(out, Tree(Ancestors(l.Cwd, filepath.Join(".cline", "rules"))...)...)
	}
	return out
}

// Policy is the host's filesystem policy gate, wrapped around any
// shared.HostFS. It refuses, whatever the roots:
//   - any path on a pseudo file system (/proc, /sys, /dev, and on Linux any
//     file whose file system type is one of their kind, wherever mounted):
//     those are windows onto processes and devices, never rule files;
//   - reading anything that is not a regular file (listing a directory is
//     fine): a fifo can block, a device can be endless or have effects.
//     Stat still reports such files, so callers can say what they found.
//
// Unless it allows any path, it also confines every call to its roots: both
// the path asked for and the path it resolves to through symlinks must be
// allowed, so a link inside the roots that points outside them is refused
// rather than followed.
//
// Over OS, reads check the file actually opened (its real path, type and
// file system, from the open descriptor) before reading it, so a swap
// between the check and the read cannot slip anything through.
type Policy struct {
	inner    shared.HostFS
	roots    []Root
	allowAny bool
}

var _ shared.HostFS = (*Policy)(nil)

// NewPolicy returns a Policy over inner allowing each root and everything
// below it. See NewPolicyRoots.
func NewPolicy(ctx context.Context, inner shared.HostFS, roots ...string) (*Policy, error) {
	return NewPolicyRoots(ctx, inner, Tree(roots...)...)
}

// NewPolicyRoots returns a Policy over inner allowing roots. Each root must
// be absolute; it is cleaned, and its resolved form (through inner) is
// allowed too, so a root reached through a symlink (say /tmp on some
// systems) still admits the resolved paths below it.
func NewPolicyRoots(ctx context.Context, inner shared.HostFS, roots ...Root) (*Policy, error) {
	if inner == nil {
		return nil, errors.New("workfs: policy needs an inner filesystem")
	}
	if len(roots) == 0 {
		return nil, errors.New("workfs: policy needs at least one root")
	}
	p := &Policy{inner: inner}
	for _, r := range roots {
		if !filepath.IsAbs(r.Path) {
			return nil, fmt.Errorf("workfs: policy root %q is not absolute", r.Path)
		}
		p.add(Root{Path: filepath.Clean(r.Path), Exact: r.Exact})
		if res, err := inner.Resolve(ctx, r.Path); err == nil {
			p.add(Root{Path: filepath.Clean(res), Exact: r.Exact})
		}
	}
	return p, nil
}

// AllowAny returns a Policy over inner with no root confinement (a host's
// --allow-any-path), which still refuses pseudo file systems and reads of
// anything but regular files.
func AllowAny(inner shared.HostFS) *Policy {
	return &Policy{inner: inner, allowAny: true}
}

func (p *Policy) add(root Root) {
	for _, r := range p.roots {
		if r == root {
			return
		}
	}
	p.roots = append(p.roots, root)
}

// Roots returns the allowed roots, including resolved forms; nil when the
// policy allows any path.
func (p *Policy) Roots() []Root { return append([]Root(nil), p.roots...) }

// AllowsAny reports whether the policy confines reads to roots at all.
func (p *Policy) AllowsAny() bool { return p.allowAny }

func (p *Policy) allowed(path string) bool {
	if p.allowAny {
		return true
	}
	for _, r := range p.roots {
		switch {
		case path == r.Path:
			return true
		case r.Exact:
		case r.Path == string(filepath.Separator) || strings.HasPrefix(path, r.Path+string(filepath.Separator)):
			return true
		}
	}
	return false
}

// pseudoPath names the pseudo file system a path is under by its place
// alone: the check every platform can make, and the only one that catches
// /dev, whose devtmpfs says it is tmpfs.
func pseudoPath(path string) string {
	for _, d := range [...]struct{ dir, name string }{{"/proc", "proc"}, {"/sys", "sysfs"}, {"/dev", "devtmpfs"}} {
		if path == d.dir || strings.HasPrefix(path, d.dir+"/") {
			return d.name
		}
	}
	return ""
}

// refusal is a Policy's "no": a permission error that names the path, says
// why, and says how a host could allow it when it can.
type refusal struct {
	op, path string
	target   string // what path resolves to or opened as, when that differs
	reason   error  // ErrOutsideRoots, ErrPseudoFS or ErrNotRegular
	detail   string // the pseudo file system's name, or the file's type
}

func (r *refusal) Error() string {
	subject := r.path
	if r.target != "" && r.target != r.path {
		subject = r.path + " (resolves to " + r.target + ")"
	}
	at := r.path
	if r.target != "" {
		at = r.target
	}
	var why string
	switch r.reason {
	case ErrOutsideRoots:
		why = fmt.Sprintf("%s is outside the allowed roots (allow with --allow-root %s or --allow-any-path)", subject, at)
	case ErrPseudoFS:
		why = fmt.Sprintf("%s is on a pseudo-filesystem (%s), which is never read", subject, r.detail)
	case ErrNotRegular:
		why = fmt.Sprintf("%s is not a regular file (%s); only regular files are read", subject, r.detail)
	default:
		why = subject + ": " + r.reason.Error()
	}
	return r.op + " " + r.path + ": refused: " + why
}

func (r *refusal) Unwrap() []error {
	return []error{r.reason, shared.ErrRefused, fs.ErrPermission}
}

// judge applies the rules that hold for a path wherever it came from: not
// on a pseudo file system by its place, and inside the roots.
func (p *Policy) judge(op, path, target string) error {
	if name := pseudoPath(target); name != "" {
		return &refusal{op: op, path: path, target: target, reason: ErrPseudoFS, detail: name}
	}
	if !p.allowed(target) {
		return &refusal{op: op, path: path, target: target, reason: ErrOutsideRoots}
	}
	return nil
}

// check allows path lexically, then resolves it and allows the result. It
// returns the resolved path so the caller operates on exactly what was
// checked.
func (p *Policy) check(ctx context.Context, op, path string) (string, error) {
	if !filepath.IsAbs(path) {
		return "", &refusal{op: op, path: path, reason: ErrOutsideRoots}
	}
	if err := p.judge(op, path, filepath.Clean(path)); err != nil {
		return "", err
	}
	res, err := p.inner.Resolve(ctx, path)
	if err != nil {
		return "", err
	}
	res = filepath.Clean(res)
	if err := p.judge(op, path, res); err != nil {
		return "", err
	}
	return res, nil
}

// vet judges the file a read opened: its real path (when the platform can
// tell), its file system, and, for a file read, its type.
func (p *Policy) vet(op, path string, wantFile bool) func(opened) error {
	return func(o opened) error {
		target := o.path
		if target == "" {
			target = path
		}
		if o.pseudo != "" {
			return &refusal{op: op, path: path, target: target, reason: ErrPseudoFS, detail: o.pseudo}
		}
		if o.path != "" {
			if err := p.judge(op, path, o.path); err != nil {
				return err
			}
		}
		if wantFile && !o.mode.IsRegular() && !o.mode.IsDir() {
			return &refusal{op: op, path: path, target: target, reason: ErrNotRegular, detail: typeName(o.mode)}
		}
		return nil
	}
}

// typeName says what kind of file a mode describes, for a refusal.
func typeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeIrregular != 0:
		return "irregular file"
	}
	return m.Type().String()
}

// Stat stats the resolved target; the name stays the one asked for, as a
// symlink-following stat reports it. A fifo or a device is reported, not
// refused: stat reads nothing from it.
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

// Lstat reports on path itself, a final symlink not followed, when path is
// inside the roots by its spelling, and when the inner filesystem can (it
// fails with errors.ErrUnsupported otherwise). Unlike Stat it does not
// resolve path first: it gives only metadata, never content, and a caller
// uses it to confirm that a path it already resolved and read through the
// policy is still the same plain file (same device, inode, size and times),
// which costs one system call instead of a resolve and a stat.
func (p *Policy) Lstat(ctx context.Context, path string) (shared.FileInfo, error) {
	// Judged on the cleaned absolute path, as every other call is: "/ws/.."
	// must not reach outside the roots. Lstat reads no content and does not
	// follow the last link; a directory on the way swapped for a link can at
	// most change what the caller compares, and a caller that sees a change
	// resolves and stats through the policy.
	if !filepath.IsAbs(path) {
		return shared.FileInfo{}, &refusal{op: "lstat", path: path, reason: ErrOutsideRoots}
	}
	path = filepath.Clean(path)
	if err := p.judge("lstat", path, path); err != nil {
		return shared.FileInfo{}, err
	}
	l, ok := p.inner.(interface {
		Lstat(context.Context, string) (shared.FileInfo, error)
	})
	if !ok {
		return shared.FileInfo{}, fmt.Errorf("lstat %s: %w", path, errors.ErrUnsupported)
	}
	return l.Lstat(ctx, path)
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
	if v, ok := p.inner.(vetter); ok {
		return v.readDirVetted(ctx, res, p.vet("readdir", path, false))
	}
	return p.inner.ReadDir(ctx, res)
}

// ReadFile reads the resolved file, refusing anything but a regular file.
func (p *Policy) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	res, err := p.check(ctx, "read", path)
	if err != nil {
		return nil, err
	}
	if v, ok := p.inner.(vetter); ok {
		return v.readFileVetted(ctx, res, max, p.vet("read", path, true))
	}
	if err := p.statRegular(ctx, path, res); err != nil {
		return nil, err
	}
	return p.inner.ReadFile(ctx, res, max)
}

// statRegular is the type check for an inner filesystem that cannot show
// the file it opens (an in-memory or remote one): a stat before the read.
func (p *Policy) statRegular(ctx context.Context, path, res string) error {
	fi, err := p.inner.Stat(ctx, res)
	if err != nil {
		return err
	}
	if !fi.Mode.IsRegular() && !fi.Mode.IsDir() {
		return &refusal{op: "read", path: path, target: res, reason: ErrNotRegular, detail: typeName(fi.Mode)}
	}
	return nil
}

// ReadFiles checks each path; refused ones get their error in place. Over a
// filesystem that shows what it opens, each file is read and vetted in turn;
// otherwise the allowed ones are read in one inner batch.
func (p *Policy) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	out := make([]shared.FileContent, len(paths))
	v, vetted := p.inner.(vetter)
	var batch []string
	var idx []int
	for i, path := range paths {
		out[i].Path = path
		res, err := p.check(ctx, "read", path)
		if err == nil && vetted {
			out[i].Data, err = v.readFileVetted(ctx, res, max, p.vet("read", path, true))
		} else if err == nil {
			if err = p.statRegular(ctx, path, res); err == nil {
				batch = append(batch, res)
				idx = append(idx, i)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			out[i].Err = err
		}
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
