package instructions

import (
	"encoding/json"
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rulebroker/rulebroker/host-sdk/lifecycle"
	"github.com/rulebroker/rulebroker/host-sdk/reminder"
	"github.com/rulebroker/rulebroker/shared"
)

func TestSymlinkMirrorRendersOnce(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("Use tabs.\n"))
	f.m.Symlink("AGENTS.md", "/w/CLAUDE.md")
	rd := f.baseline()
	wantChanges(t, rd, "set .|AGENTS.md")
	if n := count(rd.Message.Text, "Use tabs."); n != 1 {
		t.Fatalf("rendered %d times:\n%s", n, rd.Message.Text)
	}
	if rd.Message.Role != "user" || !strings.HasPrefix(rd.Message.Text, "<system-reminder>\n") || !strings.HasSuffix(rd.Message.Text, "</system-reminder>") {
		t.Fatalf("framing: %q", rd.Message.Text)
	}
	if !strings.Contains(rd.Message.Text, "may apply") || !strings.Contains(rd.Message.Text, "/w/AGENTS.md") {
		t.Fatalf("baseline wording: %s", rd.Message.Text)
	}
}

func TestTwoRealFilesBothRender(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("from agents"))
	f.m.WriteFile("/w/CLAUDE.md", []byte("from claude"))
	rd := f.baseline()
	wantChanges(t, rd, "set .|AGENTS.md; set .|CLAUDE.md")
	txt := rd.Message.Text
	if i, j := strings.Index(txt, "from agents"), strings.Index(txt, "from claude"); i < 0 || j < i {
		t.Fatalf("both, in candidate order:\n%s", txt)
	}
	meta := rd.Message.Metadata
	if meta.Type != "context/message" || meta.Round != "baseline" || len(meta.Changes) != 2 ||
		meta.Changes[0].Action != ActionSet || meta.Changes[0].Key != ".\x00AGENTS.md" || meta.Changes[0].Dir != "." || meta.Changes[0].Candidate != "AGENTS.md" || meta.Changes[0].Path != "/w/AGENTS.md" ||
		meta.Changes[0].Digest != digest([]byte("from agents")) {
		t.Fatalf("metadata: %+v", meta)
	}
	b, _ := json.Marshal(meta)
	if !strings.Contains(string(b), `"action":"set"`) || !strings.Contains(string(b), `"scope":`) || strings.Contains(string(b), "previousPath") {
		t.Fatalf("metadata json: %s", b)
	}
	// The metadata keeps its short JSON form (scope, not key/dir/candidate)
	// and reads back to the same changes.
	if strings.Contains(string(b), `"key"`) || strings.Contains(string(b), `"dir"`) {
		t.Fatalf("metadata json has the long form: %s", b)
	}
	var back Metadata
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, meta) {
		t.Fatalf("metadata round trip: %+v, %v\nwant %+v", back, err, meta)
	}
}

func TestNearCopiesDedupeKeepingOriginalBytes(t *testing.T) {
	kept := "\n\n  Rule one.\r\nRule two.\n\n"
	for name, copy := range map[string]string{
		"bom":             "\uFEFF" + kept,
		"trailing-crlf":   strings.TrimSpace(kept) + "\r\n",
		"no-newline":      "Rule one.\r\nRule two.",
		"js-white-space":  "\u00A0\u3000Rule one.\r\nRule two.\u2028\u2029\u205F",
		"blank-lines-tab": "\t\n\n\nRule one.\r\nRule two.\n\v\f",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "/w")
			f.m.WriteFile("/w/AGENTS.md", []byte(kept))
			f.m.WriteFile("/w/CLAUDE.md", []byte(copy))
			rd := f.baseline()
			wantChanges(t, rd, "set .|AGENTS.md")
			if !strings.Contains(rd.Message.Text, "Instructions from /w/AGENTS.md:\n"+kept) {
				t.Fatalf("kept file's original bytes not rendered:\n%q", rd.Message.Text)
			}
		})
	}
	t.Run("interior-line-endings-differ", func(t *testing.T) {
		// Line endings are normalized before comparing, so interior CRLF
		// against LF is the same file; the first candidate's bytes are kept.
		f := newFixture(t, "/w")
		f.m.WriteFile("/w/AGENTS.md", []byte("a\r\nb\r\n"))
		f.m.WriteFile("/w/CLAUDE.md", []byte("a\nb\n"))
		rd := f.baseline()
		wantChanges(t, rd, "set .|AGENTS.md")
		if !strings.Contains(rd.Message.Text, "Instructions from /w/AGENTS.md:\na\r\nb\r\n") {
			t.Fatalf("kept file's original bytes not rendered:\n%q", rd.Message.Text)
		}
	})
	t.Run("interior-white-space-differs", func(t *testing.T) {
		f := newFixture(t, "/w")
		f.m.WriteFile("/w/AGENTS.md", []byte("a\nb"))
		f.m.WriteFile("/w/CLAUDE.md", []byte("a\n\nb"))
		wantChanges(t, f.baseline(), "set .|AGENTS.md; set .|CLAUDE.md")
	})
	t.Run("nel-is-not-js-space", func(t *testing.T) {
		f := newFixture(t, "/w")
		f.m.WriteFile("/w/AGENTS.md", []byte("a"))
		f.m.WriteFile("/w/CLAUDE.md", []byte("a\u0085"))
		wantChanges(t, f.baseline(), "set .|AGENTS.md; set .|CLAUDE.md")
	})
}

