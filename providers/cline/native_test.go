package cline

import (
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/rulebroker/rulebroker/plugin"
	pt "github.com/rulebroker/rulebroker/providers/internal/providertest"
)

func TestActivationMappings(t *testing.T) {
	pt.CheckMappings(t, New(), "work/p/.clinerules/r.md", []pt.Mapping{
		{Name: "no frontmatter", Data: "Always do this.", Activation: plugin.ActivationAlways, Source: "cline: no frontmatter"},
		{Name: "frontmatter without paths", Data: "---\ndescription: d\n---\nbody", Activation: plugin.ActivationAlways, Source: "cline: frontmatter without paths"},
		{Name: "paths", Data: "---\npaths:\n  - src/**/*.ts\n---\nbody", Activation: plugin.ActivationAttached, Source: "cline: paths"},
		{Name: "paths as one string", Data: "---\npaths: 'src/**, docs/*.md'\n---\nbody", Activation: plugin.ActivationAttached, Source: "cline: paths"},
		{Name: "empty paths", Data: "---\npaths: []\n---\nbody", Activation: plugin.ActivationAlways, Source: "cline: frontmatter without paths"},
	})
}

func TestNativePathsAreGlobs(t *testing.T) {
	res := pt.DiscoverMode(t, New(), fstest.MapFS{"work/.clinerules/r.md": {Data: []byte("---\npaths: [src/**, '*.{c,h}']\n---\nbody")}},
		plugin.ModeNative, pt.Root, pt.Cwd)
	if len(res.Rules) != 1 || !reflect.DeepEqual(res.Rules[0].Globs, []string{"src/**", "*.{c,h}"}) || res.Rules[0].GlobBase != "work" {
		t.Errorf("rules = %+v", res.Rules)
	}
}

func TestNativeLocations(t *testing.T) {
	tests := []struct {
		name string
		fsys fstest.MapFS
		want []string
	}{
		{
			name: "the single file is always",
			fsys: fstest.MapFS{"work/p/.clinerules": {Data: []byte("---CLINE_RULES_START---\nx")}},
			want: []string{"clinerules always (cline: .clinerules file) base=work/p"},
		},
		{
			name: ".cline/rules is read like a .clinerules directory",
			fsys: fstest.MapFS{
				"work/p/.cline/rules/a.md":       {Data: []byte("a")},
				"work/p/.cline/rules/hooks/x.md": {Data: []byte("not a rule")},
				"work/.clinerules/far.md":        {Data: []byte("farther")},
			},
			want: []string{"a always (cline: no frontmatter) base=work/p"},
		},
		{
			name: ".clinerules wins in the same directory",
			fsys: fstest.MapFS{
				"work/p/.clinerules/a.md":  {Data: []byte("a")},
				"work/p/.cline/rules/b.md": {Data: []byte("b")},
			},
			want: []string{"a always (cline: no frontmatter) base=work/p"},
		},
		{
			name: "the nearest upward, as in reference mode",
			fsys: fstest.MapFS{"work/.cline/rules/r.md": {Data: []byte("r")}},
			want: []string{"r always (cline: no frontmatter) base=work"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := pt.DiscoverMode(t, New(), tt.fsys, plugin.ModeNative, pt.Root, pt.Cwd)
			if got := pt.Activations(res.Rules); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("rules = %q\nwant    %q", got, tt.want)
			}
			if len(res.Warnings) != 0 {
				t.Errorf("warnings = %q", pt.Warnings(res.Warnings))
			}
		})
	}
	// Reference mode does not read .cline/rules.
	ref := pt.DiscoverMode(t, New(), fstest.MapFS{"work/p/.cline/rules/a.md": {Data: []byte("a")}}, plugin.ModeReference, pt.Root, pt.Cwd)
	if len(ref.Rules) != 0 {
		t.Errorf("reference rules = %q", pt.Rules(ref.Rules))
	}
}
