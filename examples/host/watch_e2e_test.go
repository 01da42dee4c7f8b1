package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// `rules --watch --json` through the built binary: one document at start,
// one more after each change of the rules, nothing while nothing changes, and
// Ctrl-C stops it and its providers.
func TestRulesWatch(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, home := filepath.Join(root, "ws"), filepath.Join(root, "home")
	write(t, filepath.Join(ws, ".cursor", "rules", "style.mdc"), "---\nalwaysApply: true\n---\nTabs.\n")
	write(t, filepath.Join(home, ".keep"), "")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, hostBinary(t), "rules", "--watch", "--json", "--interval", "20ms", "--cwd", ws, "--home", home)
	cmd.Env = append(os.Environ(), "RULEBROKER_PLUGIN_PATH=")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReader(out)
	next := func() rulesJSON {
		t.Helper()
		line, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("reading the watch: %v (stderr: %s)", err, stderr.String())
		}
		var doc rulesJSON
		if err := json.Unmarshal(line, &doc); err != nil {
			t.Fatalf("a line that is not one JSON document: %v: %s", err, line)
		}
		return doc
	}
	names := func(doc rulesJSON) string {
		var out []string
		for _, r := range doc.Rules {
			out = append(out, r.Provider+":"+r.Name)
		}
		return strings.Join(out, " ")
	}

	first := next()
	if got := names(first); got != "cursor:style" || len(first.Providers) != 4 {
		t.Fatalf("first document: rules %s, %d providers", got, len(first.Providers))
	}
	// A new rule of the same name, at a higher priority, shadows cursor's.
	// It is saved as an editor saves, whole: a watch round every 20 ms
	// could otherwise see the file created but still empty, and print the
	// rule twice.
	writeWhole(t, filepath.Join(ws, ".xcsh", "rules", "style.md"), "---\nalwaysApply: true\n---\nSpaces.\n")
	doc := next()
	if got := names(doc); got != "native:style cursor:style" || !doc.Rules[1].Shadowed {
		t.Fatalf("after adding a native rule: %s", got)
	}
	if err := os.Remove(filepath.Join(ws, ".xcsh", "rules", "style.md")); err != nil {
		t.Fatal(err)
	}
	if got := names(next()); got != "cursor:style" {
		t.Fatalf("after removing it: %s", got)
	}

	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Fatalf("exit = %v, want status 130 (stderr: %s)", err, stderr.String())
	}
	// Nothing was printed between the changes: the stream ended right after
	// the third document.
	if rest, _ := lines.ReadString(0); rest != "" {
		t.Fatalf("printed while nothing changed: %q", rest)
	}
	for _, p := range first.Providers {
		if p.PID != 0 && pidAlive(p.PID) {
			t.Errorf("provider %s (pid %d) outlived the watch", p.Name, p.PID)
		}
	}
}

// writeWhole writes content to path in one step: into a file beside the
// folder, then renamed into place.
func writeWhole(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(filepath.Dir(path)), "."+filepath.Base(path)+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// pidAlive reports a live process: /proc lists it and it is not a zombie.
func pidAlive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !isZombie(stat)
}
