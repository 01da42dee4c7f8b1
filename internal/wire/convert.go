package wire

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// This file is the conversion layer: the only place that maps plain Go types
// to generated messages and back.

func ruleToProto(r shared.Rule) *pb.Rule {
	return &pb.Rule{
		Name:        r.Name,
		Path:        r.Path,
		Content:     r.Content,
		Globs:       r.Globs,
		AlwaysApply: r.AlwaysApply,
		Description: r.Description,
		Condition:   r.Condition,
		Level:       levelToProto(r.Level),

		Activation:       string(r.Activation),
		ActivationSource: r.ActivationSource,
		GlobBase:         r.GlobBase,
	}
}

// repairRule makes every string of r valid UTF-8, replacing each invalid
// byte with U+FFFD, and names the fields it had to repair.
func repairRule(r shared.Rule) (shared.Rule, []string) {
	var repaired []string
	fix := func(field string, s *string) {
		if !utf8.ValidString(*s) {
			*s = strings.ToValidUTF8(*s, "\uFFFD")
			repaired = append(repaired, field)
		}
	}
	fixAll := func(field string, list []string) []string {
		if !slices.ContainsFunc(list, func(s string) bool { return !utf8.ValidString(s) }) {
			return list
		}
		repaired = append(repaired, field)
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = strings.ToValidUTF8(s, "\uFFFD")
		}
		return out
	}
	fix("name", &r.Name)
	fix("path", &r.Path)
	fix("content", &r.Content)
	fix("description", &r.Description)
	r.Globs = fixAll("globs", r.Globs)
	r.Condition = fixAll("condition", r.Condition)
	fix("activation source", &r.ActivationSource)
	fix("glob base", &r.GlobBase)
	if a := string(r.Activation); !utf8.ValidString(a) {
		r.Activation = shared.Activation(strings.ToValidUTF8(a, "\uFFFD"))
		repaired = append(repaired, "activation")
	}
	return r, repaired
}

func ruleFromProto(r *pb.Rule) shared.Rule {
	return shared.Rule{
		Name:        r.GetName(),
		Path:        r.GetPath(),
		Content:     r.GetContent(),
		Globs:       r.GetGlobs(),
		AlwaysApply: r.GetAlwaysApply(),
		Description: r.GetDescription(),
		Condition:   r.GetCondition(),
		Level:       levelFromProto(r.GetLevel()),

		Activation:       shared.Activation(r.GetActivation()),
		ActivationSource: r.GetActivationSource(),
		GlobBase:         r.GetGlobBase(),
	}
}

func levelToProto(l shared.Level) pb.Level {
	switch l {
	case shared.LevelUser:
		return pb.Level_LEVEL_USER
	case shared.LevelProject:
		return pb.Level_LEVEL_PROJECT
	}
	return pb.Level_LEVEL_UNSPECIFIED
}

func levelFromProto(l pb.Level) shared.Level {
	switch l {
	case pb.Level_LEVEL_USER:
		return shared.LevelUser
	case pb.Level_LEVEL_PROJECT:
		return shared.LevelProject
	}
	return ""
}

func fileTypeToProto(m fs.FileMode) pb.FileType {
	switch {
	case m.IsRegular():
		return pb.FileType_FILE_TYPE_REGULAR
	case m.IsDir():
		return pb.FileType_FILE_TYPE_DIR
	case m&fs.ModeSymlink != 0:
		return pb.FileType_FILE_TYPE_SYMLINK
	}
	return pb.FileType_FILE_TYPE_OTHER
}

func fileTypeFromProto(t pb.FileType) fs.FileMode {
	switch t {
	case pb.FileType_FILE_TYPE_REGULAR:
		return 0
	case pb.FileType_FILE_TYPE_DIR:
		return fs.ModeDir
	case pb.FileType_FILE_TYPE_SYMLINK:
		return fs.ModeSymlink
	}
	// Anything else is reported as irregular so that no caller mistakes it
	// for a readable file.
	return fs.ModeIrregular
}

func fileInfoToProto(fi shared.FileInfo) *pb.FileInfo {
	return &pb.FileInfo{
		Name:            fi.Name,
		Size:            fi.Size,
		Type:            fileTypeToProto(fi.Mode),
		Perm:            uint32(fi.Mode.Perm()),
		ModTimeUnixNano: unixNano(fi.ModTime),
		Dev:             fi.Dev,
		Ino:             fi.Ino,
		CtimeUnixNano:   unixNano(fi.Ctime),
	}
}

