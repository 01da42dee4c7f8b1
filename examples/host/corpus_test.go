package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCorpus runs the host over the real-world rule and instruction files in
// shared/corpus beside the repository (../shared/corpus from the repository
// root; 59 files from 18 public repositories, see its README.md and
// MANIFEST.tsv). The corpus is not part of this repository: in a clone without
// it the test skips and says so.
//
// Each case copies one repository folder into a temp dir (symlinks kept), marks
// the copy's root with an empty .git and runs `host rules` and `host
// instructions` there with an empty home. It asserts the exact rule set, the
// exact warnings and notes, the exact instruction scopes, and cross-checks all
// of that against MANIFEST.tsv: every file a provider reads from that cwd (by
// its kind) is a rule or is named by a warning, no other file becomes a rule,
// and every AGENTS.md/CLAUDE.md between the root and cwd is loaded or is a
// duplicate of one that is.
func TestCorpus(t *testing.T) {
	t.Parallel()
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	corpus := filepath.Join(filepath.Dir(root), "shared", "corpus")
	if _, err := os.Stat(filepath.Join(corpus, "MANIFEST.tsv")); err != nil {
		t.Skipf("NOT CHECKED: the real-world corpus (%d cases: exact rules, warnings, notes and instruction scopes "+
			"of `host rules` and `host instructions`, cross-checked against MANIFEST.tsv) — no %s "+
			"(the corpus lives beside the repository, in ../shared/corpus from its root): %v",
			len(corpusCases), filepath.Join(corpus, "MANIFEST.tsv"), err)
	}
	manifest := readCorpusManifest(t, corpus)

	for _, tc := range corpusCases {
		name := tc.repo
		if tc.sub != "" {
			name += "/" + tc.sub
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rows := manifest[tc.repo]
			if len(rows) == 0 {
				t.Fatalf("no MANIFEST.tsv rows for %s", tc.repo)
			}
			root := copyCorpusRepo(t, filepath.Join(corpus, tc.repo), rows)
			for dst, src := range tc.extra {
				data, err := os.ReadFile(filepath.Join(root, src))
				if err != nil {
					t.Fatal(err)
				}
				writeFile(t, filepath.Join(root, dst), data)
			}
			cwd := filepath.Join(root, filepath.FromSlash(tc.sub))
			home := t.TempDir()

			// The exact reference behaviour, then the counts of native mode.
			var rules corpusRulesDoc
			runCorpusHost(t, "rules", cwd, home, &rules, "--activation", "reference")
			checkCorpusRules(t, tc, root, rows, rules)
			if got := countActivations(t, rules); got != (activationCounts{}) {
				t.Errorf("reference mode: rules carry an activation: %+v", got)
			}
			var native corpusRulesDoc
			runCorpusHost(t, "rules", cwd, home, &native)
			if got := countActivations(t, native); got != tc.native {
				t.Errorf("native activation counts = %+v, want %+v", got, tc.native)
			}

			var instr corpusInstrDoc
			runCorpusHost(t, "instructions", cwd, home, &instr)
			checkCorpusInstructions(t, tc, root, rows, instr)
		})
	}
}

// wantRule is one rule in the merged list; class "" for a shadowed rule.
type wantRule struct {
	name, provider, path, class string
	shadowed                    bool
	globs                       []string // checked when non-nil
}

// wantWarning matches one warning: provider, path relative to the copy's root,
// and a piece of the message.
type wantWarning struct{ provider, path, msg string }

type corpusCase struct {
	repo, sub string
	// extra copies corpus files (value, relative to the repository) to other
	// places (key) in the copy, for oddities no provider reads where the
	// repository keeps them.
	extra    map[string]string
	rules    []wantRule
	warnings []wantWarning
	// notes: paths of rules the rulebook reports unreachable.
	unreachable []string
	// scopes: loaded instruction scopes as "dir/candidate", and where each
	// resolves to (relative to the root) when it is a symlink.
	scopes   []string
	resolved map[string]string
	// native counts the activations of the rules that win their names under
	// --activation native (the default).
	native activationCounts
}