func TestLineEndingCopiesDedupe(t *testing.T) {
	const lf = "# Rules\n\nUse tabs.\nNo globals.\n"
	for name, copy := range map[string]string{
		"crlf":    strings.ReplaceAll(lf, "\n", "\r\n"),
		"lone-cr": strings.ReplaceAll(lf, "\n", "\r"),
		"mixed":   "# Rules\r\n\rUse tabs.\nNo globals.\r",
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "/w")
			f.m.WriteFile("/w/AGENTS.md", []byte(lf))
			f.m.WriteFile("/w/CLAUDE.md", []byte(copy))
			rd := f.baseline()
			wantChanges(t, rd, "set .|AGENTS.md")
			if !strings.Contains(rd.Message.Text, "Instructions from /w/AGENTS.md:\n"+lf) || count(rd.Message.Text, "Use tabs.") != 1 {
				t.Fatalf("AGENTS.md's original bytes, once:\n%q", rd.Message.Text)
			}
			if c := rd.Message.Metadata.Changes; len(c) != 1 || c[0].Digest != digest([]byte(lf)) {
				t.Fatalf("metadata: %+v", c)
			}
			s := f.r.Loaded()
			if len(s) != 1 || s[0].Digest != digest([]byte(lf)) || s[0].TrimmedDigest != digest([]byte(strings.TrimSpace(lf))) {
				t.Fatalf("loaded: %+v", s)
			}

			// A snapshot keeps the dedup: the restored reconciler sees no change.
			snap, err := f.r.Snapshot()
			if err != nil {
				t.Fatal(err)
			}
			r2, err := New(Config{FS: f.m, Cwd: "/w", DSHHome: "/h/.dsh"})
			if err != nil {
				t.Fatal(err)
			}
			if err := r2.Restore(snap); err != nil {
				t.Fatal(err)
			}
			rd, err = r2.Baseline(bg)
			if err != nil {
				t.Fatal(err)
			}
			wantChanges(t, rd, "")
			if loadedKeys(r2) != ".|AGENTS.md" {
				t.Fatalf("restored: %s", loadedKeys(r2))
			}
			// Once AGENTS.md goes, the copy loads with its own bytes.
			f.m.Remove("/w/AGENTS.md")
			rd, _ = r2.PostExecute(bg, "rm", nil)
			wantChanges(t, rd, "remove .|AGENTS.md; set .|CLAUDE.md")
			if !strings.Contains(rd.Message.Text, copy) {
				t.Fatalf("CLAUDE.md's original bytes not rendered:\n%q", rd.Message.Text)
			}
		})
	}
}

func TestEmptyAfterTrimNotLoaded(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte(" \n\uFEFF\t"))
	f.m.WriteFile("/w/CLAUDE.md", []byte("x"))
	wantChanges(t, f.baseline(), "set .|CLAUDE.md")
	f.m.WriteFile("/w/CLAUDE.md", []byte("\n"))
	wantChanges(t, f.post(), "remove .|CLAUDE.md")
}

func TestNonRegularTargetsAreAbsent(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	f.m.Mkdir("/w/CLAUDE.md")
	f.m.Mkfifo("/w/AGENTS.local.md")
	f.m.Mkdir("/w/target")
	f.m.Symlink("target", "/w/CLAUDE.local.md")
	rd := f.baseline()
	wantChanges(t, rd, "set .|AGENTS.md")
	if len(rd.Warnings) != 0 {
		t.Fatalf("absent scopes must not warn: %v", rd.Warnings)
	}
	// A loaded file that turns into a fifo is a confirmed absence: removed.
	f.m.Mkfifo("/w/AGENTS.md")
	wantChanges(t, f.post(), "remove .|AGENTS.md")
}

