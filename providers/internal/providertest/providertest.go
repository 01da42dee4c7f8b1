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

// Root is the workspace root above Cwd in the tests of nested rule folders.
const Root = "work"

// DiscoverMode runs p on fsys in the given activation mode, with the test
// Home, the workspace root root and cwd, and fails the test on an error.
func DiscoverMode(t *testing.T, p plugin.Provider, fsys fs.FS, mode plugin.Mode, root, cwd string) plugin.Result {
	t.Helper()
	res, err := p.Discover(context.Background(), plugin.Request{Cwd: cwd, Home: Home, WorkspaceRoot: root, Activation: mode, FS: fsys})
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return res
}

// Activations renders each rule as "name activation (source) base=GlobBase".
func Activations(rules []plugin.Rule) []string {
	out := []string{}
	for _, r := range rules {
		out = append(out, r.Name+" "+string(r.Activation)+" ("+r.ActivationSource+") base="+r.GlobBase)
	}
	return out
}

// Mapping is one row of a provider's activation table: a rule file's text
// and the activation and source it gets in native mode. In reference mode
// every row must give the rule exactly as before modes existed: no
// activation, no source, no glob base.
type Mapping struct {
	Name, Data string
	Activation plugin.Activation
	Source     string
}

// CheckMappings runs each row with the rule file at file (a project rule
// named "r" below Cwd) in both modes.
func CheckMappings(t *testing.T, p plugin.Provider, file string, rows []Mapping) {
	t.Helper()
	for _, row := range rows {
		t.Run(row.Name, func(t *testing.T) {
			fsys := fstest.MapFS{file: {Data: []byte(row.Data)}}
			ref := DiscoverMode(t, p, fsys, plugin.ModeReference, Cwd, Cwd)
			nat := DiscoverMode(t, p, fsys, plugin.ModeNative, Cwd, Cwd)
			if len(ref.Rules) != 1 || len(nat.Rules) != 1 {
				t.Fatalf("rules: reference %q, native %q", Rules(ref.Rules), Rules(nat.Rules))
			}
			r, n := ref.Rules[0], nat.Rules[0]
			if r.Activation != "" || r.ActivationSource != "" || r.GlobBase != "" {
				t.Errorf("reference mode sets an activation: %q", Activations(ref.Rules))
			}
			if n.Activation != row.Activation || n.ActivationSource != row.Source {
				t.Errorf("native = %s (%s), want %s (%s)", n.Activation, n.ActivationSource, row.Activation, row.Source)
			}
			// Native mode adds the activation and may read more keys; the
			// shared fields are the same.
			n.Activation, n.ActivationSource, n.GlobBase = "", "", ""
			n.Globs, r.Globs = nil, nil
			if !reflect.DeepEqual(n, r) {
				t.Errorf("native rule %+v\nreference   %+v", n, r)
			}
		})
	}
}
