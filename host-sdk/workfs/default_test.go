package workfs

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rulebroker/rulebroker/host-sdk/workfs/workfstest"
	"github.com/rulebroker/rulebroker/shared"
)

func refusedFor(t *testing.T, what string, err, reason error, text string) {
	t.Helper()
	if !errors.Is(err, reason) || !errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: want a %v refusal, got %v", what, reason, err)
		return
	}
	if text != "" && !strings.Contains(err.Error(), text) {
		t.Errorf("%s: %q does not say %q", what, err, text)
	}
}

func TestPseudoFSRefusedWhateverTheRoots(t *testing.T) {
	ctx := context.Background()
	for name, p := range map[string]*Policy{"root /": mustPolicy(t, Tree("/")), "any": AllowAny(OS{})} {
		for _, path := range []string{"/proc/self/environ", "/proc/self/status", "/sys/kernel/hostname", "/dev/null", "/dev/stdin"} {
			_, err := p.ReadFile(ctx, path, 1<<20)
			refusedFor(t, name+" "+path, err, ErrPseudoFS, "pseudo-filesystem")
			res, err := p.ReadFiles(ctx, []string{path}, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			refusedFor(t, name+" batch "+path, res[0].Err, ErrPseudoFS, "")
		}
		_, err := p.ReadDir(ctx, "/proc")
		refusedFor(t, name+" readdir /proc", err, ErrPseudoFS, "")
		_, err = p.ReadFile(ctx, "/proc/self/environ", 0)
		if want := "read /proc/self/environ: refused: /proc/self/environ is on a pseudo-filesystem (proc)"; err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("message %q, want prefix %q", err, want)
		}
	}
}

// A link to /proc from inside the workspace is refused by where it leads,
// and so is a read whose opened file is on procfs whatever its path says.
func TestPseudoFSThroughLinkAndByType(t *testing.T) {
	ctx := context.Background()
	dir := tree(t)
	must(t, os.Symlink("/proc/self/environ", filepath.Join(dir, "env.md")))
	p := mustPolicy(t, Tree(dir))
	_, err := p.ReadFile(ctx, filepath.Join(dir, "env.md"), 0)
	refusedFor(t, "link to proc", err, ErrPseudoFS, "resolves to /proc/")

	// By type: the opened file's file system is judged, not only its path.
	v := p.vet("read", "/x", true)
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Skip("no /proc")
	}
	defer f.Close()
	real, pseudo, err := openedFacts(f)
	if err != nil || pseudo != "proc" || real != "/proc/self/status" && !strings.HasPrefix(real, "/proc/") {
		t.Fatalf("facts: %q %q %v", real, pseudo, err)
	}
	refusedFor(t, "by type", v(opened{path: "/x", mode: 0o444, pseudo: pseudo}), ErrPseudoFS, "(proc)")
}

func TestNonRegularRefused(t *testing.T) {
	ctx := context.Background()
	dir := tree(t) // holds a fifo
	for name, p := range map[string]*Policy{"roots": mustPolicy(t, Tree(dir)), "any": AllowAny(OS{})} {
		fifo := filepath.Join(dir, "fifo")
		_, err := p.ReadFile(ctx, fifo, 10)
		refusedFor(t, name+" fifo", err, ErrNotRegular, "is not a regular file (named pipe)")
		res, _ := p.ReadFiles(ctx, []string{fifo, filepath.Join(dir, "AGENTS.md")}, 10)
		refusedFor(t, name+" batch fifo", res[0].Err, ErrNotRegular, "")
		if string(res[1].Data) != "hello\n" || res[1].Err != nil {
			t.Errorf("%s: batch regular: %+v", name, res[1])
		}
		if fi, err := p.Stat(ctx, fifo); err != nil || fi.Mode&fs.ModeNamedPipe == 0 {
			t.Errorf("%s: stat of a fifo is reported: %+v %v", name, fi, err)
		}
		if _, err := p.ReadDir(ctx, dir); err != nil {
			t.Errorf("%s: readdir: %v", name, err)
		}
		sock := filepath.Join(dir, "s.sock")
		fd, serr := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
		if serr == nil {
			addr := &syscall.SockaddrUnix{Name: sock}
			if syscall.Bind(fd, addr) == nil {
				_, err := p.ReadFile(ctx, sock, 10)
				if !errors.Is(err, ErrNotRegular) && !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.ENXIO) {
					t.Errorf("%s: socket: %v", name, err)
				}
			}
			syscall.Close(fd)
			os.Remove(sock)
		}
	}
	// An in-memory fifo is refused by a stat before the read.
	m := workfstest.NewMem()
	m.WriteFile("/ws/a.md", []byte("a"))
	m.Mkfifo("/ws/f")
	p := mustPolicyOn(t, m, Tree("/ws"))
	_, err := p.ReadFile(ctx, "/ws/f", 0)
	refusedFor(t, "mem fifo", err, ErrNotRegular, "")
	res, _ := p.ReadFiles(ctx, []string{"/ws/f", "/ws/a.md"}, 0)
	refusedFor(t, "mem batch fifo", res[0].Err, ErrNotRegular, "")
	if string(res[1].Data) != "a" {
		t.Errorf("mem batch: %+v", res)
	}
}