func TestDanglingLinkIsAbsent(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/real.md", []byte("r"))
	f.m.Symlink("real.md", "/w/CLAUDE.md")
	f.m.Symlink("nowhere.md", "/w/AGENTS.md")
	rd := f.baseline()
	wantChanges(t, rd, "set .|CLAUDE.md")
	if len(rd.Warnings) != 0 {
		t.Fatalf("warnings: %v", rd.Warnings)
	}
	if s := f.r.Loaded()[0]; s.ResolvedPath != "/w/real.md" || s.Path != "/w/CLAUDE.md" {
		t.Fatalf("scope: %+v", s)
	}
	f.m.Remove("/w/real.md") // the link now dangles: absent, so removed
	wantChanges(t, f.post(), "remove .|CLAUDE.md")
	// A not-a-directory on the way is absent too.
	f.m.WriteFile("/w/sub", []byte("file, not dir"))
	wantChanges(t, f.post("sub/x.go"), "")
}

func TestUnavailableKeepsLoadedScope(t *testing.T) {
	for name, breakIt := range map[string]func(f *fixture){
		"loop": func(f *fixture) {
			f.m.Symlink("loop2", "/w/AGENTS.md")
			f.m.Symlink("AGENTS.md", "/w/loop2")
		},
		"permission-resolve": func(f *fixture) { f.m.FailWith("/w/AGENTS.md", fs.ErrPermission) },
		"permission-read": func(f *fixture) {
			f.m.WriteFile("/w/AGENTS.md", []byte("changed, but unreadable"))
			f.m.FailReadsWith("/w/AGENTS.md", fs.ErrPermission)
		},
		"grew-past-cap-while-reading": func(f *fixture) {
			f.m.WriteFile("/w/AGENTS.md", []byte("changed"))
			f.m.FailReadsWith("/w/AGENTS.md", shared.ErrTooLarge)
		},
		"io-error":  func(f *fixture) { f.m.FailWith("/w/AGENTS.md", errors.New("EIO")) },
		"too-large": func(f *fixture) { f.m.WriteFile("/w/AGENTS.md", []byte(strings.Repeat("x", 200))) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, "/w", func(c *Config) { c.MaxFileBytes = 100 })
			f.m.WriteFile("/w/AGENTS.md", []byte("keep me"))
			f.m.WriteFile("/w/CLAUDE.md", []byte("keep me\n")) // a duplicate of AGENTS.md
			wantChanges(t, f.baseline(), "set .|AGENTS.md")
			breakIt(f)
			rd := f.post()
			// Loaded, unchanged, silent; and it still claims its content, so
			// the duplicate CLAUDE.md stays out.
			wantChanges(t, rd, "")
			if loadedKeys(f.r) != ".|AGENTS.md" || f.r.Loaded()[0].Digest != digest([]byte("keep me")) {
				t.Fatalf("loaded: %+v", f.r.Loaded())
			}
			if len(rd.Warnings) != 1 || !strings.Contains(rd.Warnings[0].String(), "/w/AGENTS.md") {
				t.Fatalf("want one warning naming the file: %v", rd.Warnings)
			}
		})
	}
	t.Run("not-loaded-stays-unloaded", func(t *testing.T) {
		f := newFixture(t, "/w")
		f.m.WriteFile("/w/AGENTS.md", []byte("secret"))
		f.m.FailWith("/w/AGENTS.md", fs.ErrPermission)
		rd := f.baseline()
		wantChanges(t, rd, "")
		if len(rd.Warnings) != 1 {
			t.Fatalf("warnings: %v", rd.Warnings)
		}
		f.m.FailWith("/w/AGENTS.md", nil)
		wantChanges(t, f.post(), "set .|AGENTS.md")
	})
}

func TestVanishedBeforeReadIsAbsent(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	wantChanges(t, f.baseline(), "set .|AGENTS.md")
	f.m.WriteFile("/w/AGENTS.md", []byte("b"))
	f.m.FailReadsWith("/w/AGENTS.md", fs.ErrNotExist)
	rd := f.post()
	wantChanges(t, rd, "remove .|AGENTS.md")
	if len(rd.Warnings) != 0 {
		t.Fatalf("warnings: %v", rd.Warnings)
	}
}

func TestOverCapWarns(t *testing.T) {
	f := newFixture(t, "/w", func(c *Config) { c.MaxFileBytes = 10 })
	f.m.WriteFile("/w/AGENTS.md", []byte("0123456789A"))
	rd := f.baseline()
	wantChanges(t, rd, "")
	if len(rd.Warnings) != 1 || !strings.Contains(rd.Warnings[0].String(), "/w/AGENTS.md") || !strings.Contains(rd.Warnings[0].String(), "cap") {
		t.Fatalf("warnings: %v", rd.Warnings)
	}
}

