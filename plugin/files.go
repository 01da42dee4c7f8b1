package plugin

import (
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/rulebroker/rulebroker/plugin/frontmatter"
	"github.com/rulebroker/rulebroker/shared"
)

// File is one file a provider loaded.
type File struct {
	Path string // name in the FS
	Name string // base name without the extension that selected it
	Data []byte // raw bytes, as read

	// parsed, for a file read through the host's filesystem, is the
	// provider process's parse cache: ParseRule answers from it when the
	// bytes are those of a file it parsed in this discovery or the one
	// before.
	parsed *frontmatter.Cache
}

// parseCacher is a filesystem whose files share a parse cache: the host's.
type parseCacher interface{ parseCache() *frontmatter.Cache }

// LoadDir loads the files directly inside dir (a name in fsys) whose names
// end in one of exts (e.g. ".md", ".mdc"), sorted by name, reading them all in
// one batched call when fsys is the host's.
//
// It behaves like the shell glob dir/*{exts}: names starting with "." are not
// matched, and subdirectories are not searched. A directory entry that is a
// symlink is followed and kept only when its target is a regular file. A
// missing dir is not a problem: there are simply no files. Anything else that
// goes wrong with one file is a warning naming it, and the other files still
// load.
func LoadDir(fsys fs.FS, dir string, exts ...string) ([]File, []Warning) {
	paths, warnings := listDir(fsys, dir, exts...)
	files, more := LoadFiles(fsys, paths)
	return files, append(warnings, more...)
}

// listDir is the listing half of LoadDir: the names of the matching regular
// files in dir, sorted by name.
func listDir(fsys fs.FS, dir string, exts ...string) ([]string, []Warning) {
	dir = path.Clean(dir)
	entries, w := readDir(fsys, dir)
	if w != nil {
		return nil, []Warning{*w}
	}
	return ruleFiles(fsys, dir, entries, exts)
}

// readDir lists dir. A missing dir has no entries and no warning; one that
// cannot be read, or is a file, has a warning.
func readDir(fsys fs.FS, dir string) ([]fs.DirEntry, *Warning) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		if !IsAbsent(err) {
			return nil, &Warning{Path: dir, Message: "cannot read directory: " + ErrorCause(err)}
		}
		// "Not a directory" is also the answer when dir itself is a file:
		// that is a mistake to report, not a missing directory.
		if info, serr := fs.Stat(fsys, dir); serr == nil && !info.IsDir() {
			return nil, &Warning{Path: dir, Message: "not a directory; no rules read from it"}
		}
		return nil, nil
	}
	return entries, nil
}

// ruleFiles picks, from dir's entries, the rule files to load: not
// dotfiles, one of exts, regular after following a link.
func ruleFiles(fsys fs.FS, dir string, entries []fs.DirEntry, exts []string) ([]string, []Warning) {
	var paths []string
	var warnings []Warning
	for _, e := range entries { // fs.ReadDir sorts by name
		if strings.HasPrefix(e.Name(), ".") || matchExt(e.Name(), exts) == "" {
			continue
		}
		p := path.Join(dir, e.Name())
		ok, w := isRegular(fsys, p, e.Type())
		if w != nil {
			warnings = append(warnings, *w)
		}
		if ok {
			paths = append(paths, p)
		}
	}
	return paths, warnings
}

// isRegular decides whether a directory entry is a file to load. Entries
// whose type the listing already tells are decided without a round trip.
func isRegular(fsys fs.FS, p string, typ fs.FileMode) (bool, *Warning) {
	switch {
	case typ.IsRegular():
		return true, nil
	case typ.IsDir():
		return false, nil // a subdirectory named like a rule file: not a rule
	case typ&fs.ModeSymlink == 0:
		return false, &Warning{Path: p, Message: "not a regular file (" + typ.String() + "); skipped"}
	}
	info, err := fs.Stat(fsys, p)
	switch {
	case err != nil && IsAbsent(err):
		return false, &Warning{Path: p, Message: "symlink target does not exist; skipped"}
	case err != nil:
		return false, &Warning{Path: p, Message: "cannot follow symlink: " + ErrorCause(err)}
	case info.Mode().IsRegular():
		return true, nil
	case info.IsDir():
		return false, nil
	default:
		return false, &Warning{Path: p, Message: "symlink target is not a regular file; skipped"}
	}
}

// LoadFiles reads the files at the given names in fsys, in order, in one
// batched call when fsys is the host's. A file that does not exist is skipped
// without a warning (an optional file such as global_rules.md, or one deleted
// since it was listed); any other read error is a warning naming the file.
// Name is the base name without its extension.
func LoadFiles(fsys fs.FS, paths []string) ([]File, []Warning) {
	if len(paths) == 0 {
		return nil, nil
	}
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = path.Clean(p)
	}
	var parsed *frontmatter.Cache
	if c, ok := fsys.(parseCacher); ok {
		parsed = c.parseCache()
	}
	var files []File
	var warnings []Warning
	for _, r := range readFiles(fsys, names) {
		p := r.Name
		switch {
		case r.Err == nil:
			base := path.Base(p)
			files = append(files, File{Path: p, Name: strings.TrimSuffix(base, path.Ext(base)), Data: r.Data, parsed: parsed})
		case IsAbsent(r.Err):
		default:
			warnings = append(warnings, Warning{Path: p, Message: "cannot read file: " + ErrorCause(r.Err)})
		}
	}
	return files, warnings
}

// matchExt returns the extension in exts that name ends with, or "".
func matchExt(name string, exts []string) string {
	for _, ext := range exts {
		if strings.HasSuffix(name, ext) && len(name) > len(ext) {
			return ext
		}
	}
	return ""
}

// ErrorCause is err's message without the io/fs path prefix: a warning
// carries the path in its own field, and repeating it in the message would
// only clutter it.
func ErrorCause(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// LoadRules loads the rule files in dir (see LoadDir) and parses each into a
// rule at the given level (see ParseRule), in file name order.
func LoadRules(fsys fs.FS, dir string, level Level, exts ...string) ([]Rule, []Warning) {
	files, warnings := LoadDir(fsys, dir, exts...)
	rules, more := ParseRules(files, level)
	return rules, append(warnings, more...)
}

// ParseRules parses each file into a rule at the given level (see ParseRule).
func ParseRules(files []File, level Level) ([]Rule, []Warning) {
	var rules []Rule
	var warnings []Warning
	for _, f := range files {
		r, w := ParseRule(f, level)
		rules = append(rules, r)
		warnings = append(warnings, w...)
	}
	return rules, warnings
}

// IsAbsent reports an error that means "nothing there": the path does not
// exist, a component on the way is not a directory, or the host's policy does
// not show it (the broker reports refusals to the host itself). Providers
// treat such paths as simply not configured.
func IsAbsent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, shared.ErrNotDir) || errors.Is(err, shared.ErrRefused)
}

// WarnIfPresent returns a warning naming path (a name in fsys) when it exists: for files a
// provider deliberately does not read (legacy formats such as .cursorrules),
// so a user whose rules live only there learns why nothing loads.
func WarnIfPresent(fsys fs.FS, path, message string) []Warning {
	if _, err := fs.Stat(fsys, path); err != nil {
		return nil
	}
	return []Warning{{Path: path, Message: message}}
}
