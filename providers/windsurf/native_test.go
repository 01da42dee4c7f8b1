package windsurf

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
	pt "github.com/rulebroker/rulebroker/providers/internal/providertest"
)

func TestActivationMappings(t *testing.T) {
	pt.CheckMappings(t, New(), "work/p/.windsurf/rules/r.md", []pt.Mapping{
		{Name: "always_on", Data: "---\ntrigger: always_on\n---\nbody", Activation: plugin.ActivationAlways, Source: "windsurf trigger: always_on"},
		{Name: "model_decision", Data: "---\ntrigger: model_decision\ndescription: d\n---\nbody", Activation: plugin.ActivationRequested, Source: "windsurf trigger: model_decision"},
		{Name: "glob, one string", Data: "---\ntrigger: glob\nglobs: '*.ts, *.tsx'\n---\nbody", Activation: plugin.ActivationAttached, Source: "windsurf trigger: glob"},
		{Name: "glob, a list", Data: "---\ntrigger: glob\nglobs: [src/**, '*.{c,h}']\n---\nbody", Activation: plugin.ActivationAttached, Source: "windsurf trigger: glob"},
		{Name: "glob without globs", Data: "---\ntrigger: glob\n---\nbody", Activation: plugin.ActivationManual, Source: "windsurf trigger: glob without globs"},
		{Name: "manual", Data: "---\ntrigger: manual\ndescription: d\n---\nbody", Activation: plugin.ActivationManual, Source: "windsurf trigger: manual"},
		{Name: "no trigger: Cursor's fields", Data: "---\nalwaysApply: true\n---\nbody", Activation: plugin.ActivationAlways, Source: "windsurf: no trigger; cursor: alwaysApply: true"},
		{Name: "no frontmatter", Data: "body", Activation: plugin.ActivationManual, Source: "windsurf: no trigger; cursor: no alwaysApply, globs or description"},
		{Name: "unknown trigger", Data: "---\ntrigger: sometimes\ndescription: d\n---\nbody", Activation: plugin.ActivationRequested, Source: "windsurf: unknown trigger; cursor: description"},
		{Name: "trigger not a string", Data: "---\ntrigger: 3\n---\nbody", Activation: plugin.ActivationManual, Source: "windsurf: unreadable trigger; cursor: no alwaysApply, globs or description"},
	})
}

func TestNativeWarnings(t *testing.T) {
	const file = "work/p/.windsurf/rules/r.md"
	tests := []struct{ data, want string }{
		{"---\ntrigger: glob\n---\nbody", file + ": trigger: glob without globs: no file can attach the rule, so it is manual (rule://r)"},
		{"---\ntrigger: model_decision\n---\nbody", file + ": trigger: model_decision without a description: the model is offered the rule by name only"},
		{"---\ntrigger: sometimes\n---\nbody", file + `: trigger: "sometimes" is not one of always_on, model_decision, glob, manual; the rule is read by its other fields (manual)`},
		{"---\ntrigger: [a]\n---\nbody", file + ": trigger: a list is not a string; ignored"},
	}
	for _, tt := range tests {
		res := pt.DiscoverMode(t, New(), fstest.MapFS{file: {Data: []byte(tt.data)}}, plugin.ModeNative, pt.Cwd, pt.Cwd)
		if got := pt.Warnings(res.Warnings); len(got) != 1 || got[0] != tt.want {
			t.Errorf("%q: warnings = %q, want %q", tt.data, got, tt.want)
		}
	}
	// A known trigger is read, so the reference warning that it is not
	// does not appear.
	res := pt.DiscoverMode(t, New(), fstest.MapFS{file: {Data: []byte("---\ntrigger: always_on\n---\nbody")}}, plugin.ModeNative, pt.Cwd, pt.Cwd)
	if len(res.Warnings) != 0 {
		t.Errorf("warnings = %q", pt.Warnings(res.Warnings))
	}
}

func TestNativePathsAndLegacy(t *testing.T) {
	fsys := fstest.MapFS{
		global:                              {Data: []byte("global")},
		"work/.windsurf/rules/root.md":      {Data: []byte("---\ntrigger: glob\nglobs: docs/**\n---\nroot")},
		"work/.windsurf/rules/sub/no.md":    {Data: []byte("Windsurf does not search subfolders")},
		"work/p/.windsurf/rules/near.md":    {Data: []byte("---\ntrigger: always_on\n---\nnear")},
		"work/p/.windsurf/rules/root.md":    {Data: []byte("same name: dropped")},
		"work/p/q/.windsurf/rules/below.md": {Data: []byte("below cwd")},
		"work/.windsurfrules":               {Data: []byte("legacy")},
		"work/p/.windsurfrules":             {Data: []byte("legacy, not at the root")},
	}
	res := pt.DiscoverMode(t, New(), fsys, plugin.ModeNative, pt.Root, pt.Cwd)
	want := []string{
		"global_rules always (windsurf: global rules) base=",
		"root attached (windsurf trigger: glob) base=work",
		"near always (windsurf trigger: always_on) base=work/p",
		"windsurfrules always (.windsurfrules) base=work",
	}
	if got := pt.Activations(res.Rules); !reflect.DeepEqual(got, want) {
		t.Errorf("rules = %q\nwant    %q", got, want)
	}
	if got := pt.Warnings(res.Warnings); len(got) != 1 || got[0] != `work/p/.windsurf/rules/root.md: rule name "root" is already used by work/.windsurf/rules/root.md; this file is not loaded (rename it to load both)` {
		t.Errorf("warnings = %q", got)
	}
	ref := pt.DiscoverMode(t, New(), fsys, plugin.ModeReference, pt.Root, pt.Cwd)
	if got, want := pt.Rules(ref.Rules), []string{"global_rules user " + global, "near project work/p/.windsurf/rules/near.md", "root project work/p/.windsurf/rules/root.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("reference rules = %q, want %q", got, want)
	}
}
