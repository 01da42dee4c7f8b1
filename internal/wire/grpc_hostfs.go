package wire

import (
	"context"
	"errors"
	"io"

	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// MaxReadBytes is the largest read cap HostFS honours: one file must fit in one
// gRPC message (4 MiB by default) with room to spare. A larger cap, or none
// (zero or negative), becomes this one.
const MaxReadBytes = 3 << 20

func clampRead(max int64) int64 {
	if max <= 0 || max > MaxReadBytes {
		return MaxReadBytes
	}
	return max
}

// hostFSServer serves a HostFS to a plugin. It runs in the host.
type hostFSServer struct {
	pb.UnimplementedHostFSServer
	fs shared.HostFS
}

func (s *hostFSServer) Stat(ctx context.Context, req *pb.PathRequest) (*pb.StatResponse, error) {
	fi, err := s.fs.Stat(ctx, req.GetPath())
	if err != nil {
		return nil, statusFromFSError(err)
	}
	return &pb.StatResponse{Info: fileInfoToProto(fi)}, nil
}

func (s *hostFSServer) Resolve(ctx context.Context, req *pb.PathRequest) (*pb.ResolveResponse, error) {
	p, err := s.fs.Resolve(ctx, req.GetPath())
	if err != nil {
		return nil, statusFromFSError(err)
	}
	return &pb.ResolveResponse{Path: p}, nil
}

func (s *hostFSServer) ReadDir(ctx context.Context, req *pb.PathRequest) (*pb.ReadDirResponse, error) {
	entries, err := s.fs.ReadDir(ctx, req.GetPath())
	if err != nil {
		return nil, statusFromFSError(err)
	}
	out := make([]*pb.DirEntry, len(entries))
	for i, e := range entries {
		out[i] = &pb.DirEntry{Name: e.Name, Type: fileTypeToProto(e.Type)}
	}
	return &pb.ReadDirResponse{Entries: out}, nil
}

func (s *hostFSServer) ReadFile(ctx context.Context, req *pb.ReadFileRequest) (*pb.ReadFileResponse, error) {
	data, err := s.fs.ReadFile(ctx, req.GetPath(), clampRead(req.GetMaxBytes()))
	if err != nil {
		return nil, statusFromFSError(err)
	}
	return &pb.ReadFileResponse{Data: data}, nil
}

func (s *hostFSServer) ReadFiles(req *pb.ReadFilesRequest, stream grpc.ServerStreamingServer[pb.FileContent]) error {
	files, err := s.fs.ReadFiles(stream.Context(), req.GetPaths(), clampRead(req.GetMaxBytes()))
	if err != nil {
		return statusFromFSError(err)
	}
	for _, f := range files {
		if err := stream.Send(&pb.FileContent{Path: f.Path, Data: f.Data, Error: errorToProto(f.Err)}); err != nil {
			return err
		}
	}
	return nil
}

// hostFSClient is a plugin's HostFS: every call goes to the host.
type hostFSClient struct {
	client pb.HostFSClient
}

func (c *hostFSClient) Stat(ctx context.Context, path string) (shared.FileInfo, error) {
	resp, err := c.client.Stat(ctx, &pb.PathRequest{Path: path})
	if err != nil {
		return shared.FileInfo{}, fsErrorFromStatus("stat", path, err)
	}
	return fileInfoFromProto(resp.GetInfo()), nil
}

func (c *hostFSClient) Resolve(ctx context.Context, path string) (string, error) {
	resp, err := c.client.Resolve(ctx, &pb.PathRequest{Path: path})
	if err != nil {
		return "", fsErrorFromStatus("resolve", path, err)
	}
	return resp.GetPath(), nil
}

func (c *hostFSClient) ReadDir(ctx context.Context, path string) ([]shared.DirEntry, error) {
	resp, err := c.client.ReadDir(ctx, &pb.PathRequest{Path: path})
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
	resp, err := c.client.ReadFile(ctx, &pb.ReadFileRequest{Path: path, MaxBytes: max})
	if err != nil {
		return nil, fsErrorFromStatus("read", path, err)
	}
	return resp.GetData(), nil
}

func (c *hostFSClient) ReadFiles(ctx context.Context, paths []string, max int64) ([]shared.FileContent, error) {
	stream, err := c.client.ReadFiles(ctx, &pb.ReadFilesRequest{Paths: paths, MaxBytes: max})
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