func TestConvergenceAndDivergence(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("A"))
	f.m.WriteFile("/w/CLAUDE.md", []byte("C"))
	wantChanges(t, f.baseline(), "set .|AGENTS.md; set .|CLAUDE.md")

	// The earlier candidate converges on the later, unchanged one: the later
	// one is removed although it did not change.
	f.m.WriteFile("/w/AGENTS.md", []byte("C\n"))
	rd := f.post()
	wantChanges(t, rd, "replace .|AGENTS.md; remove .|CLAUDE.md")
	if !strings.Contains(rd.Message.Text, "The earlier instructions from /w/CLAUDE.md no longer apply.") ||
		!strings.Contains(rd.Message.Text, "The instructions in /w/AGENTS.md changed") {
		t.Fatalf("wording:\n%s", rd.Message.Text)
	}

	// Divergence: the later file, still unchanged, comes back with its bytes
	// (read again, since only its digests were cached).
	f.m.WriteFile("/w/AGENTS.md", []byte("A2"))
	rd = f.post()
	wantChanges(t, rd, "replace .|AGENTS.md; set .|CLAUDE.md")
	if !strings.Contains(rd.Message.Text, "New instructions from /w/CLAUDE.md now apply to work in /w:\nC\n") {
		t.Fatalf("divergence text:\n%s", rd.Message.Text)
	}

	// The later candidate converges on the earlier one: it is the duplicate.
	f.m.WriteFile("/w/CLAUDE.md", []byte("A2"))
	wantChanges(t, f.post(), "remove .|CLAUDE.md")
	// A newly appearing duplicate sibling is not loaded.
	f.m.WriteFile("/w/AGENTS.local.md", []byte(" A2 "))
	wantChanges(t, f.post(), "")
	if loadedKeys(f.r) != ".|AGENTS.md" {
		t.Fatalf("loaded: %s", loadedKeys(f.r))
	}
	// Removing the kept one promotes the next distinct... both copies: the
	// first remaining in order is kept.
	f.m.Remove("/w/AGENTS.md")
	wantChanges(t, f.post(), "remove .|AGENTS.md; set .|CLAUDE.md")
}

func TestNoCrossDirectoryDedup(t *testing.T) {
	f := newFixture(t, "/w/sub")
	f.m.WriteFile("/w/AGENTS.md", []byte("same"))
	f.m.WriteFile("/w/sub/AGENTS.md", []byte("same"))
	f.m.WriteFile("/h/.dsh/AGENTS.md", []byte("same"))
	rd := f.baseline()
	wantChanges(t, rd, "set user-global|AGENTS.md; set .|AGENTS.md; set sub|AGENTS.md")
	if count(rd.Message.Text, "same") != 3 {
		t.Fatalf("text:\n%s", rd.Message.Text)
	}
}

func TestLocalOverlaysDedupeSymmetrically(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("x"))
	f.m.WriteFile("/w/CLAUDE.local.md", []byte("x\n"))
	f.m.WriteFile("/w/AGENTS.local.md", []byte("mine"))
	wantChanges(t, f.baseline(), "set .|AGENTS.md; set .|AGENTS.local.md")
	// The base file goes away: the local overlay that duplicated it loads.
	f.m.Remove("/w/AGENTS.md")
	wantChanges(t, f.post(), "remove .|AGENTS.md; set .|CLAUDE.local.md")
	// A base file now duplicating a local overlay wins (base list first) and
	// the overlay is removed: the same rule in the other direction.
	f.m.WriteFile("/w/CLAUDE.md", []byte("mine"))
	wantChanges(t, f.post(), "set .|CLAUDE.md; remove .|AGENTS.local.md")
}

func TestTouchedPaths(t *testing.T) {
	f := newFixture(t, "/w/a")
	f.m.WriteFile("/w/a/b/c/AGENTS.md", []byte("deep"))
	f.m.WriteFile("/w/a/b/AGENTS.md", []byte("mid"))
	f.m.WriteFile("/w/x/AGENTS.md", []byte("sibling"))
	f.m.WriteFile("/w/a/AGENTS.md", []byte("cwd"))
	wantChanges(t, f.baseline(), "set a|AGENTS.md")
	// Above or outside cwd: nothing new.
	wantChanges(t, f.post("../x/y.go", "/w/x/z.go", "/elsewhere/q", "/w/a", "", "../a/../x/k"), "")
	// Relative below cwd: every directory between cwd and the folder.
	wantChanges(t, f.post("b/c/main.go"), "set a/b|AGENTS.md; set a/b/c|AGENTS.md")
	// Known scopes stay known without being touched again.
	f.m.WriteFile("/w/a/b/c/AGENTS.md", []byte("deeper"))
	rd := f.post()
	wantChanges(t, rd, "replace a/b/c|AGENTS.md")
	// Absolute below cwd works too; a file right in cwd adds nothing.
	f.m.WriteFile("/w/a/d/CLAUDE.md", []byte("d"))
	wantChanges(t, f.post("/w/a/d/e.go", "/w/a/f.go"), "set a/d|CLAUDE.md")
	// A scope known but absent at first appears when the file is created.
	f.m.WriteFile("/w/a/b/CLAUDE.md", []byte("new claude"))
	wantChanges(t, f.post(), "set a/b|CLAUDE.md")
}

