package wire

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// A live host re-runs Discover on a running provider after every change it
// sees, and for a small change, setting up the call (a new HTTP/2 stream, its
// headers both ways, a fresh handler goroutine whose stack grows again) cost
// the two processes more than the discovery itself. A provider that names
// sessionCapability keeps one Session stream open instead, and each
// discovery is a request on it, answered by the findings and a Done.
const sessionCapability = "discover-session"

// discoverSession is the host's end of an open Session stream.
type discoverSession struct {
	stream  grpc.BidiStreamingClient[pb.DiscoverRequest, pb.DiscoverResponse]
	maxRule int64 // the per-rule cap its receive limit was set for
	cancel  context.CancelFunc
}

// openSession returns the open session, or opens one whose receive limit
// fits rules of maxRule bytes. The session does not end with any one
// discovery's context, only when it is dropped or the connection closes;
// ctx, the discovery's, bounds only the opening, which waits when the
// provider allows no more streams. A caller holds the connection's turn, so
// no two open one at once.
func (c *providerClient) openSession(ctx context.Context, maxRule int64) (s *discoverSession, fresh bool, err error) {
	c.fsMu.Lock()
	old := c.session
	closed := c.closed
	c.fsMu.Unlock()
	if closed {
		return nil, false, &Error{Kind: ErrCrashed, Op: "discover", Detail: "the provider connection is closed"}
	}
	if old != nil && old.maxRule == maxRule {
		return old, false, nil
	}
	if old != nil {
		c.dropSession(old)
	}
	sessCtx, cancel := context.WithCancel(context.Background())
	stop := context.AfterFunc(ctx, cancel)
	stream, err := c.client.Session(sessCtx, findingsCallOptions(maxRule)...)
	if !stop() && err == nil {
		err = ctx.Err() // the stream may be cancelled already
	}
	if err != nil {
		cancel()
		return nil, false, err
	}
	s = &discoverSession{stream: stream, maxRule: maxRule, cancel: cancel}
	c.fsMu.Lock()
	defer c.fsMu.Unlock()
	if c.closed { // closed while opening
		cancel()
		return nil, false, &Error{Kind: ErrCrashed, Op: "discover", Detail: "the provider connection is closed"}
	}
	c.session = s
	c.sessionsOpened.Add(1)
	return s, true, nil
}

// errNoSession is discoverInSession's answer when the provider turned out
// not to serve Session, though it named the capability: the discovery runs
// again as a Discover call.
var errNoSession = errors.New("the provider does not serve Session")

// dropSession ends s, so that the next discovery opens a new one.
func (c *providerClient) dropSession(s *discoverSession) {
	s.cancel()
	c.fsMu.Lock()
	defer c.fsMu.Unlock()
	if c.session == s {
		c.session = nil
	}
}

// discoverInSession runs one discovery on the provider's session, opening
// one when none is open. Anything but a clean Done — a failed stream, the
// discovery's context ending, a sink that refuses a finding — ends the
// session, since the provider may still be sending that discovery's
// findings; the next discovery opens a new one.
func (c *providerClient) discoverInSession(ctx context.Context, req *pb.DiscoverRequest, sink shared.Sink) error {
	s, fresh, err := c.openSession(ctx, req.GetMaxRuleBytes())
	if err != nil {
		return callError(ctx, "discover", err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		req.TimeoutMillis = max(time.Until(deadline).Milliseconds(), 1)
	}
	clean := false
	defer func() {
		if !clean {
			c.dropSession(s)
		}
	}()
	// The discovery's context bounds the wait: ending the session is the
	// only way to stop a discovery in progress.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()

	// ended is the error of a stream that failed; a fresh one that fails
	// as unimplemented before any answer is a provider without Session.
	ended := func(err error, received bool) error {
		if fresh && !received && status.Code(err) == codes.Unimplemented {
			return errNoSession
		}
		return callError(ctx, "discover", sessionEnded(err))
	}
	if err := s.stream.Send(req); err != nil {
		if errors.Is(err, io.EOF) { // the stream ended; Recv has why
			_, err = s.stream.Recv()
		}
		return ended(err, false)
	}
	for received := false; ; received = true {
		msg, err := s.stream.Recv()
		if err != nil {
			return ended(err, received)
		}
		// The Done ends a message, alone or as the last item of a batch.
		items := itemsOf(msg)
		var done *pb.Done
		if n := len(items); n > 0 {
			if d, ok := items[n-1].GetItem().(*pb.DiscoverResponse_Done); ok {
				done, items = d.Done, items[:n-1]
			}
		}
		if done == nil || len(items) > 0 {
			if err := deliverItems(items, sink); err != nil {
				return err
			}
		}
		if done == nil {
			continue
		}
		clean = stop() // false when the context ended meanwhile: the session may be cancelled
		if code := codes.Code(done.GetCode()); code != codes.OK {
			return callError(ctx, "discover", status.Error(code, done.GetMessage()))
		}
		return nil
	}
}

// sessionEnded is the error of a session stream that ended: a provider that
// closes its end between discoveries has stopped serving them.
func sessionEnded(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return status.Error(codes.Unavailable, "the provider ended its discovery session")
	}
	return err
}

// Session serves discoveries one after another on one stream, each
// answered by its findings and a Done carrying how it ended; the Done goes
// as the last item of the last batch when the host takes batches, so that
// a small discovery is one message.
func (s *providerServer) Session(stream grpc.BidiStreamingServer[pb.DiscoverRequest, pb.DiscoverResponse]) error {
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		ctx, cancel := stream.Context(), context.CancelFunc(func() {})
		if ms := req.GetTimeoutMillis(); ms > 0 {
			ctx, cancel = context.WithTimeout(ctx, time.Duration(ms)*time.Millisecond)
		}
		err = s.discover(ctx, req, req.GetCall(), stream, true)
		cancel()
		if err != nil {
			return err
		}
	}
}

// doneOf is the Done of a discovery that ended with err, which gRPC would
// have reported as a handler's: its status, else the status of a context
// error, else Unknown.
func doneOf(err error) *pb.DiscoverResponse {
	st, ok := status.FromError(err)
	if !ok {
		st = status.FromContextError(err)
	}
	return &pb.DiscoverResponse{Item: &pb.DiscoverResponse_Done{Done: &pb.Done{Code: uint32(st.Code()), Message: cut(st.Message(), maxWarningBytes)}}}
}
