package shared

import (
	"context"
	"errors"
	"fmt"
	"io"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// providerClient is the host side of the Provider service.
type providerClient struct {
	client pb.ProviderClient
	broker *goplugin.GRPCBroker
}

func (c *providerClient) Describe(ctx context.Context) (ProviderInfo, error) {
	resp, err := c.client.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return ProviderInfo{}, err
	}
	return ProviderInfo{
		Name:         resp.GetName(),
		Version:      resp.GetVersion(),
		Priority:     int(resp.GetPriority()),
		Capabilities: resp.GetCapabilities(),
	}, nil
}

// Discover serves fsys to the plugin through the broker for the length of the
// call, then streams the plugin's findings into sink.
func (c *providerClient) Discover(ctx context.Context, req DiscoverRequest, fsys HostFS, sink Sink) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	id := c.broker.NextId()
	served := make(chan *grpc.Server, 1)
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		c.broker.AcceptAndServe(id, func(opts []grpc.ServerOption) *grpc.Server {
			s := grpc.NewServer(opts...)
			pb.RegisterHostFSServer(s, &hostFSServer{fs: fsys})
			served <- s
			return s
		})
	}()
	defer func() {
		// AcceptAndServe creates the HostFS server as soon as its listener is
		// open, whether or not the plugin ever connects, and serves until the
		// whole client closes. Stop it here, waiting for it to exist if this
		// call ended first (e.g. a cancelled context), unless Accept failed.
		select {
		case s := <-served:
			s.Stop()
		case <-acceptDone:
		}
	}()

	stream, err := c.client.Discover(ctx, &pb.DiscoverRequest{
		Cwd:            req.Cwd,
		Home:           req.Home,
		WorkspaceRoot:  req.WorkspaceRoot,
		HostFsBrokerId: id,
	})
	if err != nil {
		return err
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch item := msg.GetItem().(type) {
		case *pb.DiscoverResponse_Rule:
			err = sink.Rule(ruleFromProto(item.Rule))
		case *pb.DiscoverResponse_Warning:
			err = sink.Warning(Warning{Path: item.Warning.GetPath(), Message: item.Warning.GetMessage()})
		default:
			err = sink.Warning(Warning{Message: "provider sent an empty or unknown stream item; ignored"})
		}
		if err != nil {
			return err
		}
	}
}

// providerServer is the plugin side of the Provider service.
type providerServer struct {
	pb.UnimplementedProviderServer
	impl   Provider
	broker *goplugin.GRPCBroker
}

func (s *providerServer) Describe(ctx context.Context, _ *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	info, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, err
	}
	return &pb.DescribeResponse{
		Name:         info.Name,
		Version:      info.Version,
		Priority:     int32(info.Priority),
		Capabilities: info.Capabilities,
	}, nil
}

func (s *providerServer) Discover(req *pb.DiscoverRequest, stream grpc.ServerStreamingServer[pb.DiscoverResponse]) error {
	conn, err := s.broker.Dial(req.GetHostFsBrokerId())
	if err != nil {
		return fmt.Errorf("connect to the host's filesystem: %w", err)
	}
	defer conn.Close()
	fsys := &hostFSClient{client: pb.NewHostFSClient(conn)}
	return s.impl.Discover(stream.Context(), DiscoverRequest{
		Cwd:           req.GetCwd(),
		Home:          req.GetHome(),
		WorkspaceRoot: req.GetWorkspaceRoot(),
	}, fsys, streamSink{stream})
}

// streamSink sends each finding as its own message.
type streamSink struct {
	stream grpc.ServerStreamingServer[pb.DiscoverResponse]
}

func (s streamSink) Rule(r Rule) error {
	return s.stream.Send(&pb.DiscoverResponse{Item: &pb.DiscoverResponse_Rule{Rule: ruleToProto(r)}})
}

func (s streamSink) Warning(w Warning) error {
	return s.stream.Send(&pb.DiscoverResponse{Item: &pb.DiscoverResponse_Warning{
		Warning: &pb.Warning{Path: w.Path, Message: w.Message},
	}})
}