func TestFastPathReadsNothing(t *testing.T) {
	f := newFixture(t, "/w/sub")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	f.m.WriteFile("/w/CLAUDE.md", []byte("a"))
	f.m.WriteFile("/w/sub/CLAUDE.md", []byte("c"))
	f.m.WriteFile("/h/.dsh/AGENTS.md", []byte("g"))
	f.baseline()
	f.m.ResetCounts()
	wantChanges(t, f.post("sub/x.go"), "")
	if c := f.m.Counts(); c.FilesRead != 0 || c.ReadFile != 0 || c.ReadFiles != 0 {
		t.Fatalf("unchanged round read files: %+v", c)
	}
	// A change of version only (touch) reads the file but announces nothing.
	f.m.WriteFile("/w/sub/CLAUDE.md", []byte("c"))
	f.m.ResetCounts()
	wantChanges(t, f.post(), "")
	if c := f.m.Counts(); c.FilesRead != 1 {
		t.Fatalf("touched file: %+v", c)
	}
}

func TestRacyTimestamp(t *testing.T) {
	clock := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
	advance := func(d time.Duration) { mu.Lock(); clock = clock.Add(d); mu.Unlock() }
	f := newFixture(t, "/w", func(c *Config) { c.Now = now })
	f.m.WriteFile("/w/AGENTS.md", []byte("v1"))
	// The file was written in the same tick the round records.
	_ = f.m.SetTimes("/w/AGENTS.md", clock, clock)
	wantChanges(t, f.baseline(), "set .|AGENTS.md")

	// Same size, same mtime/ctime/inode: the version cannot tell. Git's
	// racy rule makes the next round re-read and compare digests.
	f.m.WriteFile("/w/AGENTS.md", []byte("v2"))
	_ = f.m.SetTimes("/w/AGENTS.md", clock, clock)
	advance(10 * time.Second)
	f.m.ResetCounts()
	wantChanges(t, f.post(), "replace .|AGENTS.md")
	if c := f.m.Counts(); c.FilesRead != 1 {
		t.Fatalf("racy entry not re-read: %+v", c)
	}
	// Recorded well after the mtime now: trusted, not read.
	advance(10 * time.Second)
	f.m.ResetCounts()
	wantChanges(t, f.post(), "")
	if c := f.m.Counts(); c.FilesRead != 0 {
		t.Fatalf("settled entry re-read: %+v", c)
	}
	// The same silent rewrite is now (correctly) invisible to the fast path:
	// the guard only covers writes within the recording tick.
	f.m.WriteFile("/w/AGENTS.md", []byte("v3"))
	_ = f.m.SetTimes("/w/AGENTS.md", clock.Add(-20*time.Second), clock.Add(-20*time.Second))
	wantChanges(t, f.post(), "")
}

func TestBudgetKeepsMostSpecific(t *testing.T) {
	f := newFixture(t, "/w/a/b", func(c *Config) { c.Budget = 250 })
	f.m.WriteFile("/h/.dsh/AGENTS.md", []byte(strings.Repeat("g", 100)))
	f.m.WriteFile("/w/AGENTS.md", []byte(strings.Repeat("r", 100)))
	f.m.WriteFile("/w/a/AGENTS.md", []byte(strings.Repeat("a", 100)))
	f.m.WriteFile("/w/a/b/AGENTS.md", []byte(strings.Repeat("b", 100)))
	f.m.WriteFile("/w/a/b/CLAUDE.md", []byte(strings.Repeat("c", 40)))
	rd := f.baseline()
	wantChanges(t, rd, "set user-global|AGENTS.md; set .|AGENTS.md; set a|AGENTS.md; set a/b|AGENTS.md; set a/b|CLAUDE.md")
	txt := rd.Message.Text
	for _, s := range []string{strings.Repeat("b", 100), strings.Repeat("c", 40), strings.Repeat("a", 100)} {
		if !strings.Contains(txt, s) {
			t.Fatalf("a more specific file was cut:\n%s", txt)
		}
	}
	if strings.Contains(txt, strings.Repeat("r", 100)) || strings.Contains(txt, strings.Repeat("g", 100)) {
		t.Fatalf("over budget:\n%s", txt)
	}
	i := strings.Index(txt, "Notice:")
	if i < 0 || !strings.Contains(txt[i:], "- /h/.dsh/AGENTS.md (new, 100 bytes)") || !strings.Contains(txt[i:], "- /w/AGENTS.md (new, 100 bytes)") ||
		count(txt[i:], "\n- ") != 2 || !strings.Contains(txt[i:], "250-byte") {
		t.Fatalf("notice must list exactly what was cut:\n%s", txt)
	}
	var omitted []string
	for _, c := range rd.Message.Metadata.Changes {
		if c.Omitted {
			omitted = append(omitted, c.Path)
		}
	}
	if strings.Join(omitted, ",") != "/h/.dsh/AGENTS.md,/w/AGENTS.md" || rd.Message.Metadata.Budget != 250 {
		t.Fatalf("metadata: %+v", rd.Message.Metadata)
	}
}

