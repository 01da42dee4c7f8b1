package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session drives `host session` as an agent host would: one event in, one
// JSON line out, with the workspace changing between events.
type session struct {
	t      *testing.T
	in     io.WriteCloser
	out    *bufio.Reader
	cmd    *exec.Cmd
	stderr strings.Builder // written by the process's stderr copier; read after Wait
}

func startSession(t *testing.T, ws, home, dsh string) *session {
	t.Helper()
	s := &session{t: t}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, hostBinary(t), "session", "--cwd", ws, "--home", home)
	cmd.Env = append(os.Environ(), "DSH_HOME="+dsh, "RULEBROKER_PLUGIN_PATH=")
	cmd.Stderr = &s.stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.in, s.out, s.cmd = in, bufio.NewReader(out), cmd
	return s
}

// reply is the part of an output line these tests look at.
type reply struct {
	Event   string `json:"event"`
	Error   string `json:"error"`
	Turn    *int   `json:"turn"`
	Changes *[]struct {
		Action, Key, Dir, Candidate, Path, Digest string
	} `json:"changes"`
	Message *struct {
		Role     string `json:"role"`
		Text     string `json:"text"`
		Metadata struct {
			Type    string `json:"type"`
			Changes []struct {
				Action, Scope, Path, Digest string
			} `json:"changes"`
		} `json:"metadata"`
	} `json:"message"`
	Fired *[]struct {
		Rule, Stream, Match, Inject string
	} `json:"fired"`
}

func (s *session) read() reply {
	s.t.Helper()
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		s.t.Fatalf("reading the session's output: %v", err)
	}
	var r reply
	if err := json.Unmarshal(line, &r); err != nil {
		s.t.Fatalf("output line is not JSON: %v\n%s", err, line)
	}
	return r
}

func (s *session) send(line string) reply {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
	return s.read()
}

// changes renders a reply's changes as "action key" lines, NUL shown as |.
func changes(r reply) []string {
	if r.Changes == nil {
		return nil
	}
	var out []string
	for _, c := range *r.Changes {
		out = append(out, c.Action+" "+strings.ReplaceAll(c.Key, "\x00", "|"))
	}
	return out
}

