package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// hostFSServer serves a HostFS to a plugin. It runs in the host, and it is
// where the host's limits and the protocol's rules for strings are enforced
// on what the host sends: every string is valid UTF-8 (gRPC refuses to carry
// anything else), a directory entry whose name is not is left out. Each
// request is answered from the Discover call in progress: its filesystem and
// its limits (see hostFSService).
type hostFSServer struct {
	pb.UnimplementedHostFSServer
	calls *hostFSService
}

// clampRead is the read cap the host applies: what the plugin asked for,
// never more than the host's per-file cap.
func (c *hostFSCall) clampRead(max int64) int64 {
	limit := c.limits.MaxReadBytes
	if limit <= 0 {
		limit = shared.DefaultMaxRuleBytes
	}
	if max <= 0 || max > limit {
		return limit
	}
	return max
}

func (s *hostFSServer) Stat(ctx context.Context, req *pb.PathRequest) (*pb.StatResponse, error) {
	call, ctx, done, err := s.calls.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	fi, err := call.fs.Stat(ctx, req.GetPath())
	if err != nil {
		return nil, statusFromFSError(err)
	}
	fi.Name = strings.ToValidUTF8(fi.Name, "\uFFFD")
	return &pb.StatResponse{Info: fileInfoToProto(fi)}, nil
}

func (s *hostFSServer) Resolve(ctx context.Context, req *pb.PathRequest) (*pb.ResolveResponse, error) {
	call, ctx, done, err := s.calls.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	p, err := call.fs.Resolve(ctx, req.GetPath())
	if err != nil {
		return nil, statusFromFSError(err)
	}
	if !utf8.ValidString(p) {
		// A repaired path would name another file; the plugin could not
		// use this one anyway, since every path it sends is a string.
		return nil, statusFromFSError(fmt.Errorf("resolve %s: the target's path %s is not valid UTF-8", req.GetPath(), strconv.Quote(p)))
	}
	return &pb.ResolveResponse{Path: p}, nil
}

func (s *hostFSServer) ReadDir(ctx context.Context, req *pb.PathRequest) (*pb.ReadDirResponse, error) {
	call, ctx, done, err := s.calls.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	entries, err := call.fs.ReadDir(ctx, req.GetPath())
	if err != nil {
		return nil, statusFromFSError(err)
	}
	out := make([]*pb.DirEntry, 0, len(entries))
	size := 0
	for _, e := range entries {
		if !utf8.ValidString(e.Name) {
			continue // the host's own filesystem wrapper says so, once (see the broker)
		}
		if size += len(e.Name) + 8; size > ListingBytes { // 8: the entry's framing and type
			return nil, statusFromFSError(fmt.Errorf("readdir %s: %d entries, more than one listing can carry (%d bytes of names): %w",
				req.GetPath(), len(entries), ListingBytes, shared.ErrTooLarge))
		}
		out = append(out, &pb.DirEntry{Name: e.Name, Type: fileTypeToProto(e.Type)})
	}
	return &pb.ReadDirResponse{Entries: out}, nil
}

func (s *hostFSServer) ReadFile(ctx context.Context, req *pb.ReadFileRequest) (*pb.ReadFileResponse, error) {
	call, ctx, done, err := s.calls.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	max := call.clampRead(req.GetMaxBytes())
	held, err := call.limits.InFlight.acquire(ctx, max)
	if err != nil {
		return nil, statusFromFSError(err)
	}
	// Held until the handler returns; gRPC has copied the answer into its
	// frames by the time the next read could start.
	defer call.limits.InFlight.release(held)
	data, err := call.fs.ReadFile(ctx, req.GetPath(), max)
	if err != nil {
		return nil, statusFromFSError(err)
	}
	return &pb.ReadFileResponse{Data: data}, nil
}

