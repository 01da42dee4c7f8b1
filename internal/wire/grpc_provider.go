package wire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// providerClient is the host side of the Provider service.
type providerClient struct {
	client pb.ProviderClient
	broker *goplugin.GRPCBroker
	limits HostFSLimits // for the HostFS it serves during Discover
	failed func(error)  // see Config.HostFSFailed

	// turn lets one Discover call at a time serve the HostFS: a host calls
	// a provider one call at a time anyway, and the server answers only the
	// call in progress.
	turn    chan struct{}
	fsMu    sync.Mutex
	hostFS  *hostFSService // nil until the first Discover, or once closed
	closed  bool
	fsConns atomic.Int64 // see Client.HostFSConnections

	// sessions is set when the provider serves Session (see session.go);
	// session is the one open, if any, guarded by fsMu; sessionsOpened
	// counts them over the connection's life.
	sessions       atomic.Bool
	session        *discoverSession
	sessionsOpened atomic.Int64
}

func newProviderClient(c *grpc.ClientConn, broker *goplugin.GRPCBroker) *providerClient {
	return &providerClient{client: pb.NewProviderClient(c), broker: broker, turn: make(chan struct{}, 1)}
}

// hostFSFor returns the HostFS server, brokering it on first use, or anew
// when a call needs a larger send limit than the one it has.
func (c *providerClient) hostFSFor(maxReadBytes int64) (*hostFSService, error) {
	c.fsMu.Lock()
	defer c.fsMu.Unlock()
	if c.closed {
		return nil, &Error{Kind: ErrCrashed, Op: "discover", Detail: "the provider connection is closed"}
	}
	if c.hostFS != nil && c.hostFS.sendCap >= maxReadBytes {
		return c.hostFS, nil
	}
	if c.hostFS != nil {
		c.hostFS.stop()
	}
	c.hostFS = startHostFS(c.broker, maxReadBytes, &c.fsConns)
	return c.hostFS, nil
}

// dropHostFS stops h, a server with a request that would not end, so that
// the request ends; the next call brokers a new server.
func (c *providerClient) dropHostFS(h *hostFSService) {
	c.fsMu.Lock()
	defer c.fsMu.Unlock()
	h.stop()
	if c.hostFS == h {
		c.hostFS = nil
	}
}

// closeHostFS stops the HostFS server for good.
func (c *providerClient) closeHostFS() {
	c.fsMu.Lock()
	defer c.fsMu.Unlock()
	c.closed = true
	if c.session != nil {
		c.session.cancel()
		c.session = nil
	}
	if c.hostFS != nil {
		c.hostFS.stop()
		c.hostFS = nil
	}
}

func (c *providerClient) Describe(ctx context.Context) (shared.ProviderInfo, error) {
	resp, err := c.client.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return shared.ProviderInfo{}, callError(ctx, "describe", err)
	}
	info := shared.ProviderInfo{
		Name:     resp.GetName(),
		Version:  resp.GetVersion(),
		Priority: int(resp.GetPriority()),
	}
	// A host only looks for the capabilities it knows, so the list is cut
	// to a sane size rather than refused. The wire's own is the wire's
	// business, not the host's.
	for _, name := range resp.GetCapabilities() {
		if name == sessionCapability {
			c.sessions.Store(true)
			continue
		}
		if len(info.Capabilities) == maxCapabilities {
			continue
		}
		if len(name) <= maxCapabilityBytes {
			info.Capabilities = append(info.Capabilities, name)
		}
	}
	return info, nil
}

// maxCapabilities and maxCapabilityBytes bound what the host keeps of a
// provider's capability list.
const (
	maxCapabilities    = 32
	maxCapabilityBytes = 64
)

// hostFSServerOptions bound what the HostFS server accepts and sends: a
// request is small, an answer is at most one file of the per-file cap (the
// handlers clamp every read to it) or one directory listing.
func hostFSServerOptions(maxReadBytes int64, failed func(context.Context, error)) []grpc.ServerOption {
	return append(windowServerOptions(),
		grpc.MaxRecvMsgSize(RequestBytes),
		grpc.MaxSendMsgSize(max(MessageBytes(maxReadBytes), ListingBytes+MetadataBytes)),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
			err := handler(srv, ss)
			if err != nil && !isFSStatus(err) {
				failed(ss.Context(), err)
			}
			return err
		}),
	)
}

// isFSStatus reports an error that carries a file's error for the plugin
// (statusFromFSError), as opposed to a failure of the call itself.
func isFSStatus(err error) bool {
	st, ok := status.FromError(err)
	if !ok {
		return false
	}
	for _, d := range st.Details() {
		if _, ok := d.(*pb.Error); ok {
			return true
		}
	}
	return false
}

