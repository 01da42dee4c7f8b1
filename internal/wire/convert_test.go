package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

func TestFSErrorsKeepTheirKindAcrossTheWire(t *testing.T) {
	for _, cause := range []error{fs.ErrNotExist, fs.ErrPermission, shared.ErrNotDir, shared.ErrTooLarge, shared.ErrRefused} {
		sent := fmt.Errorf("open /w/AGENTS.md: %w", cause)
		got := fsErrorFromStatus("read", "/w/AGENTS.md", statusFromFSError(sent))
		if !errors.Is(got, cause) {
			t.Errorf("%v came back as %v, which is not %v", sent, got, cause)
		}
		if got.Error() != sent.Error() {
			t.Errorf("message changed on the wire: %q → %q", sent, got)
		}
	}
	refused := fsErrorFromStatus("read", "/p", statusFromFSError(fmt.Errorf("read /p: %w: %w", shared.ErrRefused, fs.ErrPermission)))
	if !errors.Is(refused, fs.ErrPermission) {
		t.Error("a policy refusal is still a permission error on the other side")
	}
	other := fsErrorFromStatus("read", "/p", statusFromFSError(errors.New("too many levels of symbolic links")))
	for _, kind := range []error{fs.ErrNotExist, fs.ErrPermission, shared.ErrNotDir, shared.ErrTooLarge, shared.ErrRefused} {
		if errors.Is(other, kind) {
			t.Errorf("an unclassified error must not read as %v", kind)
		}
	}
}

func TestTransportFailureIsNeverNotExist(t *testing.T) {
	err := fsErrorFromStatus("stat", "/p", status.Error(codes.NotFound, "connection reset"))
	if errors.Is(err, fs.ErrNotExist) {
		t.Fatal("a status without our detail must not be mistaken for a missing file")
	}
}

func TestFileInfoRoundTrip(t *testing.T) {
	mt := time.Unix(1700000000, 123456789)
	// Regular files, directories and symlinks keep their type; any other type
	// (here a fifo) comes back as irregular.
	for mode, want := range map[fs.FileMode]fs.FileMode{
		0o644:                    0o644,
		fs.ModeDir | 0o755:       fs.ModeDir | 0o755,
		fs.ModeSymlink | 0o777:   fs.ModeSymlink | 0o777,
		fs.ModeNamedPipe | 0o600: fs.ModeIrregular | 0o600,
		fs.ModeSocket | 0o600:    fs.ModeIrregular | 0o600,
		fs.ModeDevice | 0o600:    fs.ModeIrregular | 0o600,
	} {
		in := shared.FileInfo{Name: "x", Size: 42, Mode: mode, ModTime: mt, Dev: 3, Ino: 99, Ctime: mt.Add(time.Second)}
		out := fileInfoFromProto(fileInfoToProto(in))
		if out.Mode != want {
			t.Errorf("mode %v came back as %v, want %v", in.Mode, out.Mode, want)
		}
		if !out.ModTime.Equal(in.ModTime) || !out.Ctime.Equal(in.Ctime) || out.Dev != 3 || out.Ino != 99 || out.Size != 42 {
			t.Errorf("round trip lost fields: %+v → %+v", in, out)
		}
	}
	if fileInfoFromProto(fileInfoToProto(shared.FileInfo{Mode: fs.ModeNamedPipe})).Mode.IsRegular() {
		t.Error("a fifo must never come back as a regular file")
	}
}

func TestRuleRoundTrip(t *testing.T) {
	in := shared.Rule{Name: "n", Path: "/p", Content: "c", Globs: []string{"a", "b"}, AlwaysApply: true, Description: "d", Condition: []string{"x"}, Level: shared.LevelUser,
		Activation: shared.ActivationAttached, ActivationSource: "cursor: globs", GlobBase: "/w/sub"}
	out := ruleFromProto(ruleToProto(in))
	if fmt.Sprint(in) != fmt.Sprint(out) {
		t.Fatalf("%+v → %+v", in, out)
	}
}