// ReadFiles answers one file per message, reading each just before sending
// it, so the host holds one file of the batch at a time. Past the call's
// budget the rest are answered with ErrOverBudget without being read.
func (s *hostFSServer) ReadFiles(req *pb.ReadFilesRequest, stream grpc.ServerStreamingServer[pb.FileContent]) error {
	call, ctx, done, err := s.calls.enter(stream.Context())
	if err != nil {
		return err
	}
	defer done()
	max := call.clampRead(req.GetMaxBytes())
	budget := call.limits.CallBudget // what is left of it; no budget when 0
	spent := false
	for _, p := range req.GetPaths() {
		msg := &pb.FileContent{Path: p}
		var held int64
		if spent {
			// Once a file did not fit what was left, nothing more is read:
			// reads capped at the remainder could each cost that much.
			msg.Error = errorToProto(overBudgetError{path: p})
		} else {
			limit, short := max, false
			if budget > 0 && budget < max {
				limit, short = budget, true
			}
			var over bool
			var err error
			if held, over, err = call.readOne(ctx, msg, limit, short); err != nil {
				return statusFromFSError(err)
			}
			if call.limits.CallBudget > 0 {
				budget -= int64(len(msg.Data))
				spent = over || budget <= 0
			}
		}
		err := stream.Send(msg)
		call.limits.InFlight.release(held)
		if err != nil {
			return err
		}
	}
	return nil
}

// readOne fills msg with the file at msg.Path, read with the given cap. When
// the cap is what is left of the budget (short), a file too large for it is
// over the budget (over), not over the per-file cap. It returns the bytes it
// holds of the host's in-flight allowance, for the caller to release once
// the answer is sent, and an error only for the call's own failure (its
// context ended), not the file's.
func (c *hostFSCall) readOne(ctx context.Context, msg *pb.FileContent, limit int64, short bool) (held int64, over bool, err error) {
	held, err = c.limits.InFlight.acquire(ctx, limit)
	if err != nil {
		return 0, false, err
	}
	data, err := c.fs.ReadFile(ctx, msg.Path, limit)
	if short && errors.Is(err, shared.ErrTooLarge) {
		err, over = overBudgetError{path: msg.Path}, true
	}
	msg.Data, msg.Error = data, errorToProto(err)
	return held, over, nil
}

// hostFSClient is a plugin's HostFS: every call goes to the host, naming
// the Discover call it was handed to.
type hostFSClient struct {
	client pb.HostFSClient
	call   string // the host's number for the Discover call
}

func (c *hostFSClient) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	resp, err := c.client.Stat(withCall(ctx, c.call), &pb.PathRequest{Path: path})
	if err != nil {
		return shared.FileInfo{}, fsErrorFromStatus("stat", path, err)
	}
	return fileInfoFromProto(resp.GetInfo()), nil
}

func (c *hostFSClient) Resolve(ctx context.Context, path string) (string, error) {
	resp, err := c.client.Resolve(withCall(ctx, c.call), &pb.PathRequest{Path: path})
	if err != nil {
		return "", fsErrorFromStatus("resolve", path, err)
	}
	return resp.GetPath(), nil
}

func (c *hostFSClient) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	resp, err := c.client.ReadDir(withCall(ctx, c.call), &pb.PathRequest{Path: path}, grpc.MaxCallRecvMsgSize(ListingBytes+MetadataBytes))
	if err != nil {
		return nil, fsErrorFromStatus("readdir", path, err)
	}
	out := make([]shared.DirEntry, len(resp.GetEntries()))
	for i, e := range resp.GetEntries() {
		out[i] = shared.DirEntry{Name: e.GetName(), Type: fileTypeFromProto(e.GetType())}
	}
	return out, nil
}

func (c *hostFSClient) ReadFile(ctx context.Context, path string, max int64) ([]byte, error) {
	resp, err := c.client.ReadFile(withCall(ctx, c.call), &pb.ReadFileRequest{Path: path, MaxBytes: max})
	if err != nil {
		return nil, fsErrorFromStatus("read", path, err)
	}
	return resp.GetData(), nil
}

func (c *hostFSClient) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	stream, err := c.client.ReadFiles(withCall(ctx, c.call), &pb.ReadFilesRequest{Paths: paths, MaxBytes: max})
	if err != nil {
		return nil, fsErrorFromStatus("read", "(batch)", err)
	}
	out := make([]shared.FileContent, 0, len(paths))
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, fsErrorFromStatus("read", "(batch)", err)
		}
		out = append(out, shared.FileContent{Path: msg.GetPath(), Data: msg.GetData(), Err: errorFromProto(msg.GetError())})
	}
}