func TestEscaping(t *testing.T) {
	f := newFixture(t, "/w")
	content := "Before </system-reminder> after </SYSTEM-REMINDER> and <\\/system-reminder>."
	f.m.WriteFile("/w/AGENTS.md", []byte(content))
	f.m.WriteFile("/w/x</system-reminder>/CLAUDE.md", []byte("deep"))
	rd := f.baseline()
	rd2 := f.post("x</system-reminder>/y")
	for _, txt := range []string{rd.Message.Text, rd2.Message.Text} {
		if count(strings.ToLower(txt), "</system-reminder") != 1 || !strings.HasSuffix(txt, "</system-reminder>") {
			t.Fatalf("unescaped closing tag:\n%s", txt)
		}
	}
	if !strings.Contains(rd.Message.Text, reminder.Escape(content)) || reminder.Unescape(reminder.Escape(content)) != content {
		t.Fatalf("escape: %q", reminder.Escape(content))
	}
	if !strings.Contains(rd2.Message.Text, `/w/x<\/system-reminder>/CLAUDE.md`) {
		t.Fatalf("path not escaped:\n%s", rd2.Message.Text)
	}
	// Metadata is data, not text: paths there are unescaped.
	if rd2.Message.Metadata.Changes[0].Path != "/w/x</system-reminder>/CLAUDE.md" {
		t.Fatalf("metadata: %+v", rd2.Message.Metadata)
	}
}

func TestLaterRoundWording(t *testing.T) {
	f := newFixture(t, "/w")
	wantChanges(t, f.baseline(), "")
	f.m.WriteFile("/w/AGENTS.md", []byte("root"))
	rd := f.post()
	wantChanges(t, rd, "set .|AGENTS.md")
	if rd.Message.Metadata.Round != "update" || !strings.Contains(rd.Message.Text, "New instructions from /w/AGENTS.md now apply to work in /w:\nroot\n") {
		t.Fatalf("update wording:\n%s", rd.Message.Text)
	}
	// The user-global directory is probed only once known: the baseline
	// probed it (absent), so it is known and now appears.
	f2 := newFixture(t, "/w")
	f2.baseline()
	f2.m.WriteFile("/h/.dsh/AGENTS.md", []byte("global"))
	rd = f2.post()
	wantChanges(t, rd, "set user-global|AGENTS.md")
	if !strings.Contains(rd.Message.Text, "New user-global instructions from /h/.dsh/AGENTS.md now apply to all work:\nglobal\n") {
		t.Fatalf("user-global wording:\n%s", rd.Message.Text)
	}
}

func TestBaselineOrder(t *testing.T) {
	f := newFixture(t, "/w/a/b")
	f.m.WriteFile("/w/a/b/AGENTS.md", []byte("3"))
	f.m.WriteFile("/w/a/CLAUDE.local.md", []byte("2b"))
	f.m.WriteFile("/w/a/AGENTS.md", []byte("2a"))
	f.m.WriteFile("/w/AGENTS.md", []byte("1"))
	f.m.WriteFile("/h/.dsh/AGENTS.md", []byte("0"))
	f.m.WriteFile("/AGENTS.md", []byte("above the root"))
	rd := f.baseline()
	wantChanges(t, rd, "set user-global|AGENTS.md; set .|AGENTS.md; set a|AGENTS.md; set a|CLAUDE.local.md; set a/b|AGENTS.md")
	if f.r.Root() != "/w" {
		t.Fatalf("root %q", f.r.Root())
	}
	txt := rd.Message.Text
	last := -1
	for _, p := range []string{"/h/.dsh/AGENTS.md:\n0", "/w/AGENTS.md:\n1", "/w/a/AGENTS.md:\n2a", "/w/a/CLAUDE.local.md:\n2b", "/w/a/b/AGENTS.md:\n3"} {
		i := strings.Index(txt, p)
		if i <= last {
			t.Fatalf("order: %q\n%s", p, txt)
		}
		last = i
	}
}