// activationCounts counts rules by activation. TTSR does not occur in the
// corpus: no real file has a condition.
type activationCounts struct{ always, attached, requested, manual, none int }

// countActivations counts the winning rules' activations; a shadowed rule has
// none. An unknown activation fails the test.
func countActivations(t *testing.T, doc corpusRulesDoc) activationCounts {
	t.Helper()
	var c activationCounts
	for _, r := range doc.Rules {
		if r.Shadowed {
			if r.Activation != "" {
				t.Errorf("shadowed rule %s has activation %q", r.Path, r.Activation)
			}
			continue
		}
		switch r.Activation {
		case "always":
			c.always++
		case "attached":
			c.attached++
		case "requested":
			c.requested++
		case "manual":
			c.manual++
		case "none":
			c.none++
			// What its own tool would apply is never none: only a rule with
			// nothing in it is.
			if r.ActivationSource != "it has no content" {
				t.Errorf("rule %s is none: %s", r.Path, r.ActivationSource)
			}
		case "":
		default:
			t.Errorf("rule %s: activation %q", r.Path, r.Activation)
		}
		if r.Activation != "" && r.ActivationSource == "" {
			t.Errorf("rule %s: activation %s without a source", r.Path, r.Activation)
		}
	}
	return c
}

var corpusCases = []corpusCase{
	{
		// Legacy .cursorrules is not read (the reference never reads it), but the user is told.
		repo:     "06T__CursorSetup",
		native:   activationCounts{always: 1, attached: 0, requested: 0, manual: 0, none: 0},
		warnings: []wantWarning{{"cursor", ".cursorrules", "legacy .cursorrules is not read"}},
	},
	{
		repo:   "0xduc98__wardrobe-react-native",
		native: activationCounts{always: 2, attached: 0, requested: 0, manual: 0, none: 1},
		rules: []wantRule{
			{name: "flow_docs", provider: "cursor", path: ".cursor/rules/flow_docs.md", class: "none", globs: []string{}},
		},
		warnings:    []wantWarning{{"cursor", ".cursor/rules/flow_docs.md", "empty rule file"}, {"cursor", ".cursorrules", "legacy .cursorrules is not read"}, {"windsurf", ".windsurfrules", "legacy .windsurfrules is not read"}},
		unreachable: []string{".cursor/rules/flow_docs.md"},
		// .claude/skills/.../AGENTS.md is inside a skill bundle: not on the
		// root-to-cwd path, so not an instruction scope.
	},
	{
		// `---CLINE_RULES_START---` is not a frontmatter fence: one rule, no
		// metadata, no frontmatter warning.
		repo:   "20181000103340__hikyuu",
		native: activationCounts{always: 1, attached: 0, requested: 0, manual: 0, none: 0},
		rules: []wantRule{
			{name: "clinerules", provider: "cline", path: ".clinerules", class: "none", globs: []string{}},
		},
		unreachable: []string{".clinerules"},
	},
	{
		// .cursor/index.mdc is outside .cursor/rules: not a rule.
		repo:   "Common-ka__cursor-unity-rules",
		native: activationCounts{always: 0, attached: 1, requested: 0, manual: 0, none: 1},
		rules: []wantRule{
			{name: "unity-architecture", provider: "cursor", path: ".cursor/rules/unity-architecture.mdc", class: "always", globs: []string{}},
			{name: "unity-input", provider: "cursor", path: ".cursor/rules/unity-input.mdc", class: "rulebook",
				globs: []string{"**/Input*.cs", "**/Player*.cs", "**/*Controller*.cs"}},
		},
		warnings: []wantWarning{{"cursor", ".cursor/rules/unity-architecture.mdc", "frontmatter but no content"}},
	},
	{
		// AGENTS.md -> .ai/rules/general.md; .claude/CLAUDE.md is not a
		// candidate location.
		repo:     "Cratis__Arc",
		scopes:   []string{"./AGENTS.md"},
		resolved: map[string]string{"./AGENTS.md": ".ai/rules/general.md"},
	},
	{
		repo:   "GSA__claspenv",
		native: activationCounts{always: 1, attached: 0, requested: 0, manual: 0, none: 0},
		rules: []wantRule{
			{name: "rules", provider: "cline", path: ".clinerules/rules.md", class: "none"},
		},
		unreachable: []string{".clinerules/rules.md"},
	},
	{
		// Cursor's rules.mdc (always) shadows Windsurf's rules.md by name.
		// The Windsurf `trigger:` key inside convex.mdc/frontend.mdc is not read,
		// and a warning says so; the rules stay reachable through their
		// description.
		repo:   "Jacksondr5__monorepo",
		native: activationCounts{always: 1, attached: 0, requested: 3, manual: 0, none: 0},
		rules: []wantRule{
			{name: "convex", provider: "cursor", path: ".cursor/rules/convex.mdc", class: "rulebook"},
			{name: "frontend", provider: "cursor", path: ".cursor/rules/frontend.mdc", class: "rulebook"},
			{name: "linear", provider: "cursor", path: ".cursor/rules/linear.mdc", class: "rulebook", globs: []string{}},
			{name: "rules", provider: "cursor", path: ".cursor/rules/rules.mdc", class: "always", globs: []string{}},
			{name: "rules", provider: "windsurf", path: ".windsurf/rules/rules.md", shadowed: true},
		},
		warnings: []wantWarning{
			{"cursor", ".cursor/rules/convex.mdc", `trigger: "model_decision" is Windsurf's activation mode, which is not read`},
			{"cursor", ".cursor/rules/frontend.mdc", `trigger: "model_decision" is Windsurf's activation mode, which is not read`},
			{"windsurf", ".windsurf/rules/rules.md", `trigger: "always_on"`},
		},
		scopes: []string{"./CLAUDE.md"},
	},
	{
		repo:   "alading-2__GodotCSharpECSStruct_Open",
		native: activationCounts{always: 1, attached: 0, requested: 0, manual: 0, none: 0},
		rules: []wantRule{
			{name: "windsurfrules", provider: "windsurf", path: ".windsurf/rules/windsurfrules.md", class: "none"},
		},
		warnings:    []wantWarning{{"windsurf", ".windsurf/rules/windsurfrules.md", `trigger: "always_on"`}, {"windsurf", ".windsurfrules", "legacy .windsurfrules is not read"}},
		unreachable: []string{".windsurf/rules/windsurfrules.md"},
		scopes:      []string{"./AGENTS.md", "./CLAUDE.md"},
	},
	{
		// The BOM file is .github/copilot-instructions.md, which no provider
		// reads; placed in .cursor/rules it loads with no frontmatter warning.
		repo:   "cap-js__ord",
		native: activationCounts{always: 2, attached: 0, requested: 0, manual: 1, none: 0},
		extra:  map[string]string{".cursor/rules/copilot-bom.md": ".github/copilot-instructions.md"},
		rules: []wantRule{
			{name: "copilot-bom", provider: "cursor", path: ".cursor/rules/copilot-bom.md", class: "none", globs: []string{}},
			{name: "code-quality", provider: "cline", path: ".clinerules/code-quality.md", class: "none"},
			{name: "testing", provider: "cline", path: ".clinerules/testing.md", class: "none"},
		},
		unreachable: []string{".cursor/rules/copilot-bom.md", ".clinerules/code-quality.md", ".clinerules/testing.md"},
	},
	{
		// .clinerules/hooks/README.md and .clinerules/workflows/ are not rules.
		repo:   "cline__cline",
		native: activationCounts{always: 2, attached: 0, requested: 0, manual: 0, none: 0},
		rules: []wantRule{
			{name: "general", provider: "cline", path: ".clinerules/general.md", class: "none"},
			{name: "sdk-migration", provider: "cline", path: ".clinerules/sdk-migration.md", class: "none"},
		},
		unreachable: []string{".clinerules/general.md", ".clinerules/sdk-migration.md"},
		scopes:      []string{"./AGENTS.md"},
	},
	{
		// The nearest .clinerules upward is the root's; sdk/.cline/rules is not
		// a cline location. sdk/AGENTS.md (Cursor frontmatter) is an
		// instruction file, loaded as is.
		repo: "cline__cline", sub: "sdk",
		native: activationCounts{always: 1, attached: 0, requested: 0, manual: 0, none: 0},
		rules: []wantRule{
			{name: "general", provider: "cline", path: ".clinerules/general.md", class: "none"},
			{name: "sdk-migration", provider: "cline", path: ".clinerules/sdk-migration.md", class: "none"},
		},
		unreachable: []string{".clinerules/general.md", ".clinerules/sdk-migration.md"},
		scopes:      []string{"./AGENTS.md", "sdk/AGENTS.md"},
	},
	{repo: "google-gemini__gemini-cli"},
	{repo: "google-gemini__gemini-cli", sub: "packages/cli"},
	{
		repo:   "hubtype__botonic",
		native: activationCounts{always: 0, attached: 0, requested: 0, manual: 1, none: 0},
		rules: []wantRule{
			{name: "general", provider: "cursor", path: ".cursor/rules/general.md", class: "none"},
		},
		unreachable: []string{".cursor/rules/general.md"},
	},
	{
		// Cursor reads <cwd>/.cursor/rules only: from the package
		// the root's general.md is not seen.
		repo: "hubtype__botonic", sub: "packages/botonic-react",
		native: activationCounts{always: 0, attached: 0, requested: 0, manual: 2, none: 0},
		rules: []wantRule{
			{name: "biome-config", provider: "cursor", path: "packages/botonic-react/.cursor/rules/biome-config.md", class: "none"},
		},
		unreachable: []string{"packages/botonic-react/.cursor/rules/biome-config.md"},
	},
	{
		// CLAUDE.md -> AGENTS.md -> .agents/AGENTS.md renders once.
		repo:     "langfuse__langfuse",
		scopes:   []string{"./AGENTS.md"},
		resolved: map[string]string{"./AGENTS.md": ".agents/AGENTS.md"},
	},
	{
		// web/CLAUDE.md -> web/AGENTS.md: one scope per directory.
		repo: "langfuse__langfuse", sub: "web",
		scopes:   []string{"./AGENTS.md", "web/AGENTS.md"},
		resolved: map[string]string{"./AGENTS.md": ".agents/AGENTS.md", "web/AGENTS.md": "web/AGENTS.md"},
	},
	{
		// Lowercase claude.md is not CLAUDE.md on a case-sensitive FS.
		repo: "medorion__ai-nx-starter",
	},
	{repo: "ollama__ollama", scopes: []string{"./AGENTS.md", "./CLAUDE.md"}},
	{repo: "sotayamashita__claude-code-statusline", scopes: []string{"./AGENTS.md", "./CLAUDE.md"}},
	{repo: "tangle-network__dapp", scopes: []string{"./AGENTS.md", "./CLAUDE.md"}},
	{
		repo:   "telepace__nexus",
		native: activationCounts{always: 2, attached: 1, requested: 1, manual: 1, none: 0},
		rules: []wantRule{
			// YAML rejects `globs: *.md,*.mdx`; the line fallback still reads the globs.
			{name: "documentation-pages", provider: "cursor", path: ".cursor/rules/documentation-pages.mdc", class: "none", globs: []string{"*.md", "*.mdx"}},
			{name: "extension", provider: "cursor", path: ".cursor/rules/extension.mdc", class: "rulebook"},
			{name: "general", provider: "cursor", path: ".cursor/rules/general.mdc", class: "always"},
			{name: "gitflow", provider: "cursor", path: ".cursor/rules/gitflow.mdc", class: "none"},
			{name: "extension", provider: "windsurf", path: ".windsurf/rules/extension.md", shadowed: true, globs: []string{"extension/**"}},
			{name: "gitflow", provider: "windsurf", path: ".windsurf/rules/gitflow.md", shadowed: true},
		},
		warnings: []wantWarning{
			{"cursor", ".cursor/rules/documentation-pages.mdc", "invalid YAML frontmatter"},
			{"cursor", ".cursor/rules/gitflow.mdc", "second frontmatter block"},
			{"windsurf", ".windsurf/rules/extension.md", `trigger: "model_decision"`},
			{"windsurf", ".windsurf/rules/gitflow.md", "second frontmatter block"},
			{"windsurf", ".windsurf/rules/gitflow.md", `trigger: "model_decision"`},
			{"windsurf", ".windsurfrules", "legacy .windsurfrules is not read"},
		},
		unreachable: []string{".cursor/rules/documentation-pages.mdc", ".cursor/rules/gitflow.mdc"},
	},
}

