package native

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
	pt "github.com/rulebroker/rulebroker/providers/internal/providertest"
)

func TestActivationMappings(t *testing.T) {
	pt.CheckMappings(t, New(), "work/p/.xcsh/rules/r.md", []pt.Mapping{
		{Name: "alwaysApply", Data: "---\nalwaysApply: true\ndescription: d\n---\nbody", Activation: plugin.ActivationAlways, Source: "xcsh: alwaysApply: true"},
		{Name: "globs", Data: "---\nglobs: ['*.go']\n---\nbody", Activation: plugin.ActivationAttached, Source: "xcsh: globs"},
		{Name: "description", Data: "---\ndescription: d\n---\nbody", Activation: plugin.ActivationRequested, Source: "xcsh: description"},
		{Name: "nothing", Data: "body", Activation: plugin.ActivationManual, Source: "xcsh: no alwaysApply, globs or description"},
	})
}

func TestNativeFromTheWorkspaceRoot(t *testing.T) {
	fsys := fstest.MapFS{
		"work/.xcsh/rules/root.md":         {Data: []byte("root")},
		"work/.xcsh/rules/shared.md":       {Data: []byte("root's shared")},
		"work/p/.xcsh/rules/near.mdc":      {Data: []byte("near")},
		"work/p/.xcsh/rules/shared.md":     {Data: []byte("same name: dropped")},
		"work/p/.xcsh/rules/sub/no.md":     {Data: []byte("subfolders are not searched")},
		"work/p/q/.xcsh/rules/below.md":    {Data: []byte("below cwd")},
		"home/u/.xcsh/agent/rules/u.md":    {Data: []byte("user")},
		"home/u/.xcsh/agent/rules/root.md": {Data: []byte("user root: kept, the broker shadows it")},
	}
	res := pt.DiscoverMode(t, New(), fsys, plugin.ModeNative, pt.Root, pt.Cwd)
	want := []string{
		"root project work/.xcsh/rules/root.md",
		"shared project work/.xcsh/rules/shared.md",
		"near project work/p/.xcsh/rules/near.mdc",
		"root user home/u/.xcsh/agent/rules/root.md",
		"u user home/u/.xcsh/agent/rules/u.md",
	}
	if got := pt.Rules(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	if res.Rules[2].GlobBase != "work/p" || res.Rules[0].GlobBase != "work" || res.Rules[3].GlobBase != "" {
		t.Errorf("glob bases: %q", pt.Activations(res.Rules))
	}
	if got := pt.Warnings(res.Warnings); len(got) != 1 || got[0] != `work/p/.xcsh/rules/shared.md: rule name "shared" is already used by work/.xcsh/rules/shared.md; this file is not loaded (rename it to load both)` {
		t.Errorf("warnings = %q", got)
	}
	ref := pt.DiscoverMode(t, New(), fsys, plugin.ModeReference, pt.Root, pt.Cwd)
	wantRef := []string{
		"near project work/p/.xcsh/rules/near.mdc",
		"shared project work/p/.xcsh/rules/shared.md",
		"root user home/u/.xcsh/agent/rules/root.md",
		"u user home/u/.xcsh/agent/rules/u.md",
	}
	if got := pt.Rules(ref.Rules); !reflect.DeepEqual(got, wantRef) {
		t.Errorf("reference rules = %q, want %q", got, wantRef)
	}
}
