// Package shared is the vocabulary a rulebroker host and its provider plugins
// have in common: plain Go types for rules, warnings and the provider's
// self-description, the Provider and HostFS interfaces the two sides call
// each other through, the filesystem error kinds, and the handshake
// constants.
//
// It imports no transport. The protocol itself lives in shared/providerv1
// (the .proto, from which other languages build, and its generated Go code);
// the gRPC and go-plugin glue that carries these types over it is internal to
// the module, so a host that only reads rules does not link gRPC.
package shared

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"time"
)

// Level says whether a rule came from the user's home or from the project.
type Level string

const (
	LevelUser    Level = "user"
	LevelProject Level = "project"
)

// Rule is one normalized rule as a provider sends it. Which provider sent it
// is the host's knowledge, not the rule's, so it is not a field here.
type Rule struct {
	Name        string
	Path        string // absolute path of the file the rule came from
	Content     string // body with frontmatter removed, trimmed
	Globs       []string
	AlwaysApply bool
	Description string
	// Condition holds the TTSR trigger patterns (frontmatter `condition`, else
	// `ttsr_trigger` / `ttsrTrigger`). A rule with any is a stream trigger.
	Condition []string
	Level     Level
	// Activation says how the rule takes effect when the host applies rules
	// the way each tool does; empty leaves it to the host's classes.
	Activation Activation
	// ActivationSource says, for people, what decided the activation
	// ("windsurf trigger: glob", "cline: no frontmatter").
	ActivationSource string
	// GlobBase is the absolute directory the rule's globs are relative to;
	// empty means the workspace root.
	GlobBase string
}

// DefaultMaxRuleBytes is the cap on one rule file's size when the host sets
// none: the same number bounds what a provider reads and what the host
// accepts, so a rule that loads on one side is never refused by the other.
const DefaultMaxRuleBytes = 4 << 20

// Activation is how a rule reaches the model.
type Activation string

const (
	// ActivationAlways: the content is in every system prompt.
	ActivationAlways Activation = "always"
	// ActivationAttached: the content is injected when a tool touches a file
	// its globs match.
	ActivationAttached Activation = "attached"
	// ActivationRequested: the model sees the name and description and reads
	// the content through rule:// when it judges the rule relevant.
	ActivationRequested Activation = "requested"
	// ActivationManual: only an explicit mention (rule://NAME) brings it in.
	ActivationManual Activation = "manual"
	// ActivationTTSR: the content is injected when the model's output
	// matches one of its conditions.
	ActivationTTSR Activation = "ttsr"
	// ActivationNone: nothing brings the rule to the model.
	ActivationNone Activation = "none"
)

// ActivationMode is how the host asks providers to read rule files.
type ActivationMode string

const (
	// ModeReference reads every file exactly as the reference pipeline does.
	ModeReference ActivationMode = "reference"
	// ModeNative finds and activates rules the way each tool does.
	ModeNative ActivationMode = "native"
)

// Warning is a problem a provider found with one file or with its setup. It
// never stops other files or providers from loading. The host adds who sent
// it when it reports it.
type Warning struct {
	Path    string // the file concerned (absolute), when there is one
	Message string
}

// String renders the warning as "path: message", or the message alone.
func (w Warning) String() string {
	if w.Path == "" {
		return w.Message
	}
	return w.Path + ": " + w.Message
}

// ProviderInfo is what Describe returns.
type ProviderInfo struct {
	Name     string
	Version  string
	Priority int // the provider's default; a host may override it
	// Capabilities name the optional parts of the protocol the provider
	// understands; a host uses such a part only with a provider that names
	// it, so a provider built before it still gets what it understands.
	Capabilities []string
}

// CapabilityUnchangedAnswers says the provider keeps the HostFS answers of
// its previous Discover and takes a Prefetched answer marked Unchanged as
// that answer. A provider that does not name it gets every answer in full.
const CapabilityUnchangedAnswers = "unchanged-answers"

// The bounds of a valid ProviderInfo (see Check).
const (
	// MaxPriority bounds a priority either way: ±1,000,000 leaves room for
	// any ranking a host needs and fits the protocol's int32 with margin.
	MaxPriority = 1_000_000
	// MaxVersionBytes bounds a version string.
	MaxVersionBytes = 64
)

// providerName is what a provider may call itself: it names the provider in
// warnings, tables and --priority flags, so no white space, no capitals, no
// path separators, and short.
var providerName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

// Check reports what is wrong with a provider's self-description, or nil.
// The plugin SDK checks before sending, and the host checks what it receives.
func (i ProviderInfo) Check() error {
	switch {
	case !providerName.MatchString(i.Name):
		return fmt.Errorf("provider name %s is not valid: it must match %s", strconv.Quote(i.Name), providerName)
	case i.Priority < -MaxPriority || i.Priority > MaxPriority:
		return fmt.Errorf("priority %d is out of range (-%d to %d)", i.Priority, MaxPriority, MaxPriority)
	case len(i.Version) > MaxVersionBytes:
		return fmt.Errorf("version is %d bytes long, over the limit of %d", len(i.Version), MaxVersionBytes)
	}
	return nil
}