type corpusRulesDoc struct {
	Rules []struct {
		Name, Provider, Level, Path, Description, Class string
		Activation, ActivationSource                    string
		Globs                                           []string
		AlwaysApply                                     bool
		Shadowed                                        bool
	}
	Providers []struct{ Name, Error string }
	Warnings  []struct{ Provider, Path, Message string }
	Notes     []string
}

type corpusInstrDoc struct {
	Root   string
	Scopes []struct {
		Key, Dir, Candidate, Path, ResolvedPath, Digest string
	}
	Changes []struct{ Action, Key, Path string }
	Message *struct {
		Role, Text string
	}
	Warnings []string
}

type manifestRow struct{ path, kind, traits string }

// readCorpusManifest maps a corpus folder name (owner__repo) to its rows.
func readCorpusManifest(t *testing.T, corpus string) map[string][]manifestRow {
	t.Helper()
	f, err := os.Open(filepath.Join(corpus, "MANIFEST.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma = '\t'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("MANIFEST.tsv: %v", err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"repo", "path", "kind", "traits"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("MANIFEST.tsv has no %q column: %v", h, recs[0])
		}
	}
	out := map[string][]manifestRow{}
	for _, rec := range recs[1:] {
		dir := strings.Replace(rec[col["repo"]], "/", "__", 1)
		out[dir] = append(out[dir], manifestRow{path: rec[col["path"]], kind: rec[col["kind"]], traits: rec[col["traits"]]})
	}
	return out
}