// The vet runs on the opened descriptor: a file opened as regular passes,
// one opened as a fifo or outside the roots does not, whatever the path
// said before the open.
func TestVetJudgesOpenedFile(t *testing.T) {
	ctx := context.Background()
	dir := tree(t)
	outside := t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "x"), []byte("x"), 0o644))
	p := mustPolicy(t, Tree(dir))
	// Simulate the swap: the path checked was inside, the file opened is not.
	_, err := (OS{}).readFileVetted(ctx, filepath.Join(outside, "x"), 0, p.vet("read", filepath.Join(dir, "AGENTS.md"), true))
	refusedFor(t, "opened outside", err, ErrOutsideRoots, "outside the allowed roots")
	_, err = (OS{}).readFileVetted(ctx, filepath.Join(dir, "fifo"), 0, p.vet("read", filepath.Join(dir, "AGENTS.md"), true))
	refusedFor(t, "opened a fifo", err, ErrNotRegular, "")
	if b, err := (OS{}).readFileVetted(ctx, filepath.Join(dir, "CLAUDE.md"), 0, p.vet("read", filepath.Join(dir, "CLAUDE.md"), true)); err != nil || string(b) != "hello\n" {
		t.Errorf("inside: %q %v", b, err)
	}
}

func TestSymlinkConfinement(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	home, _ = filepath.EvalSymlinks(home)
	ws := filepath.Join(home, "ws")
	rules := filepath.Join(home, ".cursor", "rules")
	must(t, os.MkdirAll(ws, 0o755))
	must(t, os.MkdirAll(rules, 0o755))
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_rsa"), []byte("KEY"), 0o600))
	must(t, os.WriteFile(filepath.Join(ws, "a.md"), []byte("a"), 0o644))
	must(t, os.WriteFile(filepath.Join(rules, "r.mdc"), []byte("r"), 0o644))
	must(t, os.Symlink("a.md", filepath.Join(ws, "in.md")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(ws, "passwd.md")))
	must(t, os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(ws, "key.md")))
	// A chain: workspace → an allowed root → out.
	must(t, os.Symlink(filepath.Join(home, ".ssh", "id_rsa"), filepath.Join(rules, "hop.mdc")))
	must(t, os.Symlink(filepath.Join(rules, "hop.mdc"), filepath.Join(ws, "chain.md")))
	must(t, os.Symlink(filepath.Join(rules, "r.mdc"), filepath.Join(ws, "toroot.md")))

	p := mustPolicy(t, DefaultRoots(Locations{Home: home, WorkspaceRoot: ws, Cwd: ws}))
	for _, ok := range []string{"a.md", "in.md", "toroot.md"} {
		if _, err := p.ReadFile(ctx, filepath.Join(ws, ok), 0); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"passwd.md", "key.md", "chain.md"} {
		_, err := p.ReadFile(ctx, filepath.Join(ws, bad), 0)
		refusedFor(t, bad, err, ErrOutsideRoots, "(allow with --allow-root ")
		_, err = p.Stat(ctx, filepath.Join(ws, bad))
		refusedFor(t, "stat "+bad, err, ErrOutsideRoots, "")
	}
	_, err := p.ReadFile(ctx, filepath.Join(ws, "key.md"), 0)
	want := "read " + filepath.Join(ws, "key.md") + ": refused: " + filepath.Join(ws, "key.md") + " (resolves to " +
		filepath.Join(home, ".ssh", "id_rsa") + ") is outside the allowed roots (allow with --allow-root " +
		filepath.Join(home, ".ssh", "id_rsa") + " or --allow-any-path)"
	if err == nil || err.Error() != want {
		t.Errorf("message\n got %v\nwant %s", err, want)
	}
	// AllowAny follows links anywhere (but pseudo-fs stays refused).
	if b, err := AllowAny(OS{}).ReadFile(ctx, filepath.Join(ws, "key.md"), 0); err != nil || string(b) != "KEY" {
		t.Errorf("allow any: %q %v", b, err)
	}
}