func TestPrefetchedRoundTrip(t *testing.T) {
	mt := time.Unix(1700000000, 5)
	in := []shared.Prefetched{
		{Op: shared.PrefetchStat, Path: "/w/a", Info: shared.FileInfo{Name: "a", Size: 3, Mode: 0o644, ModTime: mt, Dev: 1, Ino: 2, Ctime: mt}},
		{Op: shared.PrefetchStat, Path: "/w/gone", Err: fmt.Errorf("stat /w/gone: %w", fs.ErrNotExist)},
		{Op: shared.PrefetchResolve, Path: "/w/link", Resolved: "/w/target"},
		{Op: shared.PrefetchReadDir, Path: "/w", Entries: []shared.DirEntry{{Name: "a"}, {Name: "d", Type: fs.ModeDir}, {Name: "l", Type: fs.ModeSymlink}}},
		{Op: shared.PrefetchReadFile, Path: "/w/a", MaxBytes: 100, Data: []byte("abc")},
		{Op: shared.PrefetchReadFile, Path: "/w/big", MaxBytes: 1, Err: fmt.Errorf("read /w/big: %w", shared.ErrTooLarge)},
		{Op: shared.PrefetchReadFile, Path: "/w/p", MaxBytes: 1, Err: fmt.Errorf("read /w/p: %w: %w", shared.ErrRefused, fs.ErrPermission)},
		{Op: shared.PrefetchReadFile, Path: "/w/same", MaxBytes: 7, Unchanged: true},
		{Op: shared.PrefetchReadDir, Path: "/w/samedir", Unchanged: true},
	}
	msgs, left := prefetchToProto(in, PrefetchBytes)
	if left != 0 || len(msgs) != len(in) {
		t.Fatalf("%d sent, %d left out", len(msgs), left)
	}
	out := prefetchFromProto(msgs)
	if len(out) != len(in) {
		t.Fatalf("%d came back of %d", len(out), len(in))
	}
	for i := range in {
		a, b := in[i], out[i]
		if a.Op != b.Op || a.Path != b.Path || a.MaxBytes != b.MaxBytes || a.Unchanged != b.Unchanged || a.Resolved != b.Resolved || string(a.Data) != string(b.Data) ||
			fmt.Sprint(a.Entries) != fmt.Sprint(b.Entries) || a.Info.Size != b.Info.Size || a.Info.Mode != b.Info.Mode ||
			!a.Info.ModTime.Equal(b.Info.ModTime) || a.Info.Ino != b.Info.Ino {
			t.Errorf("answer %d: %+v → %+v", i, a, b)
		}
		if (a.Err == nil) != (b.Err == nil) || (a.Err != nil && a.Err.Error() != b.Err.Error()) {
			t.Errorf("answer %d: error %v → %v", i, a.Err, b.Err)
		}
	}
	for _, c := range []struct {
		i    int
		kind error
	}{{1, fs.ErrNotExist}, {5, shared.ErrTooLarge}, {6, shared.ErrRefused}, {6, fs.ErrPermission}} {
		if !errors.Is(out[c.i].Err, c.kind) {
			t.Errorf("answer %d: %v is not %v after the wire", c.i, out[c.i].Err, c.kind)
		}
	}

	// An unchanged answer carries no answer: only the call it stands for.
	if m := msgs[len(msgs)-2]; !m.GetUnchanged() || m.GetData() != nil || m.GetError() != nil || m.GetOp() != pb.Prefetched_OP_READ_FILE {
		t.Errorf("unchanged answer on the wire: %v", m)
	}

	// Past the size limit the rest is left out; a path that is not UTF-8
	// cannot cross, so its answer is left out too.
	big := []shared.Prefetched{
		{Op: shared.PrefetchReadFile, Path: "/w/1", Data: make([]byte, 600)},
		{Op: shared.PrefetchStat, Path: "/w/\xff"},
		{Op: shared.PrefetchReadFile, Path: "/w/2", Data: make([]byte, 600)},
		{Op: shared.PrefetchReadFile, Path: "/w/3", Data: make([]byte, 10)},
	}
	msgs, left = prefetchToProto(big, 1000)
	if len(msgs) != 1 || msgs[0].GetPath() != "/w/1" || left != 3 {
		t.Fatalf("over the limit: %d sent, %d left out", len(msgs), left)
	}
}