// copyCorpusRepo copies src into a temp dir, keeping symlinks as symlinks,
// and marks the copy's root with an empty .git. A file the manifest lists as a
// git symlink (trait symlink->TARGET) but that is stored as a regular file
// holding exactly TARGET (a checkout without symlink support) is turned back
// into the symlink the repository has.
func copyCorpusRepo(t *testing.T, src string, rows []manifestRow) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.IsDir():
			return os.MkdirAll(to, 0o755)
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, data, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	for _, row := range rows {
		for _, tr := range strings.Split(row.traits, ";") {
			target, ok := strings.CutPrefix(tr, "symlink->")
			if !ok {
				continue
			}
			p := filepath.Join(dst, filepath.FromSlash(row.path))
			fi, err := os.Lstat(p)
			if err != nil {
				t.Fatalf("%s: %v", row.path, err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				continue
			}
			if data, _ := os.ReadFile(p); string(data) != target {
				t.Fatalf("%s: manifest says symlink -> %s, corpus has a regular file with other content", row.path, target)
			}
			t.Logf("%s: corpus stores the git symlink as a text file; restored as a symlink -> %s", row.path, target)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.Mkdir(filepath.Join(dst, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

func writeFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runCorpusHost runs `host CMD --json` and decodes its output into doc. Only
// the built-in providers run: no plugin directories, an empty home.
// repoRoot is the directory of this module's go.mod, above the test's
// working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil &&
			bytes.HasPrefix(bytes.TrimSpace(data), []byte("module github.com/rulebroker/rulebroker\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod of github.com/rulebroker/rulebroker above the working directory")
		}
		dir = parent
	}
}

func runCorpusHost(t *testing.T, cmdName, cwd, home string, doc any, flags ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := append([]string{cmdName, "--json", "--cwd", cwd, "--home", home}, flags...)
	cmd := exec.CommandContext(ctx, hostBinary(t), args...)
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "RULEBROKER_PLUGIN_PATH" && k != "DSH_HOME" && k != "HOME" {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "RULEBROKER_PLUGIN_PATH=", "HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("host %s timed out; stderr:\n%s", cmdName, stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("host %s: %v", cmdName, err)
	}
	if err != nil {
		t.Fatalf("host %s: exit status %d; stderr:\n%s", cmdName, ee.ExitCode(), stderr.String())
	}
	if strings.Contains(strings.ToLower(stderr.String()), "panic") {
		t.Errorf("host %s: panic in stderr:\n%s", cmdName, stderr.String())
	}
	dec := json.NewDecoder(&stdout)
	if err := dec.Decode(doc); err != nil {
		t.Fatalf("host %s: stdout is not JSON: %v\n%s", cmdName, err, stdout.String())
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Fatalf("host %s: stdout holds more than one JSON document", cmdName)
	}
}

func relTo(t *testing.T, root, p string) string {
	t.Helper()
	rel, err := filepath.Rel(root, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Errorf("path %q is outside the workspace copy %s", p, root)
		return p
	}
	return filepath.ToSlash(rel)
}

// ruleReadFrom reports whether a provider should read the manifest file
// (kind, path) when run from cwd sub, as the reference reads them. clineSource is the
// nearest .clinerules upward from cwd ("" if none), relative to the root.
func ruleReadFrom(kind, path, sub, clineSource string) bool {
	dir := pathDir(path)
	switch {
	case strings.HasPrefix(kind, "cursor-rule-"):
		return dir == pathJoin(sub, ".cursor/rules")
	case kind == "windsurf-rule":
		return dir == pathJoin(sub, ".windsurf/rules")
	case kind == "clinerules-dir":
		return dir == clineSource
	case kind == "clinerules-file":
		return path == clineSource
	}
	return false
}

func pathJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

func pathDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return ""
}

func nearestClinerules(root, sub string) string {
	for dir := sub; ; dir = pathDir(dir) {
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(pathJoin(dir, ".clinerules")))); err == nil {
			return pathJoin(dir, ".clinerules")
		}
		if dir == "" {
			return ""
		}
	}
}

