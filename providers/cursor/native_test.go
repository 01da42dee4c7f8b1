package cursor

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
	pt "github.com/rulebroker/rulebroker/providers/internal/providertest"
)

func TestActivationMappings(t *testing.T) {
	pt.CheckMappings(t, New(), "work/p/.cursor/rules/r.mdc", []pt.Mapping{
		{Name: "alwaysApply", Data: "---\nalwaysApply: true\nglobs: '*.go'\ndescription: d\n---\nbody", Activation: plugin.ActivationAlways, Source: "cursor: alwaysApply: true"},
		{Name: "globs", Data: "---\nglobs: '*.go'\ndescription: d\n---\nbody", Activation: plugin.ActivationAttached, Source: "cursor: globs"},
		{Name: "description only", Data: "---\ndescription: d\n---\nbody", Activation: plugin.ActivationRequested, Source: "cursor: description"},
		{Name: "nothing", Data: "body", Activation: plugin.ActivationManual, Source: "cursor: no alwaysApply, globs or description"},
		{Name: "alwaysApply false", Data: "---\nalwaysApply: false\n---\nbody", Activation: plugin.ActivationManual, Source: "cursor: no alwaysApply, globs or description"},
	})
}

func TestNativeNestedAndRecursive(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.cursor/rules/u.mdc":            {Data: []byte("user")},
		"home/u/.cursor/rules/team/t.mdc":       {Data: []byte("user, in a subfolder")},
		"work/.cursor/rules/root.mdc":           {Data: []byte("root")},
		"work/.cursor/rules/b/deep/x.mdc":       {Data: []byte("root, two folders down")},
		"work/.cursor/rules/a.mdc":              {Data: []byte("root a")}, // path order: a.mdc < a/inner.md < b/… < root.mdc
		"work/.cursor/rules/a/inner.md":         {Data: []byte("after a.mdc in path order")},
		"work/.cursor/rules/.hidden/h.mdc":      {Data: []byte("hidden folder")},
		"work/.cursor/rules/notes.txt":          {Data: []byte("not a rule")},
		"work/p/.cursor/rules/p.mdc":            {Data: []byte("cwd")},
		"work/p/.cursor/rules/deeper/q.mdc":     {Data: []byte("cwd, subfolder")},
		"work/p/sub/.cursor/rules/below.mdc":    {Data: []byte("below cwd: not loaded")},
		"work/other/.cursor/rules/sibling.mdc":  {Data: []byte("beside cwd: not loaded")},
		".cursor/rules/above.mdc":               {Data: []byte("above the workspace root: not loaded")},
		"work/.cursorrules":                     {Data: []byte("legacy rules")},
		"work/p/.cursorrules":                   {Data: []byte("legacy, not at the root: not loaded")},
		"work/.cursor/rules/b/deep/cursorrules": {Data: []byte("no extension: not a rule")},
	}
	res := pt.DiscoverMode(t, New(), fsys, plugin.ModeNative, pt.Root, pt.Cwd)
	want := []string{
		"t user home/u/.cursor/rules/team/t.mdc",
		"u user home/u/.cursor/rules/u.mdc",
		"a project work/.cursor/rules/a.mdc",
		"inner project work/.cursor/rules/a/inner.md",
		"x project work/.cursor/rules/b/deep/x.mdc",
		"root project work/.cursor/rules/root.mdc",
		"q project work/p/.cursor/rules/deeper/q.mdc",
		"p project work/p/.cursor/rules/p.mdc",
		"cursorrules project work/.cursorrules",
	}
	if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	wantAct := []string{
		"t manual (cursor: no alwaysApply, globs or description) base=",
		"u manual (cursor: no alwaysApply, globs or description) base=",
		"a manual (cursor: no alwaysApply, globs or description) base=work",
		"inner manual (cursor: no alwaysApply, globs or description) base=work",
		"x manual (cursor: no alwaysApply, globs or description) base=work",
		"root manual (cursor: no alwaysApply, globs or description) base=work",
		"q manual (cursor: no alwaysApply, globs or description) base=work/p",
		"p manual (cursor: no alwaysApply, globs or description) base=work/p",
		"cursorrules always (.cursorrules) base=work",
	}
	if got := pt.Activations(res.Rules); !reflect.DeepEqual(got, wantAct) {
		t.Errorf("activations = %q\nwant          %q", got, wantAct)
	}
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %q", pt.Warnings(res.Warnings))
	}

	// Reference mode on the same tree: cwd's folder only, no subfolders, and
	// the legacy file only warned about in cwd.
	ref := pt.DiscoverMode(t, New(), fsys, plugin.ModeReference, pt.Root, pt.Cwd)
	wantRef := []string{"u user home/u/.cursor/rules/u.mdc", "p project work/p/.cursor/rules/p.mdc"}
	if got := pt.Rules(ref.Rules); !reflect.DeepEqual(got, wantRef) {
		t.Errorf("reference rules = %q, want %q", got, wantRef)
	}
	if got := pt.Warnings(ref.Warnings); len(got) != 1 || got[0] != "work/p/.cursorrules: legacy .cursorrules is not read; move its rules to .cursor/rules/*.mdc" {
		t.Errorf("reference warnings = %q", got)
	}
}