// Discover serves fsys to the plugin through the provider connection's
// HostFS server for the length of the call, then streams the plugin's
// findings into sink.
func (c *providerClient) Discover(ctx context.Context, req shared.DiscoverRequest, fsys shared.HostFS, sink shared.Sink) error {
	select {
	case c.turn <- struct{}{}:
		defer func() { <-c.turn }()
	case <-ctx.Done():
		return callError(ctx, "discover", ctx.Err())
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	limits := c.limits
	if limits.MaxReadBytes <= 0 {
		limits.MaxReadBytes = req.MaxRuleBytes
	}
	if limits.MaxReadBytes <= 0 {
		limits.MaxReadBytes = shared.DefaultMaxRuleBytes
	}
	hostFS, err := c.hostFSFor(limits.MaxReadBytes)
	if err != nil {
		return err
	}
	failed := c.failed
	if failed == nil {
		failed = func(error) {}
	}
	gen, end := hostFS.begin(ctx, fsys, limits, failed)
	defer func() {
		if !end() {
			c.dropHostFS(hostFS)
		}
	}()
	call := strconv.FormatUint(gen, 10)

	// What does not fit is left out; the provider asks the host for it.
	prefetch, _ := prefetchToProto(req.Prefetch, PrefetchBytes)
	pbReq := &pb.DiscoverRequest{
		Cwd:            req.Cwd,
		Home:           req.Home,
		WorkspaceRoot:  req.WorkspaceRoot,
		HostFsBrokerId: hostFS.id,
		Activation:     string(req.Activation),
		ExtraDirs:      req.ExtraDirs,
		MaxRuleBytes:   req.MaxRuleBytes,
		Prefetch:       prefetch,
		AcceptBatches:  true,
	}
	if c.sessions.Load() {
		pbReq.Call = call
		err := c.discoverInSession(ctx, pbReq, sink)
		if !errors.Is(err, errNoSession) {
			return err
		}
		// It named the capability yet serves no Session: plain calls from
		// now on, this discovery first.
		c.sessions.Store(false)
		pbReq.Call, pbReq.TimeoutMillis = "", 0
	}
	ctx = withCall(ctx, call)
	stream, err := c.client.Discover(ctx, pbReq, findingsCallOptions(req.MaxRuleBytes)...)
	if err != nil {
		return callError(ctx, "discover", err)
	}
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return callError(ctx, "discover", err)
		}
		if err := deliverAll(msg, sink); err != nil {
			return err
		}
	}
}

// deliverAll hands the findings of one message to sink: the message's one,
// or each of its batch.
func deliverAll(msg *pb.DiscoverResponse, sink shared.Sink) error {
	return deliverItems(itemsOf(msg), sink)
}

// itemsOf is what one message carries: itself, or the items of its batch.
func itemsOf(msg *pb.DiscoverResponse) []*pb.DiscoverResponse {
	if batch, ok := msg.GetItem().(*pb.DiscoverResponse_Batch); ok {
		return batch.Batch.GetItems()
	}
	return []*pb.DiscoverResponse{msg}
}

// deliverItems hands items, one message's, to sink; none at all is an
// empty batch.
func deliverItems(items []*pb.DiscoverResponse, sink shared.Sink) error {
	if len(items) == 0 {
		return sink.Warning(shared.Warning{Message: emptyBatch})
	}
	for _, item := range items {
		if err := deliver(item, sink); err != nil {
			return err
		}
	}
	return nil
}

// emptyBatch is the warning the host makes of a batch without items; the
// host's caps count it like any, so a stream of them ends.
const emptyBatch = "provider sent an empty batch; ignored"

// deliver hands one finding to sink. A batch inside a batch is not one.
func deliver(msg *pb.DiscoverResponse, sink shared.Sink) error {
	switch item := msg.GetItem().(type) {
	case *pb.DiscoverResponse_Rule:
		return sink.Rule(ruleFromProto(item.Rule))
	case *pb.DiscoverResponse_Warning:
		return sink.Warning(shared.Warning{Path: item.Warning.GetPath(), Message: item.Warning.GetMessage()})
	case *pb.DiscoverResponse_Batch:
		return sink.Warning(shared.Warning{Message: "provider sent a batch inside a batch; ignored"})
	case *pb.DiscoverResponse_Done:
		return sink.Warning(shared.Warning{Message: "provider sent the end of a session's discovery inside a batch or outside a session; ignored"})
	default:
		return sink.Warning(shared.Warning{Message: "provider sent an empty or unknown stream item; ignored"})
	}
}