func checkCorpusRules(t *testing.T, tc corpusCase, root string, rows []manifestRow, doc corpusRulesDoc) {
	t.Helper()
	var names []string
	for _, p := range doc.Providers {
		names = append(names, p.Name)
		if p.Error != "" {
			t.Errorf("provider %s failed: %s", p.Name, p.Error)
		}
	}
	if want := []string{"native", "cursor", "windsurf", "cline"}; !slices.Equal(names, want) {
		t.Errorf("providers = %v, want %v", names, want)
	}

	// The exact rule list, in merge order.
	rulePaths := map[string]bool{}
	n := max(len(doc.Rules), len(tc.rules))
	for i := range n {
		if i >= len(doc.Rules) {
			t.Errorf("rule %d: missing, want %+v", i, tc.rules[i])
			continue
		}
		got := doc.Rules[i]
		rel := relTo(t, root, got.Path)
		rulePaths[rel] = true
		if i >= len(tc.rules) {
			t.Errorf("rule %d: unexpected %s (%s, %s, class %q)", i, got.Name, got.Provider, rel, got.Class)
			continue
		}
		w := tc.rules[i]
		if got.Name != w.name || got.Provider != w.provider || rel != w.path || got.Class != w.class || got.Shadowed != w.shadowed {
			t.Errorf("rule %d = {%s %s %s class %q shadowed %v}, want {%s %s %s class %q shadowed %v}",
				i, got.Name, got.Provider, rel, got.Class, got.Shadowed, w.name, w.provider, w.path, w.class, w.shadowed)
		}
		if got.Level != "project" {
			t.Errorf("rule %s: level %q, want project", got.Name, got.Level)
		}
		if w.globs != nil && !slices.Equal(got.Globs, w.globs) {
			t.Errorf("rule %s (%s): globs %q, want %q", got.Name, rel, got.Globs, w.globs)
		}
		// Class agrees with the metadata it came from.
		switch got.Class {
		case "always":
			if !got.AlwaysApply {
				t.Errorf("rule %s: class always without alwaysApply", got.Name)
			}
		case "rulebook":
			if got.AlwaysApply || got.Description == "" {
				t.Errorf("rule %s: class rulebook with alwaysApply %v, description %q", got.Name, got.AlwaysApply, got.Description)
			}
		case "none":
			if got.AlwaysApply || got.Description != "" {
				t.Errorf("rule %s: class none with alwaysApply %v, description %q", got.Name, got.AlwaysApply, got.Description)
			}
		}
	}

	// The exact warnings: each names its file and matches one expectation.
	warned := map[string]bool{}
	unmatched := slices.Clone(tc.warnings)
	for _, w := range doc.Warnings {
		rel := ""
		if w.Path != "" {
			rel = relTo(t, root, w.Path)
			warned[rel] = true
		} else {
			t.Errorf("warning names no file: %s: %s", w.Provider, w.Message)
		}
		i := slices.IndexFunc(unmatched, func(e wantWarning) bool {
			return e.provider == w.Provider && e.path == rel && strings.Contains(w.Message, e.msg)
		})
		if i < 0 {
			t.Errorf("unexpected warning: %s: %s: %s", w.Provider, rel, w.Message)
			continue
		}
		unmatched = slices.Delete(unmatched, i, i+1)
	}
	for _, e := range unmatched {
		t.Errorf("missing warning: %s: %s: …%s…", e.provider, e.path, e.msg)
	}

	// The exact notes: one "unreachable" note per rule without description,
	// alwaysApply or condition, naming its file.
	unreachable := slices.Clone(tc.unreachable)
	for _, note := range doc.Notes {
		i := slices.IndexFunc(unreachable, func(p string) bool {
			return strings.Contains(note, ": "+filepath.Join(root, filepath.FromSlash(p))+": ") && strings.Contains(note, "unreachable")
		})
		if i < 0 {
			t.Errorf("unexpected note: %s", note)
			continue
		}
		unreachable = slices.Delete(unreachable, i, i+1)
	}
	for _, p := range unreachable {
		t.Errorf("missing note: %s is unreachable", p)
	}

	// Against the manifest: what a provider reads from this cwd shows up as a
	// rule or a warning naming it; nothing else becomes a rule.
	known := map[string]bool{}
	for dst := range tc.extra {
		known[dst] = true
	}
	cline := nearestClinerules(root, tc.sub)
	for _, row := range rows {
		if !ruleReadFrom(row.kind, row.path, tc.sub, cline) {
			continue
		}
		known[row.path] = true
		if !rulePaths[row.path] && !warned[row.path] {
			t.Errorf("%s (%s) vanished: neither a rule nor named by a warning", row.path, row.kind)
		}
	}
	for p := range rulePaths {
		if !known[p] {
			t.Errorf("%s became a rule, but the manifest does not list it as a rule file read from %q", p, tc.sub)
		}
	}
}

