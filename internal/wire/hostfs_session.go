package wire

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// A provider connection keeps one HostFS server, brokered once, for its
// whole life, and the plugin keeps its connection to it: setting up a
// listener, a socket and a connection for every Discover call cost more than
// the rest of a live broker's round together. What belongs to one Discover
// call — the filesystem served (the host records what each call read), the
// limits, the call's cancellation — is switched per call instead, and every
// HostFS request names the call it serves with callKey in its gRPC
// metadata. The host answers a request only for the call in progress, so a
// plugin that kept a filesystem past the end of its Discover call cannot
// read through the next call's.
const callKey = "rulebroker-hostfs-call"

// errCallEnded is the host's answer to a HostFS request whose Discover call
// is over (or that names none).
var errCallEnded = errors.New("the Discover call this filesystem was handed to has ended; the host serves each call's filesystem only during the call")

// hostFSService is a provider connection's one HostFS server.
type hostFSService struct {
	id      uint32
	sendCap int64         // the per-file cap its send limit was set for
	served  chan struct{} // closed once server is set
	done    chan struct{} // closed when the broker stopped serving it
	server  *grpc.Server  // set before served is closed

	conns *atomic.Int64 // connections the plugin opened, counted per provider connection

	mu  sync.Mutex
	gen uint64 // the number of the last call begun
	cur *hostFSCall
}

// hostFSCall is what one Discover call serves.
type hostFSCall struct {
	gen    uint64
	fs     shared.HostFS
	limits HostFSLimits
	failed func(error)
	ctx    context.Context // ends when the call does
	active sync.WaitGroup  // requests being answered for it
	// inflight counts the same requests, for a look without waiting.
	inflight atomic.Int64
}

// startHostFS brokers a HostFS server whose messages fit files of sendCap
// bytes. It serves nothing until a call begins.
func startHostFS(broker *goplugin.GRPCBroker, sendCap int64, conns *atomic.Int64) *hostFSService {
	h := &hostFSService{id: broker.NextId(), sendCap: sendCap, conns: conns, served: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		broker.AcceptAndServe(h.id, func(opts []grpc.ServerOption) *grpc.Server {
			opts = append(opts, hostFSServerOptions(sendCap, h.noteFailure)...)
			opts = append(opts, grpc.StatsHandler(connCounter{h}))
			s := grpc.NewServer(opts...)
			pb.RegisterHostFSServer(s, &hostFSServer{calls: h})
			h.server = s
			close(h.served)
			return s
		})
	}()
	return h
}

// stop stops the server, waiting for it to exist if the broker has not
// created it yet (it does as soon as its listener is open), unless the
// broker failed to open one.
func (h *hostFSService) stop() {
	select {
	case <-h.served:
		h.server.Stop()
	case <-h.done:
	}
}

// endGrace bounds how long the end of a Discover call waits for the
// requests still being answered for it, after cancelling them.
const endGrace = 500 * time.Millisecond

// begin makes fsys the filesystem served, for the call whose context is
// ctx, and returns the call's number for the plugin and the function that
// ends the call. end refuses the call's further requests, cancels those in
// progress and waits for them (within endGrace), so nothing reaches the
// call's filesystem after it; it reports false when one was still running,
// which only stopping the server can end (e.g. a send to a plugin that
// stopped reading).
func (h *hostFSService) begin(ctx context.Context, fsys shared.HostFS, limits HostFSLimits, failed func(error)) (uint64, func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	h.mu.Lock()
	h.gen++
	call := &hostFSCall{gen: h.gen, fs: fsys, limits: limits, failed: failed, ctx: ctx}
	h.cur = call
	h.mu.Unlock()
	return call.gen, func() bool {
		h.mu.Lock()
		if h.cur == call {
			h.cur = nil
		}
		h.mu.Unlock()
		cancel()
		// No request can enter any more; most calls end with none running,
		// and need not wait for a goroutine to say so.
		if call.inflight.Load() == 0 {
			return true
		}
		idle := make(chan struct{})
		go func() {
			call.active.Wait()
			close(idle)
		}()
		t := time.NewTimer(endGrace)
		defer t.Stop()
		select {
		case <-idle:
			return true
		case <-t.C:
			return false
		}
	}
}