// DiscoverRequest tells a provider where to look. All paths are absolute.
type DiscoverRequest struct {
	Cwd           string
	Home          string
	WorkspaceRoot string
	// Activation is the host's activation mode; empty means ModeReference.
	Activation ActivationMode
	// ExtraDirs are directories below Cwd the agent has worked in; a
	// provider with per-directory rules looks in them too.
	ExtraDirs []string
	// MaxRuleBytes caps one rule's content; 0 means the provider's default.
	MaxRuleBytes int64
	// Prefetch holds fresh answers, taken by the host just before the call,
	// to HostFS calls the provider made in its previous discovery, so a
	// provider whose inputs mostly did not change needs no round trip to
	// read them again. The plugin SDK answers from it a call it has the
	// exact answer for (same op, path and read cap) and asks the host for
	// the rest.
	Prefetch []Prefetched
}

// PrefetchOp is the HostFS call a Prefetched answers.
type PrefetchOp uint8

const (
	PrefetchStat PrefetchOp = iota + 1
	PrefetchResolve
	PrefetchReadDir
	PrefetchReadFile
)

// Prefetched is one HostFS call's answer, sent with Discover ahead of the
// call. Err, when set, is the call's error (it answers errors.Is like the
// call's own would); otherwise the field for Op holds the answer.
type Prefetched struct {
	Op   PrefetchOp
	Path string
	// MaxBytes is, for PrefetchReadFile, the cap the file was read with.
	MaxBytes int64
	Info     FileInfo   // PrefetchStat
	Resolved string     // PrefetchResolve
	Entries  []DirEntry // PrefetchReadDir
	Data     []byte     // PrefetchReadFile
	Err      error
	// Unchanged, set instead of an answer, says the answer is the one the
	// provider got for this same call in its previous Discover in the same
	// process: the host checked that the path has not changed since, and
	// sends no bytes for it. A provider that did not keep that answer asks
	// the host.
	Unchanged bool
}

// Sink receives what a provider discovers, one item at a time, so a large rule
// set streams instead of travelling in one message.
type Sink interface {
	Rule(Rule) error
	Warning(Warning) error
}

// Provider is a rule provider as the wire sees it. The plugin SDK adapts its
// friendlier interface to this one; the host's broker consumes it.
type Provider interface {
	Describe(ctx context.Context) (ProviderInfo, error)
	Discover(ctx context.Context, req DiscoverRequest, fsys HostFS, sink Sink) error
}

// HostFS is the host's filesystem as providers and the instruction reconciler
// see it: the "ctx.fs" of the spec. Paths are absolute. Stat follows symlinks;
// Resolve returns the fully resolved path (every link followed).
//
// Errors wrap fs.ErrNotExist, fs.ErrPermission, ErrNotDir, ErrTooLarge or
// ErrRefused where those apply, so callers classify them with errors.Is.
type HostFS interface {
	Stat(ctx context.Context, path string) (FileInfo, error)
	Resolve(ctx context.Context, path string) (string, error)
	ReadDir(ctx context.Context, path string) ([]DirEntry, error)
	// ReadFile reads at most max bytes; a longer file fails with ErrTooLarge.
	ReadFile(ctx context.Context, path string, max int64) ([]byte, error)
	// ReadFiles reads many files in one call. Each result carries its own error.
	ReadFiles(ctx context.Context, paths []string, max int64) ([]FileContent, error)
}

// FileInfo describes a file after following symlinks.
type FileInfo struct {
	Name    string
	Size    int64
	Mode    fs.FileMode
	ModTime time.Time
	// Identity of the file's version, for caches: device, inode and change time.
	// Zero where the filesystem has no such notion.
	Dev   uint64
	Ino   uint64
	Ctime time.Time
}

// IsRegular reports whether the file is a regular file.
func (fi FileInfo) IsRegular() bool { return fi.Mode.IsRegular() }

// DirEntry is one entry of a directory listing. Type holds only the type bits
// of the entry itself (a symlink is reported as a symlink).
type DirEntry struct {
	Name string
	Type fs.FileMode
}

// FileContent is one result of a batched read.
type FileContent struct {
	Path string
	Data []byte
	Err  error
}

var (
	// ErrNotDir: a component on the way to the path is not a directory.
	ErrNotDir = errors.New("not a directory")
	// ErrTooLarge: the file is larger than the read cap.
	ErrTooLarge = errors.New("file exceeds the read cap")
	// ErrRefused: the host's filesystem policy does not let anyone read the
	// path. It comes wrapped together with fs.ErrPermission. Providers treat
	// it as "not there" (the host chose not to show it); the broker tells
	// the host, once per provider, what its policy refused.
	ErrRefused = errors.New("refused by the host's filesystem policy")
)
