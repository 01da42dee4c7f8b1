package instructions

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
)

// SnapshotVersion is the version of the JSON written by Snapshot.
const SnapshotVersion = 1

type snapshotV1 struct {
	Version int          `json:"version"`
	Cwd     string       `json:"cwd"`
	Root    string       `json:"root"`
	Started bool         `json:"started"`
	Dirs    []string     `json:"dirs"`
	Loaded  []Scope      `json:"loaded"`
	Cache   []cacheEntry `json:"cache"`
}

// Snapshot serializes the reconciler's state (loaded scopes, known
// directories, version cache) as versioned JSON.
func (r *Reconciler) Snapshot() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := snapshotV1{Version: SnapshotVersion, Cwd: r.cfg.Cwd, Root: r.st.root, Started: r.st.started,
		Dirs: []string{}, Loaded: []Scope{}, Cache: []cacheEntry{}}
	for d := range r.st.dirs {
		s.Dirs = append(s.Dirs, d)
	}
	sort.Strings(s.Dirs)
	for _, l := range r.st.loaded {
		s.Loaded = append(s.Loaded, l)
	}
	sort.Slice(s.Loaded, func(i, j int) bool { return s.Loaded[i].Key < s.Loaded[j].Key })
	for k, c := range r.st.cache {
		c.Key = k
		s.Cache = append(s.Cache, c)
	}
	sort.Slice(s.Cache, func(i, j int) bool { return s.Cache[i].Key < s.Cache[j].Key })
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("instructions: snapshot: %w", err)
	}
	return b, nil
}

// Restore replaces the reconciler's state with a snapshot, so a resumed
// session announces only what changed since. It rejects an unknown version,
// a snapshot taken for another cwd, and malformed scopes, leaving the state
// untouched.
func (r *Reconciler) Restore(data []byte) error {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return fmt.Errorf("instructions: restore: not a snapshot: %w", err)
	}
	if head.Version != SnapshotVersion {
		return fmt.Errorf("instructions: restore: snapshot version %d is not supported (this build reads version %d)", head.Version, SnapshotVersion)
	}
	var s snapshotV1
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("instructions: restore: %w", err)
	}
	if filepath.Clean(s.Cwd) != r.cfg.Cwd {
		return fmt.Errorf("instructions: restore: snapshot was taken for cwd %q, not %q", s.Cwd, r.cfg.Cwd)
	}
	if s.Root != "" && !filepath.IsAbs(s.Root) {
		return fmt.Errorf("instructions: restore: root %q is not absolute", s.Root)
	}
	st := newState()
	st.root, st.started = s.Root, s.Started
	if st.root != "" {
		st.root = filepath.Clean(st.root) // dirPath relies on a clean root
	}
	for _, d := range s.Dirs {
		if !validLabel(d) {
			return fmt.Errorf("instructions: restore: invalid directory label %q", d)
		}
		st.dirs[d] = 0
	}
	for _, l := range s.Loaded {
		d, c, err := ParseScopeKey(l.Key)
		if err != nil {
			return fmt.Errorf("instructions: restore: loaded scope %q: %w", l.Key, err)
		}
		if !validLabel(d) || validName(c) != nil {
			return fmt.Errorf("instructions: restore: loaded scope %q has an invalid directory or candidate", l.Key)
		}
		if d != l.Dir || c != l.Candidate {
			return fmt.Errorf("instructions: restore: loaded scope %q disagrees with its dir %q and candidate %q", l.Key, l.Dir, l.Candidate)
		}
		st.loaded[l.Key] = l
		st.dirs[d] = 0
	}
	for _, c := range s.Cache {
		if _, _, err := ParseScopeKey(c.Key); err != nil {
			return fmt.Errorf("instructions: restore: cache row %q: %w", c.Key, err)
		}
		st.cache[c.Key] = c
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.st = st
	return nil
}