func checkCorpusInstructions(t *testing.T, tc corpusCase, root string, rows []manifestRow, doc corpusInstrDoc) {
	t.Helper()
	if doc.Root != root {
		t.Errorf("workspace root %q, want %q", doc.Root, root)
	}
	for _, w := range doc.Warnings {
		t.Errorf("unexpected instructions warning: %s", w)
	}
	var got []string
	loaded := map[string]string{} // path -> scope
	for _, s := range doc.Scopes {
		id := s.Dir + "/" + s.Candidate
		got = append(got, id)
		if s.Key != s.Dir+"\x00"+s.Candidate {
			t.Errorf("scope %s: key %q", id, s.Key)
		}
		rel := relTo(t, root, s.Path)
		loaded[rel] = id
		if want := pathJoin(strings.TrimPrefix(s.Dir, "."), s.Candidate); rel != want {
			t.Errorf("scope %s: path %s, want %s", id, rel, want)
		}
		wantRes := rel
		if r, ok := tc.resolved[id]; ok {
			wantRes = r
		}
		if res := relTo(t, root, s.ResolvedPath); res != wantRes {
			t.Errorf("scope %s: resolved path %s, want %s", id, res, wantRes)
		}
	}
	if !slices.Equal(got, tc.scopes) {
		t.Errorf("scopes = %q, want %q", got, tc.scopes)
	}

	// The baseline sets every loaded scope, and its message carries each
	// file's content exactly once.
	if len(doc.Changes) != len(doc.Scopes) {
		t.Errorf("%d changes for %d scopes", len(doc.Changes), len(doc.Scopes))
	}
	for _, c := range doc.Changes {
		if c.Action != "set" {
			t.Errorf("baseline change %s %q, want set", c.Action, c.Key)
		}
	}
	if len(doc.Scopes) == 0 {
		if doc.Message != nil {
			t.Errorf("a message with no scopes loaded: %q", doc.Message.Text)
		}
	} else if doc.Message == nil {
		t.Errorf("no message for %d scopes", len(doc.Scopes))
	} else {
		for _, s := range doc.Scopes {
			data, err := os.ReadFile(s.ResolvedPath)
			if err != nil {
				t.Fatal(err)
			}
			body := strings.TrimSpace(string(data))
			if c := strings.Count(doc.Message.Text, body); c != 1 {
				t.Errorf("message holds the content of %s %d times, want once", relTo(t, root, s.ResolvedPath), c)
			}
		}
	}

	// Against the manifest: every AGENTS.md/CLAUDE.md in a directory from the
	// root down to cwd is loaded, or is a copy (symlink or same trimmed bytes)
	// of one that is.
	var onPath []string
	for dir := tc.sub; ; dir = pathDir(dir) {
		onPath = append(onPath, dir)
		if dir == "" {
			break
		}
	}
	for _, row := range rows {
		base := row.path[strings.LastIndexByte(row.path, '/')+1:]
		if base != "AGENTS.md" && base != "CLAUDE.md" || !slices.Contains(onPath, pathDir(row.path)) {
			continue
		}
		if !strings.HasPrefix(row.kind, "agents-md") && !strings.HasPrefix(row.kind, "claude-md") {
			t.Errorf("manifest kind %q for candidate %s", row.kind, row.path)
		}
		if _, ok := loaded[row.path]; ok {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(row.path)))
		if err != nil {
			t.Errorf("%s: %v", row.path, err)
			continue
		}
		dup := false
		for _, s := range doc.Scopes {
			if s.Dir != "." && s.Dir != pathDir(row.path) || s.Dir == "." && pathDir(row.path) != "" {
				continue
			}
			if other, err := os.ReadFile(s.ResolvedPath); err == nil &&
				strings.TrimSpace(strings.TrimPrefix(string(other), "\ufeff")) == strings.TrimSpace(strings.TrimPrefix(string(data), "\ufeff")) {
				dup = true
			}
		}
		if !dup {
			t.Errorf("%s (%s) vanished: not loaded and not a duplicate of a loaded file in its directory", row.path, row.kind)
		}
	}
}
