// Package trust decides which provider binaries a host may run: a lock file
// of the binaries the user trusted, by path and SHA-256 of their bytes, and
// the permission checks that keep other users from swapping them.
//
// The lock file is JSON, a list of {name, path, sha256, added}. A binary
// found in a plugin directory runs only if the lock lists its path with the
// checksum of the bytes about to be executed; the host hashes an open file
// and executes that same open file, so nothing can be swapped in between.
package trust

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// MaxLockBytes caps the lock file: a few hundred entries take a few KiB, so
// anything near this is not a lock file the host wrote.
const MaxLockBytes = 1 << 20

// DefaultLockFile is where a user's lock file lives.
func DefaultLockFile(home string) string {
	return filepath.Join(home, ".rulebroker", "plugins.lock")
}

// Entry is one trusted binary.
type Entry struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	SHA256 string    `json:"sha256"`
	Added  time.Time `json:"added"`
}

// Lock is the set of trusted binaries.
type Lock struct {
	Entries []Entry
}

// Read reads a lock file. A missing file is an empty lock: nothing is
// trusted yet.
func Read(path string) (Lock, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Lock{}, nil
	}
	if err != nil {
		return Lock{}, err
	}
	defer f.Close()
	// A lock anyone can write trusts whatever anyone adds to it.
	if fi, err := f.Stat(); err != nil {
		return Lock{}, err
	} else if fi.Mode().Perm()&0o002 != 0 {
		return Lock{}, fmt.Errorf("%s: the lock file is world-writable (mode %04o): anyone could trust a binary; trusting nothing until it is fixed (chmod o-w)", path, fi.Mode().Perm())
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxLockBytes+1))
	if err != nil {
		return Lock{}, err
	}
	if len(data) > MaxLockBytes {
		return Lock{}, fmt.Errorf("%s: larger than the %d-byte cap of a lock file", path, MaxLockBytes)
	}
	var l Lock
	if err := json.Unmarshal(data, &l.Entries); err != nil {
		return Lock{}, fmt.Errorf("%s: not a lock file (a JSON list of {name, path, sha256, added}): %w", path, err)
	}
	return l, nil
}

// Write replaces the lock file, creating its directory (private to the user)
// if needed. The write goes through a temporary file and a rename, so a
// reader never sees half a lock.
func Write(path string, l Lock) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	entries := l.Entries
	if entries == nil {
		entries = []Entry{}
	}
	data, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".plugins.lock-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// Add records e, replacing any entry for the same path.
func (l *Lock) Add(e Entry) {
	l.Entries = slices.DeleteFunc(l.Entries, func(x Entry) bool { return x.Path == e.Path })
	l.Entries = append(l.Entries, e)
}

// Errors of Check.
var (
	ErrNotTrusted = errors.New("not in the lock file")
	ErrChanged    = errors.New("changed since it was trusted")
)

// Check says whether the binary at path with checksum sum is trusted: nil,
// or an error wrapping ErrNotTrusted or ErrChanged.
func (l Lock) Check(path, sum string) error {
	for _, e := range l.Entries {
		if e.Path != path {
			continue
		}
		if e.SHA256 == sum {
			return nil
		}
		return fmt.Errorf("%w (sha256 %s, trusted %s on %s)", ErrChanged, short(sum), short(e.SHA256), e.Added.Format(time.DateOnly))
	}
	return ErrNotTrusted
}

func short(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}

// Hash returns the hex SHA-256 of an open file's bytes, read from its start
// whatever its offset.
func Hash(f *os.File) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// CheckFile refuses an open binary anyone may rewrite, or that is not a
// regular file.
func CheckFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("world-writable (mode %04o): anyone could replace what runs", fi.Mode().Perm())
	}
	return nil
}

// CheckDir refuses a plugin directory anyone may add binaries to, or one
// below a directory where anyone may rename it away and put another in its
// place (world-writable without the sticky bit).
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("plugin directory %s is world-writable (mode %04o): anyone could add a provider", dir, fi.Mode().Perm())
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o002 != 0 && fi.Mode()&fs.ModeSticky == 0 {
			return fmt.Errorf("plugin directory %s is inside %s, which is world-writable (mode %04o) without the sticky bit: anyone could replace the plugin directory", dir, d, fi.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// Trust hashes the binary at path and records it in the lock, after the
// same permission checks the host makes before it runs one.
func Trust(l *Lock, path string, now time.Time) (Entry, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Entry{}, err
	}
	f, err := os.Open(abs)
	if err != nil {
		return Entry{}, err
	}
	defer f.Close()
	if err := CheckFile(f); err != nil {
		return Entry{}, fmt.Errorf("%s: %w", abs, err)
	}
	if err := CheckDir(filepath.Dir(abs)); err != nil {
		return Entry{}, err
	}
	sum, err := Hash(f)
	if err != nil {
		return Entry{}, err
	}
	e := Entry{Name: filepath.Base(abs), Path: abs, SHA256: sum, Added: now.UTC().Truncate(time.Second)}
	l.Add(e)
	return e, nil
}
