// Package plugin is the SDK for provider authors: implement Provider, test it on
// a testing/fstest.MapFS, and call Serve from main. It also holds the helpers
// every provider needs: frontmatter-aware rule files, sorted directory loads,
// string-or-list fields and typed pickers.
package plugin

import (
	"context"
	"io/fs"
	"path"
	"strings"

	"github.com/rulebroker/rulebroker/shared"
)

// Rule, Level, Warning and Info are the plain Go types a provider works with.
type (
	Rule    = shared.Rule
	Level   = shared.Level
	Warning = shared.Warning
	Info    = shared.ProviderInfo
)

const (
	LevelUser    = shared.LevelUser
	LevelProject = shared.LevelProject
)

// Provider is what a provider author implements.
type Provider interface {
	// Info names the provider and gives its default priority.
	Info() Info
	// Discover finds the provider's rules. Problems with single files are
	// warnings in the result; an error means the whole discovery failed.
	Discover(ctx context.Context, req Request) (Result, error)
}

// Request tells a provider where to look and how to read.
//
// Cwd, Home and WorkspaceRoot are absolute slash paths. FS is the host's
// filesystem rooted at "/": the file /home/u/.cursor/rules/a.mdc is
// "home/u/.cursor/rules/a.mdc" in it (see FSPath). Stat follows symlinks. In
// tests, FS is typically a testing/fstest.MapFS.
type Request struct {
	Cwd           string
	Home          string
	WorkspaceRoot string
	FS            fs.FS
}

// Result is what Discover returns.
type Result struct {
	Rules    []Rule
	Warnings []Warning
}

// Warn appends a warning about the file at path.
func (r *Result) Warn(path, message string) {
	r.Warnings = append(r.Warnings, Warning{Path: path, Message: message})
}

// FSPath converts an absolute slash path into the name of the same file in
// Request.FS ("/a/b" → "a/b", "/" → ".").
func FSPath(abs string) string {
	p := strings.TrimPrefix(path.Clean("/"+abs), "/")
	if p == "" {
		return "."
	}
	return p
}