// callOf returns the call a request names, if it is the one in progress.
// The caller must hold h.mu.
func (h *hostFSService) callOf(ctx context.Context) *hostFSCall {
	md, _ := metadata.FromIncomingContext(ctx)
	v := md.Get(callKey)
	if len(v) != 1 || h.cur == nil {
		return nil
	}
	gen, err := strconv.ParseUint(v[0], 10, 64)
	if err != nil || gen != h.cur.gen {
		return nil
	}
	return h.cur
}

// enter admits a request for the call in progress: it returns the call, the
// request's context (which also ends with the call) and the function to call
// when the request is answered. A request for any other call is refused.
func (h *hostFSService) enter(ctx context.Context) (*hostFSCall, context.Context, func(), error) {
	h.mu.Lock()
	call := h.callOf(ctx)
	if call == nil {
		h.mu.Unlock()
		return nil, nil, nil, status.Error(codes.FailedPrecondition, errCallEnded.Error())
	}
	call.active.Add(1)
	call.inflight.Add(1)
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	unhook := context.AfterFunc(call.ctx, cancel)
	return call, ctx, func() {
		unhook()
		cancel()
		call.inflight.Add(-1)
		call.active.Done()
	}, nil
}

// noteFailure passes a request's transport failure to the call it served,
// when that call is still in progress: a refused request from an ended call
// is no failure of the current one.
func (h *hostFSService) noteFailure(ctx context.Context, err error) {
	h.mu.Lock()
	call := h.callOf(ctx)
	h.mu.Unlock()
	if call != nil && call.failed != nil {
		call.failed(err)
	}
}

// connCounter counts the connections the plugin opens to the server.
type connCounter struct{ h *hostFSService }

func (c connCounter) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (c connCounter) HandleRPC(context.Context, stats.RPCStats)                         {}
func (c connCounter) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (c connCounter) HandleConn(_ context.Context, s stats.ConnStats) {
	if _, ok := s.(*stats.ConnBegin); ok {
		c.h.conns.Add(1)
	}
}

// withCall returns ctx carrying the call number gen for the host.
func withCall(ctx context.Context, gen string) context.Context {
	if gen == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, callKey, gen)
}

// callOfDiscover is the call number the host sent with a Discover request.
func callOfDiscover(ctx context.Context) string {
	md, _ := metadata.FromIncomingContext(ctx)
	if v := md.Get(callKey); len(v) == 1 {
		return v[0]
	}
	return ""
}

// hostFSDial is the plugin's connection to the host's HostFS server, kept
// across Discover calls. The host sends the same broker id each time; a new
// id (the host replaced its server) replaces the connection.
type hostFSDial struct {
	mu      sync.Mutex
	id      uint32
	maxRule int64
	conn    *grpc.ClientConn
}

// get returns the connection to the server with broker id id, dialing it
// when it is not the one held.
func (d *hostFSDial) get(broker *goplugin.GRPCBroker, id uint32, maxRuleBytes int64) (*grpc.ClientConn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != nil && d.id == id && d.maxRule == maxRuleBytes {
		return d.conn, nil
	}
	conn, err := broker.DialWithOptions(id, append(windowDialOptions(), grpc.WithDefaultCallOptions(callLimits(maxRuleBytes)...))...)
	if err != nil {
		return nil, err
	}
	if d.conn != nil {
		d.conn.Close()
	}
	d.id, d.maxRule, d.conn = id, maxRuleBytes, conn
	return conn, nil
}

// HostFSConnections counts the connections the provider opened to the
// host's filesystem server over the client's life: one, however many
// Discover calls it answered, unless the connection had to be replaced.
func (c *Client) HostFSConnections() int {
	if p, ok := c.Provider.(*providerClient); ok {
		return int(p.fsConns.Load())
	}
	return 0
}
