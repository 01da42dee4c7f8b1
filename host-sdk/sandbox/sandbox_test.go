package sandbox

import (
	"slices"
	"testing"
)

func TestFilterEnvKeepsOnlyTheAllowList(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "ACME_API_KEY=secret", "LC_ALL=C", "LCX=no",
		"RULEBROKER_PLUGIN_PATH=/p", "RULEBROKER_SANDBOX_EXEC=3", "AWS_SECRET_ACCESS_KEY=x", "TZ=UTC", "junk",
	}
	got := FilterEnv(environ, DefaultEnv())
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "LC_ALL=C", "RULEBROKER_PLUGIN_PATH=/p", "TZ=UTC"}
	if !slices.Equal(got, want) {
		t.Fatalf("FilterEnv = %q, want %q", got, want)
	}
	if got := FilterEnv(environ, []string{"ACME_API_KEY"}); !slices.Equal(got, []string{"ACME_API_KEY=secret"}) {
		t.Fatalf("a host's own allow-list: %q", got)
	}
}

func TestSpecRoundTripsThroughTheEnvironment(t *testing.T) {
	s := Spec{Binary: "/p/rulebroker-provider-x", ReadExec: []string{"/usr/lib", "/lib"}, ReadWrite: []string{"/tmp/sock"}}
	env := map[string]string{}
	for _, kv := range s.Env() {
		for i := range kv {
			if kv[i] == '=' {
				env[kv[:i]] = kv[i+1:]
				break
			}
		}
	}
	got := specFromEnv(func(k string) string { return env[k] })
	if got.Binary != s.Binary || !slices.Equal(got.ReadExec, s.ReadExec) || !slices.Equal(got.ReadWrite, s.ReadWrite) || got.Off {
		t.Fatalf("round trip: %+v, want %+v", got, s)
	}
	if env[ExecEnv] != "3" {
		t.Fatalf("%s = %q", ExecEnv, env[ExecEnv])
	}
}