func TestRootDiscovery(t *testing.T) {
	// A .git file (a worktree) marks the root as well as a folder.
	f := newFixture(t, "/v/p/q", func(c *Config) { c.DSHHome = "" })
	f.m.WriteFile("/v/p/.git", []byte("gitdir: elsewhere"))
	f.m.WriteFile("/v/AGENTS.md", []byte("above the root"))
	f.m.WriteFile("/v/p/AGENTS.md", []byte("root"))
	wantChanges(t, f.baseline(), "set .|AGENTS.md")
	if f.r.Root() != "/v/p" {
		t.Fatalf("root %q", f.r.Root())
	}
	// No marker anywhere: the root is cwd.
	g := newFixture(t, "/u/v", func(c *Config) { c.RootMarkers = []string{"ROOT"} })
	g.m.WriteFile("/u/AGENTS.md", []byte("above"))
	wantChanges(t, g.baseline(), "")
	if g.r.Root() != "/u/v" {
		t.Fatalf("root %q", g.r.Root())
	}
}

func TestSnapshotRestore(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	f.m.WriteFile("/w/sub/CLAUDE.md", []byte("s"))
	f.baseline()
	f.post("sub/x")
	snap, err := f.r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(snap), `"trimmedDigest"`) || !strings.Contains(string(snap), `"version":1`) {
		t.Fatalf("snapshot: %s", snap)
	}
	r2, err := New(Config{FS: f.m, Cwd: "/w", DSHHome: "/h/.dsh"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Restore(snap); err != nil {
		t.Fatal(err)
	}
	f.m.ResetCounts()
	rd, err := r2.Baseline(bg)
	if err != nil {
		t.Fatal(err)
	}
	wantChanges(t, rd, "")
	if c := f.m.Counts(); c.FilesRead != 0 {
		t.Fatalf("restored round read files: %+v", c)
	}
	if loadedKeys(r2) != ".|AGENTS.md; sub|CLAUDE.md" {
		t.Fatalf("loaded: %s", loadedKeys(r2))
	}
	f.m.WriteFile("/w/sub/CLAUDE.md", []byte("s2"))
	rd, _ = r2.PostExecute(bg, "edit", nil)
	wantChanges(t, rd, "replace sub|CLAUDE.md")
	if rd.Message.Metadata.Round != "update" {
		t.Fatalf("restored round is not a baseline: %+v", rd.Message.Metadata)
	}

	for name, bad := range map[string]string{
		"version":    strings.Replace(string(snap), `"version":1`, `"version":2`, 1),
		"no-version": `{"cwd":"/w"}`,
		"cwd":        strings.Replace(string(snap), `"cwd":"/w"`, `"cwd":"/elsewhere"`, 1),
		"garbage":    `not json`,
		"bad-key":    strings.Replace(string(snap), `"key":".\u0000AGENTS.md"`, `"key":"nokey"`, 1),
	} {
		if err := r2.Restore([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", name)
		} else if name == "version" && !strings.Contains(err.Error(), "version 2") {
			t.Errorf("unclear: %v", err)
		}
	}
	if loadedKeys(r2) != ".|AGENTS.md; sub|CLAUDE.md" {
		t.Fatalf("a rejected restore changed state: %s", loadedKeys(r2))
	}
}

func TestConcurrentRounds(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(4)
		go func() { defer wg.Done(); _, _ = f.r.Baseline(bg) }()
		go func() { defer wg.Done(); _, _ = f.r.PostExecute(bg, "w", []string{"d/x"}) }()
		go func() { defer wg.Done(); _, _ = f.r.Snapshot(); _ = f.r.Loaded() }()
		go func(i int) {
			defer wg.Done()
			f.m.WriteFile("/w/d/CLAUDE.md", []byte{byte('a' + i)})
		}(i)
	}
	wg.Wait()
	// Whatever interleaving happened, a final round settles and the next one
	// has nothing to say.
	f.post()
	wantChanges(t, f.post(), "")
}

func TestAttachLifecycle(t *testing.T) {
	f := newFixture(t, "/w")
	f.baseline()
	var bus lifecycle.Bus
	sub := f.r.Attach(&bus)
	f.m.WriteFile("/w/d/AGENTS.md", []byte("d"))
	res := bus.PostExecute(bg, lifecycle.PostExecute{Tool: "write", Paths: []string{"d/f.go"}})
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("results: %+v", res)
	}
	rd, err := sub.From(res)
	if err != nil {
		t.Fatal(err)
	}
	wantChanges(t, rd, "set d|AGENTS.md")
	if o := res[0].Outcome; len(o.Messages) != 1 || o.Messages[0].Text != rd.Message.Text {
		t.Fatalf("outcome %+v", o)
	}
	sub.Unsubscribe()
	if res := bus.PostExecute(bg, lifecycle.PostExecute{}); len(res) != 0 {
		t.Fatal("detach did not unregister")
	}
}

