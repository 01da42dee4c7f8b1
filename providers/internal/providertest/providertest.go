// Package providertest holds what the built-in providers' tests share: a
// filesystem that fails on chosen files and compact views of a result.
package providertest

import (
	"context"
	"io/fs"
	"testing"

	"github.com/rulebroker/rulebroker/plugin"
)

// Home and Cwd are the user's home and the project in every provider test.
const (
	Home = "/home/u"
	Cwd  = "/work/p"
)

// FailFS is FS with opening the named files failing with Err, the way a file
// the user may not read behaves.
type FailFS struct {
	fs.FS
	Fail []string
	Err  error
}

// Open fails for the names in Fail.
func (f FailFS) Open(name string) (fs.File, error) {
	for _, n := range f.Fail {
		if n == name {
			return nil, &fs.PathError{Op: "open", Path: name, Err: f.Err}
		}
	}
	return f.FS.Open(name)
}

// Discover runs p on fsys with the test Home and Cwd and fails the test on an
// error.
func Discover(t *testing.T, p plugin.Provider, fsys fs.FS) plugin.Result {
	t.Helper()
	return DiscoverIn(t, p, fsys, Cwd)
}

// DiscoverIn is Discover with another cwd.
func DiscoverIn(t *testing.T, p plugin.Provider, fsys fs.FS, cwd string) plugin.Result {
	t.Helper()
	res, err := p.Discover(context.Background(), plugin.Request{Cwd: cwd, Home: Home, WorkspaceRoot: cwd, FS: fsys})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return res
}

// Rules renders each rule as "name level path", in order.
func Rules(rules []plugin.Rule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.Name+" "+string(r.Level)+" "+r.Path)
	}
	return out
}

// Warnings renders each warning as "path: message", in order.
func Warnings(warnings []plugin.Warning) []string {
	out := []string{}
	for _, w := range warnings {
		out = append(out, w.String())
	}
	return out
}
