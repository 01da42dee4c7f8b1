// Package plugin is the SDK for provider authors: implement Provider, test it
// on a testing/fstest.MapFS, and call Serve from main. It also holds the
// helpers every provider needs: frontmatter-aware rule files, sorted
// directory loads and the error checks that go with them.
//
// Every path a provider sees or produces is an io/fs name: unrooted and
// slash-separated, the file /home/u/.cursor/rules/a.mdc being
// "home/u/.cursor/rules/a.mdc" and the root being ".". Request's directories
// are names in Request.FS, so fs.ReadFile(req.FS, path.Join(req.Cwd, "x"))
// reads the file x in the working directory, and the paths in the Rules and
// Warnings a provider returns are names in the same FS. Serve converts them to
// and from the host's absolute paths.
package plugin

import (
	"context"
	"io/fs"
)

// Level says whether a rule came from the user's home or from the project.
type Level string

const (
	LevelUser    Level = "user"
	LevelProject Level = "project"
)

// Rule is one normalized rule.
type Rule struct {
	Name string
	// Path is the file the rule came from, as a name in Request.FS.
	Path string
	// Content is the body with the frontmatter removed, trimmed.
	Content     string
	Globs       []string
	AlwaysApply bool
	Description string
	// Condition holds the stream trigger patterns (frontmatter `condition`,
	// else `ttsr_trigger` / `ttsrTrigger`). A rule with any is a stream
	// trigger.
	Condition []string
	Level     Level
	// Activation says how the rule takes effect under native activation
	// (see Request.Activation); leave it empty to let the host classify the
	// rule from the fields above, as the reference pipeline does.
	Activation Activation
	// ActivationSource says, for people, what decided Activation
	// ("windsurf trigger: glob").
	ActivationSource string
	// GlobBase is the directory (a name in Request.FS) the globs are
	// relative to; empty means the workspace root.
	GlobBase string
}

// Activation is how a rule reaches the model.
type Activation string

// The activations a provider may give a rule.
const (
	ActivationAlways    Activation = "always"    // in every system prompt
	ActivationAttached  Activation = "attached"  // injected when a touched file matches Globs
	ActivationRequested Activation = "requested" // listed by description; read on demand
	ActivationManual    Activation = "manual"    // only an explicit rule://NAME brings it in
	ActivationTTSR      Activation = "ttsr"      // injected when the model's output matches Condition
	ActivationNone      Activation = "none"      // nothing brings it to the model
)

// Mode is how the host asks a provider to read rule files.
type Mode string

const (
	// ModeReference reads every file exactly as the reference pipeline does;
	// it is the mode when the host says nothing.
	ModeReference Mode = "reference"
	// ModeNative finds and activates rules the way the provider's tool does.
	ModeNative Mode = "native"
)

// Warning is a problem with one file, or with the provider's setup. It never
// stops other files from loading. The host adds the provider's name.
type Warning struct {
	// Path is the file concerned, as a name in Request.FS, when there is one.
	Path    string
	Message string
}

// String renders the warning as "path: message", or the message alone.
func (w Warning) String() string {
	if w.Path == "" {
		return w.Message
	}
	return w.Path + ": " + w.Message
}

// Info names a provider. The host refuses a provider whose Info breaks
// these rules (Serve checks them first, so the host's warning says which).
type Info struct {
	// Name is unique among the host's providers and names the provider in
	// warnings: it matches ^[a-z0-9][a-z0-9._-]{0,63}$, and a third party
	// may not take a built-in provider's name unless the host allows it.
	Name string
	// Version is at most 64 bytes.
	Version string
	// Priority ranks the provider's rules in the host's merge: a higher
	// priority wins a rule name. The built-ins use 100 (native), 50 (cursor,
	// windsurf) and 40 (cline). A host may override it. It lies within
	// ±1,000,000.
	Priority int
}

// Provider is what a provider author implements.
type Provider interface {
	// Info names the provider and gives its default priority.
	Info() Info
	// Discover finds the provider's rules. Problems with single files are
	// warnings in the result; an error means the whole discovery failed.
	Discover(ctx context.Context, req Request) (Result, error)
}

// Request tells a provider where to look and how to read.
type Request struct {
	// Cwd, Home and WorkspaceRoot are directory names in FS ("home/u/proj";
	// "." is the root). Home is "" when the host gave none.
	Cwd           string
	Home          string
	WorkspaceRoot string
	// Activation is the host's activation mode: ModeReference or ModeNative.
	Activation Mode
	// ExtraDirs are directories (names in FS) below Cwd that the agent has
	// worked in this session; a provider with per-directory rules looks in
	// them too.
	ExtraDirs []string
	// MaxRuleBytes is the host's cap on one rule file; the rule-file helpers
	// read at most this much. Never 0 in a request from the SDK.
	MaxRuleBytes int64
	// FS is the host's filesystem, rooted at "/". Stat follows symlinks.
	// Every read goes through the host, which may refuse it (see IsAbsent).
	// In tests, FS is typically a testing/fstest.MapFS.
	FS fs.FS
}

// Result is what Discover returns.
type Result struct {
	Rules    []Rule
	Warnings []Warning
}