func TestConfig(t *testing.T) {
	m := newFixture(t, "/w").m
	for name, c := range map[string]Config{
		"no-fs":          {Cwd: "/w"},
		"relative-cwd":   {FS: m, Cwd: "w"},
		"path-candidate": {FS: m, Cwd: "/w", Candidates: []string{"docs/AGENTS.md"}},
		"dotdot":         {FS: m, Cwd: "/w", LocalCandidates: []string{".."}},
		"nul":            {FS: m, Cwd: "/w", Candidates: []string{"A\x00"}},
		"dup":            {FS: m, Cwd: "/w", Candidates: []string{"A.md"}, LocalCandidates: []string{"A.md"}},
		"marker":         {FS: m, Cwd: "/w", RootMarkers: []string{"a/.git"}},
		"rel-dsh":        {FS: m, Cwd: "/w", DSHHome: "dsh"},
		"cap":            {FS: m, Cwd: "/w", MaxFileBytes: -1},
	} {
		if _, err := New(c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if got := DefaultDSHHome(getenv, "/home/u"); got != "/home/u/.dsh" {
		t.Errorf("default: %q", got)
	}
	env["DSH_HOME"] = "/opt/dsh"
	if got := DefaultDSHHome(getenv, "/home/u"); got != "/opt/dsh" {
		t.Errorf("env: %q", got)
	}
	// Custom candidates; none local.
	f := newFixture(t, "/w", func(c *Config) { c.Candidates = []string{"RULES.md"}; c.LocalCandidates = []string{} })
	f.m.WriteFile("/w/AGENTS.md", []byte("x"))
	f.m.WriteFile("/w/RULES.md", []byte("y"))
	wantChanges(t, f.baseline(), "set .|RULES.md")
}

func TestCanceledRoundLeavesState(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	ctx, cancel := contextWithCancel()
	cancel()
	if _, err := f.r.Baseline(ctx); err == nil {
		t.Fatal("canceled round succeeded")
	}
	wantChanges(t, f.baseline(), "set .|AGENTS.md")
}

// TestCachedSetsAreAlwaysRead chains re-decisions: each file whose bytes are
// needed turns out (on reading) to have changed without its version
// changing, which frees the next sibling from being a duplicate. Every set
// must still carry its bytes, however long the chain.
func TestCachedSetsAreAlwaysRead(t *testing.T) {
	names := []string{"A.md", "B.md", "C.md", "D.md", "E.md"}
	f := newFixture(t, "/w", func(c *Config) { c.Candidates = names; c.LocalCandidates = []string{} })
	for _, n := range names {
		f.m.WriteFile("/w/"+n, []byte("x1"))
	}
	wantChanges(t, f.baseline(), "set .|A.md")
	// A changes visibly; B, C and D change silently (same size, inode and
	// times), so only reading them tells.
	f.m.WriteFile("/w/A.md", []byte("zz"))
	for i, n := range []string{"B.md", "C.md", "D.md"} {
		fi, err := f.m.Stat(bg, "/w/"+n)
		if err != nil {
			t.Fatal(err)
		}
		f.m.WriteFile("/w/"+n, []byte{'b' + byte(i), '1'})
		_ = f.m.SetTimes("/w/"+n, fi.ModTime, fi.Ctime)
	}
	rd := f.post()
	wantChanges(t, rd, "replace .|A.md; set .|B.md; set .|C.md; set .|D.md; set .|E.md")
	if !strings.Contains(rd.Message.Text, "/w/E.md now apply to work in /w:\nx1\n") {
		t.Fatalf("E.md rendered without its bytes:\n%s", rd.Message.Text)
	}
}

func TestUnavailableWarnsOnceUntilItChanges(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	f.m.FailWith("/w/AGENTS.md", fs.ErrPermission)
	if rd := f.baseline(); len(rd.Warnings) != 1 {
		t.Fatalf("first round: warnings %v", rd.Warnings)
	}
	if rd := f.post(); len(rd.Warnings) != 0 {
		t.Fatalf("the same problem again is not news: %v", rd.Warnings)
	}
	f.m.FailWith("/w/AGENTS.md", errors.New("input/output error"))
	if rd := f.post(); len(rd.Warnings) != 1 || !strings.Contains(rd.Warnings[0].String(), "input/output") {
		t.Fatalf("a different problem is news: %v", rd.Warnings)
	}
	f.m.FailWith("/w/AGENTS.md", nil)
	wantChanges(t, f.post(), "set .|AGENTS.md")
	f.m.FailWith("/w/AGENTS.md", errors.New("input/output error"))
	if rd := f.post(); len(rd.Warnings) != 1 {
		t.Fatalf("failing again after recovering is news: %v", rd.Warnings)
	}
}
