package instructions

import (
	"context"
	"strings"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
)

var bg = context.Background()

// fixture is a workspace on a Mem: root /w (with .git), DSH_HOME /h/.dsh.
type fixture struct {
	t *testing.T
	m *workfstest.Mem
	r *Reconciler
}

func newFixture(t *testing.T, cwd string, mod ...func(*Config)) *fixture {
	t.Helper()
	m := workfstest.NewMem()
	m.Mkdir("/w/.git")
	m.Mkdir(cwd)
	cfg := Config{FS: m, Cwd: cwd, DSHHome: "/h/.dsh"}
	for _, f := range mod {
		f(&cfg)
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, m: m, r: r}
}

func (f *fixture) baseline() Round {
	f.t.Helper()
	rd, err := f.r.Baseline(bg)
	if err != nil {
		f.t.Fatal(err)
	}
	return rd
}

func (f *fixture) post(paths ...string) Round {
	f.t.Helper()
	rd, err := f.r.PostExecute(bg, "write", paths)
	if err != nil {
		f.t.Fatal(err)
	}
	return rd
}

// summary renders changes as "action key" lines with the NUL shown as "|".
func summary(rd Round) string {
	var b []string
	for _, c := range rd.Changes {
		b = append(b, string(c.Action)+" "+strings.ReplaceAll(c.Key, "\x00", "|"))
	}
	return strings.Join(b, "; ")
}

func wantChanges(t *testing.T, rd Round, want string) {
	t.Helper()
	if got := summary(rd); got != want {
		t.Fatalf("changes:\n got: %s\nwant: %s\nwarnings: %v", got, want, rd.Warnings)
	}
	if (rd.Message == nil) != (len(rd.Changes) == 0) {
		t.Fatalf("message presence does not match changes: %+v", rd)
	}
}

func loadedKeys(r *Reconciler) string {
	var b []string
	for _, s := range r.Loaded() {
		b = append(b, strings.ReplaceAll(s.Key, "\x00", "|"))
	}
	return strings.Join(b, "; ")
}

func count(s, sub string) int { return strings.Count(s, sub) }
