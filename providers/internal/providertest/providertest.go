// Package providertest holds what the built-in providers' tests share: a
// filesystem that fails on chosen files and compact views of a result.
package providertest

import (
	"context"
	"io/fs"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
)

// Home and Cwd are the user's home and the project in every provider test,
// as names in the test's FS (the host's /home/u and /work/p).
const (
	Home = "home/u"
	Cwd  = "work/p"
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

// OneRule runs p on a tree holding only the project rule file at name (e.g.
// "work/p/.cursor/rules/r.mdc") with data, and checks the one rule it yields
// — named "r", at that path, project level, otherwise want — and the
// warnings, rendered as by Warnings.
func OneRule(t *testing.T, p plugin.Provider, name, data string, want plugin.Rule, warnings []string) {
	t.Helper()
	res := Discover(t, p, fstest.MapFS{name: {Data: []byte(data)}})
	want.Name, want.Path, want.Level = "r", name, plugin.LevelProject
	if len(res.Rules) != 1 || !reflect.DeepEqual(res.Rules[0], want) {
		t.Errorf("rules = %+v\nwant    %+v", res.Rules, want)
	}
	if got := Warnings(res.Warnings); len(got)+len(warnings) > 0 && !reflect.DeepEqual(got, warnings) {
		t.Errorf("warnings = %q\nwant       %q", got, warnings)
	}
}