func TestDefaultRoots(t *testing.T) {
	ctx := context.Background()
	m := workfstest.NewMem()
	for _, f := range []string{
		"/home/u/.ssh/id_rsa", "/home/u/.cursor/rules/x.mdc", "/home/u/.cursor/other",
		"/home/u/.xcsh/agent/rules/n.md", "/home/u/.xcsh/config", "/home/u/.dsh/AGENTS.md", "/home/u/.dsh/secret",
		"/home/u/.codeium/windsurf/memories/global_rules.md", "/home/u/.codeium/windsurf/memories/other.md",
		"/home/u/proj/AGENTS.md", "/home/u/proj/sub/x.go", "/home/u/.clinerules/r.md", "/home/u/notes.txt",
		"/etc/passwd",
	} {
		m.WriteFile(f, []byte("x"))
	}
	p := mustPolicyOn(t, m, DefaultRoots(Locations{
		Home: "/home/u", WorkspaceRoot: "/home/u/proj", DSHHome: "/home/u/.dsh", Cwd: "/home/u/proj/sub",
	}))
	for _, ok := range []string{
		"/home/u/.cursor/rules/x.mdc", "/home/u/.xcsh/agent/rules/n.md", "/home/u/.dsh/AGENTS.md",
		"/home/u/.codeium/windsurf/memories/global_rules.md", "/home/u/proj/AGENTS.md", "/home/u/proj/sub/x.go",
		"/home/u/.clinerules/r.md",
	} {
		if _, err := p.ReadFile(ctx, ok, 0); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	if _, err := p.ReadDir(ctx, "/home/u/.clinerules"); err != nil {
		t.Errorf("ancestor .clinerules listing: %v", err)
	}
	for _, absent := range []string{"/.clinerules", "/home/.clinerules", "/home/u/proj/sub/.clinerules"} {
		if _, err := p.Stat(ctx, absent); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("probe %s: want absent, got %v", absent, err)
		}
	}
	for _, bad := range []string{
		"/home/u/.ssh/id_rsa", "/home/u/.cursor/other", "/home/u/.xcsh/config", "/home/u/.dsh/secret",
		"/home/u/.codeium/windsurf/memories/other.md", "/home/u/notes.txt", "/etc/passwd",
	} {
		_, err := p.ReadFile(ctx, bad, 0)
		refusedFor(t, bad, err, ErrOutsideRoots, "")
	}
	for _, dir := range []string{"/home/u", "/home", "/", "/home/u/.codeium/windsurf/memories"} {
		_, err := p.ReadDir(ctx, dir)
		refusedFor(t, "list "+dir, err, ErrOutsideRoots, "")
	}
	// An exact root allows nothing below it.
	_, err := p.Stat(ctx, "/home/u/.dsh/AGENTS.md/x")
	refusedFor(t, "below exact", err, ErrOutsideRoots, "")
	if got := Ancestors("/a/b", ".clinerules"); strings.Join(got, " ") != "/a/b/.clinerules /a/.clinerules /.clinerules" {
		t.Errorf("Ancestors = %q", got)
	}
	if roots := DefaultRoots(Locations{}); len(roots) != 0 {
		t.Errorf("empty locations give %v", roots)
	}
}

func mustPolicy(t *testing.T, roots []Root) *Policy { return mustPolicyOn(t, OS{}, roots) }

func mustPolicyOn(t *testing.T, inner shared.HostFS, roots []Root) *Policy {
	t.Helper()
	p, err := NewPolicyRoots(context.Background(), inner, roots...)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Lstat is judged on the cleaned absolute path: ".." cannot climb out of the
// roots, and a relative path is refused, as for every other call.
func TestPolicyLstatStaysInsideTheRoots(t *testing.T) {
	ctx := context.Background()
	dir := tree(t)
	p := mustPolicy(t, Tree(dir))
	if _, err := p.Lstat(ctx, filepath.Join(dir, "AGENTS.md")); err != nil {
		t.Fatalf("inside: %v", err)
	}
	for _, path := range []string{dir + "/../../../etc/passwd", "etc/passwd", dir + "/../../proc/self/environ"} {
		if _, err := p.Lstat(ctx, path); !errors.Is(err, shared.ErrRefused) {
			t.Errorf("Lstat(%q) = %v, want a refusal", path, err)
		}
	}
}
