package broker

import (
	"context"
	"sort"
	"sync"

	"github.com/rulebroker/rulebroker/shared"
)

// recordingFS remembers every path a provider asked the host about, so the
// host can later tell whether the provider's inputs changed.
type recordingFS struct {
	shared.HostFS
	mu    sync.Mutex
	paths map[string]bool
}

func newRecordingFS(inner shared.HostFS) *recordingFS {
	return &recordingFS{HostFS: inner, paths: map[string]bool{}}
}

func (r *recordingFS) note(paths ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range paths {
		r.paths[p] = true
	}
}

func (r *recordingFS) read() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.paths))
	for p := range r.paths {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func (r *recordingFS) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	r.note(path)
	return r.HostFS.Stat(ctx, path)
}

func (r *recordingFS) Resolve(ctx context.Context, path string) (string, error) {
	r.note(path)
	return r.HostFS.Resolve(ctx, path)
}

func (r *recordingFS) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	r.note(path)
	return r.HostFS.ReadDir(ctx, path)
}

func (r *recordingFS) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	r.note(path)
	return r.HostFS.ReadFile(ctx, path, max)
}

func (r *recordingFS) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	r.note(paths...)
	return r.HostFS.ReadFiles(ctx, paths, max)
}
