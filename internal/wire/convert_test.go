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