// providerServer is the plugin side of the Provider service.
type providerServer struct {
	pb.UnimplementedProviderServer
	impl   shared.Provider
	broker *goplugin.GRPCBroker
	hostFS hostFSDial // kept across Discover calls
}

func (s *providerServer) Describe(ctx context.Context, _ *pb.DescribeRequest) (*pb.DescribeResponse, error) {
	info, err := s.impl.Describe(ctx)
	if err != nil {
		return nil, err
	}
	if info.Priority < math.MinInt32 || info.Priority > math.MaxInt32 {
		// The protocol carries an int32; a wrapped value would rank the
		// provider somewhere it never asked to be.
		return nil, fmt.Errorf("priority %d does not fit the protocol's 32 bits", info.Priority)
	}
	return &pb.DescribeResponse{
		Name:         info.Name,
		Version:      info.Version,
		Priority:     int32(info.Priority),
		Capabilities: append(slices.Clip(info.Capabilities), sessionCapability),
	}, nil
}

func (s *providerServer) Discover(req *pb.DiscoverRequest, stream grpc.ServerStreamingServer[pb.DiscoverResponse]) error {
	return s.discover(stream.Context(), req, callOfDiscover(stream.Context()), stream, false)
}

// discover runs one discovery for req, whose HostFS reads go out as call
// call, and sends its findings on stream. In a session (inSession), how the
// discovery ended goes as a Done after the findings, and the error returned
// is only the stream's own; otherwise the discovery's error is returned, for
// gRPC to end the call with.
func (s *providerServer) discover(ctx context.Context, req *pb.DiscoverRequest, call string, stream findingSender, inSession bool) error {
	sink := newStreamSink(stream, MessageBytes(req.GetMaxRuleBytes()), req.GetAcceptBatches())
	conn, err := s.hostFS.get(s.broker, req.GetHostFsBrokerId(), req.GetMaxRuleBytes())
	if err != nil {
		return sink.endWith(fmt.Errorf("connect to the host's filesystem: %w", err), inSession)
	}
	fsys := &hostFSClient{client: pb.NewHostFSClient(conn), call: call}
	err = s.impl.Discover(ctx, shared.DiscoverRequest{
		Cwd:           req.GetCwd(),
		Home:          req.GetHome(),
		WorkspaceRoot: req.GetWorkspaceRoot(),
		Activation:    shared.ActivationMode(req.GetActivation()),
		ExtraDirs:     req.GetExtraDirs(),
		MaxRuleBytes:  req.GetMaxRuleBytes(),
		Prefetch:      prefetchFromProto(req.GetPrefetch()),
	}, fsys, sink)
	return sink.endWith(err, inSession)
}

// streamSink sends the provider's findings to the host: batched when the
// host accepts batches, else each as its own message. It keeps the stream
// alive whatever a provider hands it: a string that is not UTF-8 would make
// gRPC fail the whole stream, and so would a message over the host's limit,
// so each is turned into something the host accepts plus a warning naming
// the file.
type streamSink struct {
	stream findingSender
	limit  int // the host's receive limit for one message

	// mu orders the sends: a batch also goes when its timer fires.
	mu sync.Mutex
	// batch holds the findings not sent yet and size their size in it;
	// nil when the host takes one finding per message. timer sends it
	// delay after its first finding.
	batch *pb.Batch
	size  int
	delay time.Duration
	timer *time.Timer
	// err is what later calls return: the send that failed, or
	// errDiscoveryOver once the stream is done.
	err error
}

// errDiscoveryOver is what a provider gets for a finding it hands over after
// its Discover returned.
var errDiscoveryOver = errors.New("the discovery is over; the finding was not sent")

// findingSender is the part of the Discover stream a streamSink uses.
type findingSender interface {
	Send(*pb.DiscoverResponse) error
}

func newStreamSink(stream findingSender, limit int, batched bool) *streamSink {
	s := &streamSink{stream: stream, limit: limit, delay: batchDelay}
	if batched {
		s.batch = &pb.Batch{}
	}
	return s
}

// maxWarningBytes bounds a warning's message, and a failed session
// discovery's; a longer one is cut.
const maxWarningBytes = 16 << 10

// batchBytes is the size at which a batch is sent: large enough that a
// discovery of thousands of small rules is a handful of messages, small
// enough that the provider never holds much more than one rule's worth.
// batchDelay is the longest a finding waits in a batch, so that what a
// provider found before it hangs reaches the host before the host gives up
// on it, as it would unbatched; a discovery that takes less is one message.
const (
	batchBytes = 256 << 10
	batchDelay = 20 * time.Millisecond
)