func fileInfoFromProto(fi *pb.FileInfo) shared.FileInfo {
	return shared.FileInfo{
		Name:    fi.GetName(),
		Size:    fi.GetSize(),
		Mode:    fileTypeFromProto(fi.GetType()) | fs.FileMode(fi.GetPerm()).Perm(),
		ModTime: fromUnixNano(fi.GetModTimeUnixNano()),
		Dev:     fi.GetDev(),
		Ino:     fi.GetIno(),
		Ctime:   fromUnixNano(fi.GetCtimeUnixNano()),
	}
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// errorKind classifies a filesystem error for the wire.
func errorKind(err error) pb.ErrorKind {
	switch {
	case errors.Is(err, shared.ErrRefused): // before ErrPermission, which it also wraps
		return pb.ErrorKind_ERROR_KIND_REFUSED
	case errors.Is(err, fs.ErrNotExist):
		return pb.ErrorKind_ERROR_KIND_NOT_EXIST
	case errors.Is(err, fs.ErrPermission):
		return pb.ErrorKind_ERROR_KIND_PERMISSION
	case errors.Is(err, shared.ErrNotDir):
		return pb.ErrorKind_ERROR_KIND_NOT_DIR
	case errors.Is(err, shared.ErrTooLarge):
		return pb.ErrorKind_ERROR_KIND_TOO_LARGE
	}
	return pb.ErrorKind_ERROR_KIND_OTHER
}

func errorToProto(err error) *pb.Error {
	if err == nil {
		return nil
	}
	// An error's text often holds a path, and a path need not be UTF-8.
	return &pb.Error{Kind: errorKind(err), Message: strings.ToValidUTF8(err.Error(), "\uFFFD")}
}

// wireError is a filesystem error that crossed the wire: it keeps the remote
// message and still answers errors.Is for its kind.
type wireError struct {
	kind pb.ErrorKind
	msg  string
}

func (e *wireError) Error() string { return e.msg }

func (e *wireError) Unwrap() []error {
	switch e.kind {
	case pb.ErrorKind_ERROR_KIND_NOT_EXIST:
		return []error{fs.ErrNotExist}
	case pb.ErrorKind_ERROR_KIND_PERMISSION:
		return []error{fs.ErrPermission}
	case pb.ErrorKind_ERROR_KIND_NOT_DIR:
		return []error{shared.ErrNotDir}
	case pb.ErrorKind_ERROR_KIND_TOO_LARGE:
		if strings.Contains(e.msg, ErrOverBudget.Error()) {
			// The protocol has no kind of its own for it; its text is fixed.
			return []error{ErrOverBudget, shared.ErrTooLarge}
		}
		return []error{shared.ErrTooLarge}
	case pb.ErrorKind_ERROR_KIND_REFUSED:
		return []error{shared.ErrRefused, fs.ErrPermission}
	}
	return nil
}

func errorFromProto(e *pb.Error) error {
	if e == nil {
		return nil
	}
	return &wireError{kind: e.GetKind(), msg: e.GetMessage()}
}

func kindCode(k pb.ErrorKind) codes.Code {
	switch k {
	case pb.ErrorKind_ERROR_KIND_NOT_EXIST:
		return codes.NotFound
	case pb.ErrorKind_ERROR_KIND_PERMISSION, pb.ErrorKind_ERROR_KIND_REFUSED:
		return codes.PermissionDenied
	case pb.ErrorKind_ERROR_KIND_NOT_DIR:
		return codes.FailedPrecondition
	case pb.ErrorKind_ERROR_KIND_TOO_LARGE:
		return codes.OutOfRange
	}
	return codes.Unknown
}

// statusFromFSError turns a filesystem error into a gRPC status carrying the
// Error detail, so the caller gets back an error of the same kind.
func statusFromFSError(err error) error {
	e := errorToProto(err)
	code := kindCode(e.Kind)
	st, derr := status.New(code, e.Message).WithDetails(e)
	if derr != nil {
		return status.Error(code, e.Message)
	}
	return st.Err()
}

// fsErrorFromStatus is the inverse of statusFromFSError. A transport failure
// (no detail) comes back as an error that names the operation and keeps the
// status, so it is never mistaken for "file does not exist".
func fsErrorFromStatus(op, path string, err error) error {
	st, ok := status.FromError(err)
	if ok {
		for _, d := range st.Details() {
			if e, ok := d.(*pb.Error); ok {
				return errorFromProto(e)
			}
		}
	}
	return fmt.Errorf("hostfs %s %s: %w", op, path, err)
}

// PrefetchBytes bounds the encoded size of the prefetched answers one
// Discover request carries, so that the request stays inside the plugin's
// receive limit (RequestBytes) with room for its other fields. Answers past
// it are left out, in order; the provider asks the host for those as usual.
const PrefetchBytes = 3 << 20

// prefetchToProto converts what fits in limit encoded bytes and returns how
// many answers were left out. A string that is not UTF-8 cannot cross the
// wire: an answer holding one is left out too (the provider asks for it).
func prefetchToProto(in []shared.Prefetched, limit int) (out []*pb.Prefetched, left int) {
	size := 0
	for i, p := range in {
		m := &pb.Prefetched{Path: p.Path, MaxBytes: p.MaxBytes}
		if p.Unchanged {
			// No answer travels: the provider has it from its previous call.
			m.Op, m.Unchanged = prefetchOpToProto(p.Op), true
		} else {
			m.Error = errorToProto(p.Err)
			prefetchAnswerToProto(p, m)
		}
		if m.Op == pb.Prefetched_OP_UNSPECIFIED || !prefetchValidUTF8(m) {
			left++
			continue
		}
		// 8: the field's tag and length framing, generously.
		if size += proto.Size(m) + 8; size > limit {
			return out, left + len(in) - i
		}
		out = append(out, m)
	}
	return out, left
}

// prefetchOps pairs each HostFS call a prefetch answers with its wire value.
var prefetchOps = [...]struct {
	op   shared.PrefetchOp
	wire pb.Prefetched_Op
}{
	{shared.PrefetchStat, pb.Prefetched_OP_STAT},
	{shared.PrefetchResolve, pb.Prefetched_OP_RESOLVE},
	{shared.PrefetchReadDir, pb.Prefetched_OP_READ_DIR},
	{shared.PrefetchReadFile, pb.Prefetched_OP_READ_FILE},
}

// prefetchOpToProto is op's wire value, OP_UNSPECIFIED for one the wire
// does not know.
func prefetchOpToProto(op shared.PrefetchOp) pb.Prefetched_Op {
	for _, o := range prefetchOps {
		if o.op == op {
			return o.wire
		}
	}
	return pb.Prefetched_OP_UNSPECIFIED
}

// prefetchOpFromProto is op's Go value, 0 for one this side does not know.
func prefetchOpFromProto(op pb.Prefetched_Op) shared.PrefetchOp {
	for _, o := range prefetchOps {
		if o.wire == op {
			return o.op
		}
	}
	return 0
}

// prefetchAnswerToProto sets m's op and answer from p; the op stays
// OP_UNSPECIFIED for one the wire does not know.
func prefetchAnswerToProto(p shared.Prefetched, m *pb.Prefetched) {
	m.Op = prefetchOpToProto(p.Op)
	switch p.Op {
	case shared.PrefetchStat:
		if p.Err == nil {
			m.Info = fileInfoToProto(p.Info)
		}
	case shared.PrefetchResolve:
		m.Resolved = p.Resolved
	case shared.PrefetchReadDir:
		m.Entries = make([]*pb.DirEntry, len(p.Entries))
		for j, e := range p.Entries {
			m.Entries[j] = &pb.DirEntry{Name: e.Name, Type: fileTypeToProto(e.Type)}
		}
	case shared.PrefetchReadFile:
		m.Data = p.Data
	}
}

func prefetchValidUTF8(m *pb.Prefetched) bool {
	if !utf8.ValidString(m.Path) || !utf8.ValidString(m.Resolved) || !utf8.ValidString(m.GetInfo().GetName()) {
		return false
	}
	for _, e := range m.Entries {
		if !utf8.ValidString(e.Name) {
			return false
		}
	}
	return true
}

// prefetchFromProto converts the answers the host sent, leaving out any with
// an op this side does not know (a newer host's), which the provider then
// asks for as usual.
func prefetchFromProto(in []*pb.Prefetched) []shared.Prefetched {
	if len(in) == 0 {
		return nil
	}
	out := make([]shared.Prefetched, 0, len(in))
	for _, m := range in {
		p := shared.Prefetched{Op: prefetchOpFromProto(m.GetOp()), Path: m.GetPath(), MaxBytes: m.GetMaxBytes()}
		if p.Op == 0 {
			continue // a call this side does not know: it is never asked
		}
		if m.GetUnchanged() {
			p.Unchanged = true
			out = append(out, p)
			continue
		}
		p.Err = errorFromProto(m.GetError())
		switch p.Op {
		case shared.PrefetchStat:
			if p.Err == nil {
				if m.GetInfo() == nil {
					continue // no answer at all: ask
				}
				p.Info = fileInfoFromProto(m.GetInfo())
			}
		case shared.PrefetchResolve:
			p.Resolved = m.GetResolved()
		case shared.PrefetchReadDir:
			p.Entries = make([]shared.DirEntry, len(m.GetEntries()))
			for j, e := range m.GetEntries() {
				p.Entries[j] = shared.DirEntry{Name: e.GetName(), Type: fileTypeFromProto(e.GetType())}
			}
		case shared.PrefetchReadFile:
			p.Data = m.GetData()
		}
		out = append(out, p)
	}
	return out
}
