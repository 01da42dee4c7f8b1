package instructions

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rulebroker/rulebroker/shared"
)

const (
	// DefaultMaxFileBytes is the per-file read cap.
	DefaultMaxFileBytes = 1 << 20
	// DefaultBudget is the byte budget for the file contents one message may
	// carry.
	DefaultBudget = 256 << 10
	// UserGlobalFile is the file name of the user-global instructions inside
	// DSHHome.
	UserGlobalFile = "AGENTS.md"
)

// DefaultCandidates are the base candidate names, in order.
func DefaultCandidates() []string { return []string{"AGENTS.md", "CLAUDE.md"} }

// DefaultLocalCandidates are the local overlay candidate names, in order.
func DefaultLocalCandidates() []string { return []string{"AGENTS.local.md", "CLAUDE.local.md"} }

// DefaultRootMarkers name the entries (file or folder) that mark a workspace
// root.
func DefaultRootMarkers() []string { return []string{".git"} }

// Config configures a Reconciler.
type Config struct {
	// FS is the filesystem every probe and read goes through. Required.
	FS shared.HostFS
	// Cwd is the session's working directory, absolute. Required.
	Cwd string
	// DSHHome holds the user-global AGENTS.md. Empty means no user-global
	// scope; DefaultDSHHome computes the usual value.
	DSHHome string
	// Candidates and LocalCandidates are plain file names probed in every
	// directory, base list first. Nil means the defaults; an empty non-nil
	// slice means none.
	Candidates      []string
	LocalCandidates []string
	// RootMarkers name the entries whose presence marks the workspace root.
	// Nil means the default; an empty non-nil slice makes cwd the root.
	RootMarkers []string
	// MaxFileBytes caps each file; 0 means DefaultMaxFileBytes. A larger file
	// is unavailable, with a warning.
	MaxFileBytes int64
	// Budget caps the bytes of file contents in one message; 0 means
	// DefaultBudget, negative means no budget.
	Budget int64
	// Now is the clock used for the racy-timestamp guard; nil means
	// time.Now.
	Now func() time.Time
}

// DefaultDSHHome returns $DSH_HOME, or <home>/.dsh when it is unset. getenv
// is normally os.Getenv; it is a parameter so callers and tests control the
// environment.
func DefaultDSHHome(getenv func(string) string, home string) string {
	if v := getenv("DSH_HOME"); v != "" {
		return v
	}
	return filepath.Join(home, ".dsh")
}

// DSHHomeFromEnv is DefaultDSHHome with the process environment and the
// user's home directory.
func DSHHomeFromEnv() (string, error) {
	if v := os.Getenv("DSH_HOME"); v != "" {
		return v, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("instructions: locating DSH_HOME: %w", err)
	}
	return filepath.Join(home, ".dsh"), nil
}

// validName accepts a plain file name: no separators, no NUL (it would break
// scope keys), not "." or "..".
func validName(n string) error {
	switch {
	case n == "":
		return errors.New("empty name")
	case n == "." || n == "..":
		return fmt.Errorf("%q is not a file name", n)
	case strings.ContainsAny(n, "/\\\x00"):
		return fmt.Errorf("%q is not a plain file name (no separators or NUL)", n)
	}
	return nil
}

func (c Config) withDefaults() (Config, error) {
	if c.FS == nil {
		return c, errors.New("instructions: Config.FS is required")
	}
	if !filepath.IsAbs(c.Cwd) {
		return c, fmt.Errorf("instructions: Config.Cwd %q must be an absolute path", c.Cwd)
	}
	c.Cwd = filepath.Clean(c.Cwd)
	if c.DSHHome != "" {
		if !filepath.IsAbs(c.DSHHome) {
			return c, fmt.Errorf("instructions: Config.DSHHome %q must be an absolute path", c.DSHHome)
		}
		c.DSHHome = filepath.Clean(c.DSHHome)
	}
	if c.Candidates == nil {
		c.Candidates = DefaultCandidates()
	}
	if c.LocalCandidates == nil {
		c.LocalCandidates = DefaultLocalCandidates()
	}
	if c.RootMarkers == nil {
		c.RootMarkers = DefaultRootMarkers()
	}
	c.Candidates = append([]string(nil), c.Candidates...)
	c.LocalCandidates = append([]string(nil), c.LocalCandidates...)
	c.RootMarkers = append([]string(nil), c.RootMarkers...)
	seen := map[string]bool{}
	for _, n := range append(append([]string(nil), c.Candidates...), c.LocalCandidates...) {
		if err := validName(n); err != nil {
			return c, fmt.Errorf("instructions: candidate: %w", err)
		}
		if seen[n] {
			return c, fmt.Errorf("instructions: candidate %q is listed twice", n)
		}
		seen[n] = true
	}
	for _, n := range c.RootMarkers {
		if err := validName(n); err != nil {
			return c, fmt.Errorf("instructions: root marker: %w", err)
		}
	}
	if c.MaxFileBytes < 0 {
		return c, fmt.Errorf("instructions: MaxFileBytes %d is negative", c.MaxFileBytes)
	}
	if c.MaxFileBytes == 0 {
		c.MaxFileBytes = DefaultMaxFileBytes
	}
	if c.Budget == 0 {
		c.Budget = DefaultBudget
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c, nil
}

// candidates returns the configured candidates in dedup order.
func (c Config) candidates() []string {
	return append(append([]string(nil), c.Candidates...), c.LocalCandidates...)
}