func (s *streamSink) Rule(r shared.Rule) error {
	r, repaired := repairRule(r)
	if len(repaired) > 0 {
		if err := s.Warning(shared.Warning{Path: r.Path, Message: fmt.Sprintf(
			"rule %q: %s not valid UTF-8; each invalid byte was replaced with U+FFFD", r.Name, strings.Join(repaired, ", "))}); err != nil {
			return err
		}
	}
	msg := &pb.DiscoverResponse{Item: &pb.DiscoverResponse_Rule{Rule: ruleToProto(r)}}
	n := proto.Size(msg)
	if n > s.limit {
		return s.Warning(shared.Warning{Path: r.Path, Message: fmt.Sprintf(
			"rule %q not sent: it is %d bytes on the wire, over the host's limit of %d (the per-rule cap plus %d for metadata)",
			r.Name, n, s.limit, MetadataBytes)})
	}
	return s.send(msg, n)
}

func (s *streamSink) Warning(w shared.Warning) error {
	item := &pb.DiscoverResponse{Item: &pb.DiscoverResponse_Warning{
		Warning: &pb.Warning{Path: cut(w.Path, maxWarningPathBytes), Message: cut(w.Message, maxWarningBytes)},
	}}
	return s.send(item, proto.Size(item))
}

// maxWarningPathBytes bounds a warning's path; no real path comes near it
// (PATH_MAX is 4 KiB), and with the message's bound it keeps a warning well
// inside the room a message has beyond a rule (MetadataBytes), so a warning
// always reaches the host.
const maxWarningPathBytes = 8 << 10

// cut returns text as valid UTF-8 of at most about max bytes, saying so when
// it was cut.
func cut(text string, max int) string {
	text = strings.ToValidUTF8(text, "\uFFFD")
	if len(text) > max {
		text = strings.ToValidUTF8(text[:max], "") + " … (cut)"
	}
	return text
}

// send adds item, of n bytes, to the batch, sending the batch first when
// it is full (maxBatchItems) or item would take it past batchBytes or the
// host's limit. An item too large to fit a batch even alone goes as a
// message of its own, which every host accepts.
func (s *streamSink) send(item *pb.DiscoverResponse, n int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	return s.sendLocked(item, n)
}

// sendLocked is send with s.mu held.
func (s *streamSink) sendLocked(item *pb.DiscoverResponse, n int) error {
	if s.batch == nil {
		return s.stream.Send(item)
	}
	grow := protowire.SizeTag(1) + protowire.SizeBytes(n) // item as an element of Batch.items
	if held := len(s.batch.Items); held > 0 && (held == maxBatchItems || s.size+grow > batchBytes || batchMessageBytes(s.size+grow) > s.limit) {
		if err := s.flushLocked(); err != nil {
			return err
		}
	}
	if batchMessageBytes(grow) > s.limit {
		return s.stream.Send(item)
	}
	if len(s.batch.Items) == 0 {
		batch := s.batch
		s.timer = time.AfterFunc(s.delay, func() { s.flushBatch(batch) })
	}
	s.batch.Items = append(s.batch.Items, item)
	s.size += grow
	return nil
}

// batchMessageBytes is the size of a DiscoverResponse holding a batch of
// items of n bytes.
func batchMessageBytes(n int) int {
	return protowire.SizeTag(3) + protowire.SizeBytes(n)
}

// flushBatch sends batch if it is still the one waiting: a timer that fired
// as its batch was being sent must not send the next one early.
func (s *streamSink) flushBatch(batch *pb.Batch) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && s.batch == batch {
		s.flushLocked()
	}
}

// endWith ends the discovery, which ended with err: it sends what the batch
// holds (what was found before a failure goes too, as it would unbatched)
// and refuses later findings, since the stream must not be used for them
// once the discovery returned. In a session it also sends the Done, in the
// batch when there is one, and returns only the stream's error; otherwise
// it returns err, else the stream's.
func (s *streamSink) endWith(err error, inSession bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	sendErr := s.err
	if sendErr == nil && inSession {
		done := doneOf(err)
		sendErr = s.sendLocked(done, proto.Size(done))
	}
	if sendErr == nil {
		sendErr = s.flushLocked()
	}
	s.err = errDiscoveryOver
	if inSession || err == nil {
		return sendErr
	}
	return err
}

// flushLocked sends the batch, with s.mu held. gRPC may still read a
// message after Send returns, so the next batch is a new one.
func (s *streamSink) flushLocked() error {
	if s.batch == nil || len(s.batch.Items) == 0 {
		return nil
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	msg := &pb.DiscoverResponse{Item: &pb.DiscoverResponse_Batch{Batch: s.batch}}
	s.batch, s.size = &pb.Batch{Items: make([]*pb.DiscoverResponse, 0, len(s.batch.Items))}, 0
	s.err = s.stream.Send(msg)
	return s.err
}
