package instructions

import (
	"errors"
	"path/filepath"
	"strings"
)

// UserGlobalDir is the directory label of the user-global scope.
const UserGlobalDir = "user-global"

// This file is the one place that knows how scopes are named.
//
// A scope is one (directory, candidate) pair. Its key is the directory label,
// a NUL, and the candidate name; NUL cannot occur in a path or a validated
// candidate name. The directory label is UserGlobalDir for the user-global
// scope, and otherwise the slash-separated path relative to the workspace
// root ("." for the root). A workspace directory whose relative path is
// literally "user-global" is labelled "./user-global" so the two never
// collide.

// ScopeKey encodes a scope key from a directory label and a candidate name.
func ScopeKey(dir, candidate string) string { return dir + "\x00" + candidate }

// ParseScopeKey decodes a scope key. The candidate is what follows the last
// NUL, so any label round-trips with a NUL-free candidate.
func ParseScopeKey(key string) (dir, candidate string, err error) {
	i := strings.LastIndexByte(key, 0)
	if i < 0 {
		return "", "", errors.New("instructions: scope key has no NUL separator")
	}
	dir, candidate = key[:i], key[i+1:]
	if dir == "" || candidate == "" {
		return "", "", errors.New("instructions: scope key has an empty directory or candidate")
	}
	return dir, candidate, nil
}

// dirLabel labels the absolute directory abs under root; ok is false when abs
// is not root or below it.
func dirLabel(root, abs string) (string, bool) {
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	l := filepath.ToSlash(rel)
	if l == UserGlobalDir {
		l = "./" + l
	}
	return l, true
}

// dirPath is the inverse of dirLabel (and maps UserGlobalDir to dshHome).
func dirPath(root, dshHome, label string) string {
	if label == UserGlobalDir {
		return dshHome
	}
	label = strings.TrimPrefix(label, "./")
	if label == "." {
		return root
	}
	if filepath.Separator == '/' && root != "/" {
		// Labels are clean relative paths (dirLabel made them, validLabel
		// checked restored ones) and root is clean: concatenation is Join,
		// without Join's Clean, which every probe of every round would pay.
		return root + "/" + label
	}
	return filepath.Join(root, filepath.FromSlash(label))
}

// dirDepth orders labels: user-global first, then the root, then deeper.
func dirDepth(label string) int {
	switch label {
	case UserGlobalDir:
		return -1
	case ".":
		return 0
	}
	return strings.Count(strings.TrimPrefix(label, "./"), "/") + 1
}

// validLabel accepts only labels dirLabel can produce, so a hand-edited or
// corrupted snapshot cannot point probes outside the workspace.
func validLabel(l string) bool {
	switch l {
	case UserGlobalDir, ".", "./" + UserGlobalDir:
		return true
	case "":
		return false
	}
	if strings.HasPrefix(l, "/") || strings.ContainsRune(l, 0) || strings.Contains(l, "\\") {
		return false
	}
	for _, part := range strings.Split(l, "/") {
		if part == "" || part == "." || part == ".." {
			return false
		}
	}
	return true
}