func wantChanges(t *testing.T, r reply, want ...string) {
	t.Helper()
	got := changes(r)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("changes = %q, want %q", got, want)
	}
	if len(want) > 0 && (r.Message == nil || r.Message.Role != "user" || len(r.Message.Metadata.Changes) != len(want) ||
		r.Message.Metadata.Type != "context/message") {
		t.Fatalf("a round with changes carries one user message with context/message metadata, got %+v", r.Message)
	}
	if len(want) == 0 && r.Message != nil {
		t.Fatalf("a round without changes has no message, got %q", r.Message.Text)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestSessionEndToEnd(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, home, dsh := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "dsh")
	write(t, filepath.Join(ws, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(ws, "AGENTS.md"), "Root rules.\n")
	if err := os.Symlink("AGENTS.md", filepath.Join(ws, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "sub", "deep", "AGENTS.md"), "Deep rules.\n")
	write(t, filepath.Join(dsh, "AGENTS.md"), "Global rules.\n")
	write(t, filepath.Join(ws, ".cursor", "rules", "words.mdc"), "---\ncondition: (?i)forbidden-word\n---\nDo not say it.\n")
	write(t, filepath.Join(home, ".keep"), "")

	s := startSession(t, ws, home, dsh)

	// Baseline: user-global and the root; the CLAUDE.md mirror renders once.
	base := s.read()
	if base.Event != "baseline" {
		t.Fatalf("first line is %q, want the baseline", base.Event)
	}
	wantChanges(t, base, "set user-global|AGENTS.md", "set .|AGENTS.md")
	if strings.Count(base.Message.Text, "Root rules.") != 1 || !strings.Contains(base.Message.Text, "Global rules.") ||
		!strings.HasPrefix(base.Message.Text, "<system-reminder>") {
		t.Fatalf("baseline message:\n%s", base.Message.Text)
	}

	// A tool touching a deeper path brings that directory's instructions in.
	r := s.send(`{"event":"tools/post-execute","tool":"write","paths":["sub/deep/x.go"]}`)
	if r.Event != "tools/post-execute" {
		t.Fatalf("event = %q", r.Event)
	}
	wantChanges(t, r, "set sub/deep|AGENTS.md")
	if !strings.Contains(r.Message.Text, "Deep rules.") {
		t.Fatalf("set message:\n%s", r.Message.Text)
	}

	// Nothing changed: no changes, no message.
	wantChanges(t, s.send(`{"event":"tools/post-execute","tool":"read","paths":[]}`))

	// The root file changes; its mirror follows it and stays a duplicate.
	write(t, filepath.Join(ws, "AGENTS.md"), "Root rules, second edition.\n")
	r = s.send(`{"event":"tools/post-execute","tool":"edit","paths":["AGENTS.md"]}`)
	wantChanges(t, r, "replace .|AGENTS.md")
	if !strings.Contains(r.Message.Text, "second edition") {
		t.Fatalf("replace message:\n%s", r.Message.Text)
	}

	// The mirror becomes a different real file: both load.
	if err := os.Remove(filepath.Join(ws, "CLAUDE.md")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "CLAUDE.md"), "Claude-only rules.\n")
	wantChanges(t, s.send(`{"event":"tools/post-execute","tool":"bash","paths":[]}`), "set .|CLAUDE.md")

	// A deleted file is removed.
	if err := os.Remove(filepath.Join(ws, "sub", "deep", "AGENTS.md")); err != nil {
		t.Fatal(err)
	}
	wantChanges(t, s.send(`{"event":"tools/post-execute","tool":"bash","paths":[]}`), "remove sub/deep|AGENTS.md")

	// A trigger split across deltas fires on the delta that completes it.
	for i, delta := range []string{"I will now say the forb", "IDDEN-w"} {
		if r := s.send(`{"event":"stream","source":"text","delta":"` + delta + `"}`); r.Fired == nil || len(*r.Fired) != 0 {
			t.Fatalf("delta %d: fired = %+v, want an empty list", i, r.Fired)
		}
	}
	r = s.send(`{"event":"stream","source":"text","delta":"ord!"}`)
	if r.Fired == nil || len(*r.Fired) != 1 {
		t.Fatalf("fired = %+v, want the words rule", r.Fired)
	}
	f := (*r.Fired)[0]
	if f.Rule != "words" || f.Stream != "text" || f.Match != "forbIDDEN-word" ||
		!strings.Contains(f.Inject, "Do not say it.") || !strings.Contains(f.Inject, ".cursor/rules/words.mdc") {
		t.Fatalf("fired = %+v", f)
	}

	// Once per session, across turns and streams.
	if r := s.send(`{"event":"turn_start"}`); r.Turn == nil || *r.Turn != 1 {
		t.Fatalf("turn_start answered %+v", r)
	}
	if r := s.send(`{"event":"stream","source":"thinking","delta":"forbidden-word"}`); len(*r.Fired) != 0 {
		t.Fatalf("a rule fires once per session by default, fired again: %+v", *r.Fired)
	}

	// Bad input costs only its own line.
	if r := s.send(`this is not JSON`); r.Error == "" {
		t.Fatal("a malformed line must get an error line")
	}
	if r := s.send(`{"event":"teleport"}`); !strings.Contains(r.Error, "unknown event") {
		t.Fatalf("unknown event answered %+v", r)
	}
	wantChanges(t, s.send(`{"event":"tools/post-execute","tool":"read","paths":["../../etc/passwd", "/tmp"]}`))

	s.in.Close()
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("session exit: %v", err)
	}
}

func TestSessionInterrupted(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "ws", "AGENTS.md"), "Be brief.\n")
	s := startSession(t, filepath.Join(root, "ws"), root, filepath.Join(root, "dsh"))
	if r := s.read(); r.Event != "baseline" {
		t.Fatalf("first line is %q", r.Event)
	}
	// Waiting for the next event, with stdin still open: Ctrl-C must end it.
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := s.cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit = %v, want status 130", err)
	}
	if got := s.stderr.String(); got != "host: interrupted\n" {
		t.Fatalf("stderr = %q", got)
	}
}
