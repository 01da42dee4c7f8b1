package workfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/rulebroker/rulebroker/shared"
)

// OS is shared.HostFS on the real filesystem. Its zero value is ready to use.
//
// ReadFile and ReadFiles treat max <= 0 as "no cap".
type OS struct{}

var _ shared.HostFS = OS{}

// Stat follows symlinks and fills in device, inode and change time where the
// platform has them.
func (OS) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return shared.FileInfo{}, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return shared.FileInfo{}, wrapOSErr("stat", path, err)
	}
	return fileInfo(fi), nil
}

// Lstat is Stat without following a final symlink: a link is reported as a
// link. It lets a caller that already knows where a path led confirm, with
// one system call, that it is still the same plain file.
func (OS) Lstat(ctx context.Context, path string) (shared.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return shared.FileInfo{}, err
	}
	fi, err := os.Lstat(path)
	if err != nil {
		return shared.FileInfo{}, wrapOSErr("lstat", path, err)
	}
	return fileInfo(fi), nil
}

// Resolve returns the absolute path with every symlink followed.
func (OS) Resolve(ctx context.Context, path string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	p, err := resolve(path)
	if err != nil {
		return "", wrapOSErr("resolve", path, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	return abs, nil
}

// ReadDir lists a directory sorted by name; each entry carries the type bits
// of the entry itself (a symlink is a symlink). It opens without blocking,
// as ReadFile does, so a fifo at the path cannot hang the caller.
func (o OS) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	return o.readDirVetted(ctx, path, nil)
}

// ReadFile reads a regular file of at most max bytes. It reads max+1 bytes
// rather than trusting the size from stat, because the file may grow between
// the two calls. It opens without blocking so a fifo cannot hang the caller;
// a non-regular file is an error.
func (o OS) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	return o.readFileVetted(ctx, path, max, nil)
}

// opened is what a read actually opened, for a Policy to judge before a
// byte is read.
type opened struct {
	path   string      // the descriptor's real path; "" where the platform cannot tell
	mode   fs.FileMode // from fstat of the descriptor
	pseudo string      // the pseudo file system holding it ("proc", "sysfs"...), "" for none
}

// vetter is a filesystem that can show a Policy the file it opened before
// reading it, so the checks apply to exactly what is read: a path swapped
// for a link or a device between the check and the read is caught. OS is
// one; a filesystem that is not is checked by path and Stat only.
type vetter interface {
	readFileVetted(ctx context.Context, path string, max int64, vet func(opened) error) ([]byte, error)
	readDirVetted(ctx context.Context, path string, vet func(opened) error) ([]shared.DirEntry, error)
}

var _ vetter = OS{}

// open opens path for reading and, when vet is set, lets it judge the open
// file. The caller closes the file.
func openVetted(op, path string, vet func(opened) error) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, openFlags, 0)
	if err != nil {
		return nil, nil, wrapOSErr(op, path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, wrapOSErr(op, path, err)
	}
	if vet != nil {
		real, pseudo, err := openedFacts(f)
		if err != nil {
			f.Close()
			return nil, nil, wrapOSErr(op, path, err)
		}
		if err := vet(opened{path: real, mode: fi.Mode(), pseudo: pseudo}); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return f, fi, nil
}

func (OS) readFileVetted(ctx context.Context, path string, max int64, vet func(opened) error) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, fi, err := openVetted("read", path, vet)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	switch {
	case fi.IsDir():
		return nil, fmt.Errorf("read %s: %w", path, syscall.EISDIR)
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("read %s: not a regular file (%s): %w", path, fi.Mode().Type(), fs.ErrInvalid)
	}
	data, err := readUpTo(f, fi.Size(), max)
	if err != nil {
		return nil, wrapOSErr("read", path, err)
	}
	if max > 0 && int64(len(data)) > max {
		return nil, fmt.Errorf("read %s: larger than %d bytes: %w", path, max, shared.ErrTooLarge)
	}
	return data, nil
}

// readUpTo reads r to its end, or to limit+1 bytes when limit > 0. The buffer
// starts at the size fstat gave (one byte more, to see the end or a file
// that grew) rather than io.ReadAll's 512 bytes: a batch of 10,000 rule
// files otherwise spends as long growing and clearing buffers as reading.
func readUpTo(r io.Reader, size, limit int64) ([]byte, error) {
	if limit > 0 {
		r = io.LimitReader(r, limit+1)
		size = min(size, limit)
	}
	buf := make([]byte, 0, max(size, 0)+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow: the file is longer than fstat said
		}
	}
}

func (OS) readDirVetted(ctx context.Context, path string, vet func(opened) error) ([]shared.DirEntry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, _, err := openVetted("readdir", path, vet)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil {
		return nil, wrapOSErr("readdir", path, err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	out := make([]shared.DirEntry, len(ents))
	for i, e := range ents {
		out[i] = shared.DirEntry{Name: e.Name(), Type: e.Type()}
	}
	return out, nil
}

// ReadFiles reads each path with ReadFile; every result carries its own error.
func (o OS) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	out := make([]shared.FileContent, len(paths))
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := o.ReadFile(ctx, p, max)
		out[i] = shared.FileContent{Path: p, Data: data, Err: err}
	}
	return out, nil
}

// wrapOSErr restates an os error as "op path: cause", mapping ENOTDIR to
// shared.ErrNotDir (the errno itself is kept in the chain) and keeping the
// inner path when the failure was on a different component.
func wrapOSErr(op, path string, err error) error {
	cause := err
	var pe *fs.PathError
	if errors.As(err, &pe) {
		cause = pe.Err
		if pe.Path != path {
			cause = fmt.Errorf("%s: %w", pe.Path, pe.Err)
		}
	} else if strings.Contains(err.Error(), "too many links") {
		// filepath.EvalSymlinks reports a loop with a plain error of its own;
		// give it the errno a loop has everywhere else so callers can tell.
		cause = fmt.Errorf("%w: %w", syscall.ELOOP, err)
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s %s: %w: %w", op, path, shared.ErrNotDir, cause)
	}
	return fmt.Errorf("%s %s: %w", op, path, cause)
}