func TestNativeCollisions(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.cursor/rules/style.mdc":  {Data: []byte("user style: the broker shadows the project one")},
		"work/.cursor/rules/style.mdc":    {Data: []byte("root style: dropped")},
		"work/.cursor/rules/a/style.mdc":  {Data: []byte("subfolder style: first in path order")},
		"work/p/.cursor/rules/style.md":   {Data: []byte("nested style: dropped")},
		"work/p/.cursor/rules/other.mdc":  {Data: []byte("other")},
		"work/.cursorrules":               {Data: []byte("legacy")},
		"work/p/.cursor/rules/x/sub.mdc":  {Data: []byte("x/sub")},
		"work/p/.cursor/rules/y/sub.mdc":  {Data: []byte("y/sub: dropped")},
		"work/p/.cursor/rules/z/.sub.mdc": {Data: []byte("dotfile: not a rule")},
	}
	res := pt.DiscoverMode(t, New(), fsys, plugin.ModeNative, pt.Root, pt.Cwd)
	want := []string{
		"style user home/u/.cursor/rules/style.mdc",
		"style project work/.cursor/rules/a/style.mdc",
		"other project work/p/.cursor/rules/other.mdc",
		"sub project work/p/.cursor/rules/x/sub.mdc",
		"cursorrules project work/.cursorrules",
	}
	if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	wantWarnings := []string{
		`work/.cursor/rules/style.mdc: rule name "style" is already used by work/.cursor/rules/a/style.mdc; this file is not loaded (rename it to load both)`,
		`work/p/.cursor/rules/style.md: rule name "style" is already used by work/.cursor/rules/a/style.mdc; this file is not loaded (rename it to load both)`,
		`work/p/.cursor/rules/y/sub.mdc: rule name "sub" is already used by work/p/.cursor/rules/x/sub.mdc; this file is not loaded (rename it to load both)`,
	}
	if got := pt.Warnings(res.Warnings); !reflect.DeepEqual(got, wantWarnings) {
		t.Errorf("warnings = %q\nwant       %q", got, wantWarnings)
	}
}

func TestNativeCwdIsRootOrHome(t *testing.T) {
	fsys := fstest.MapFS{
		"home/u/.cursor/rules/a.mdc":     {Data: []byte("a")},
		"home/u/.cursor/rules/sub/b.mdc": {Data: []byte("b")},
	}
	res := pt.DiscoverMode(t, New(), fsys, plugin.ModeNative, pt.Home, pt.Home)
	if got, want := pt.Rules(res.Rules), []string{"a user home/u/.cursor/rules/a.mdc", "b user home/u/.cursor/rules/sub/b.mdc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q (listed once)", got, want)
	}
	// No workspace root given: cwd is where the search starts.
	res = pt.DiscoverMode(t, New(), fstest.MapFS{"work/p/.cursor/rules/x.mdc": {Data: []byte("x")}, "work/.cursor/rules/y.mdc": {Data: []byte("y")}},
		plugin.ModeNative, "", pt.Cwd)
	if got, want := pt.Rules(res.Rules), []string{"x project work/p/.cursor/rules/x.mdc"}; !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q, want %q", got, want)
	}
}

func TestNativeTreeCaps(t *testing.T) {
	fsys := fstest.MapFS{}
	deep := "work/p/.cursor/rules"
	for range plugin.MaxTreeDepth + 2 {
		deep += "/d"
		fsys[deep+"/r.mdc"] = &fstest.MapFile{Data: []byte("deep")}
	}
	res := pt.DiscoverMode(t, New(), fsys, plugin.ModeNative, pt.Cwd, pt.Cwd)
	if len(res.Rules) != 1 { // one name "r": the rest are duplicates or past the cap
		t.Errorf("rules = %q", pt.Rules(res.Rules))
	}
	capped := false
	for _, w := range res.Warnings {
		capped = capped || w.Message == "more than 16 folder levels below the rules folder (the cap); not searched"
	}
	if !capped {
		t.Errorf("no warning names the depth cap: %q", pt.Warnings(res.Warnings))
	}
}
