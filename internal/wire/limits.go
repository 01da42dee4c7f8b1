package wire

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/shared"
)

// Message limits. gRPC refuses, on the receiving side, any message larger
// than its receive limit (4 MiB unless set), and sends without a limit unless
// one is set. Both sides set both limits explicitly:
//
//   - A rule or a file is the largest thing that crosses the wire, and it is
//     one message: a Discover stream item, a ReadFile answer or one file of a
//     ReadFiles stream. The limit for those is the host's per-rule cap
//     (DiscoverRequest.MaxRuleBytes, shared.DefaultMaxRuleBytes when unset)
//     plus MetadataBytes for the path, the name and the other fields, so a
//     rule of exactly the cap is accepted and nothing much larger is.
//   - Requests (Describe, Discover, Stat, ReadDir, a ReadFiles batch) are
//     small: RequestBytes bounds them. The plugin SDK splits a batch so that
//     its names stay under BatchNameBytes, well inside RequestBytes.
//   - A directory listing is one ReadDir answer, which the protocol cannot
//     page: ListingBytes bounds it (about 65,000 names of the longest kind,
//     far more of usual ones). A larger directory fails to list, with an
//     error that says so, rather than breaking the connection.
const (
	// MetadataBytes is the room a message gets beyond the per-rule cap:
	// a path (PATH_MAX is 4 KiB), a name, globs, conditions, an error text.
	MetadataBytes = 64 << 10
	// RequestBytes bounds every request message, either way.
	RequestBytes = 4 << 20
	// BatchNameBytes bounds the total length of the paths one ReadFiles
	// request names.
	BatchNameBytes = 1 << 20
	// ListingBytes bounds one ReadDir answer.
	ListingBytes = 16 << 20
)

// WindowBytes is the HTTP/2 flow-control window of every connection between
// host and provider, each way. Setting it turns off gRPC's bandwidth
// estimation, which answers every burst of data with a window update and a
// ping: on a local socket it has nothing to learn, and each ping wakes the
// other process, about a tenth of the time of a live round that re-runs one
// provider. The estimation would grow the window to 16 MiB at most; a fixed
// window of the default per-rule cap lets a default-size rule through
// without waiting, and a larger message still passes, in steps.
const WindowBytes = 4 << 20

// windowDialOptions and windowServerOptions set WindowBytes on a client's
// and on a server's connections.
func windowDialOptions() []grpc.DialOption {
	return []grpc.DialOption{grpc.WithInitialWindowSize(WindowBytes), grpc.WithInitialConnWindowSize(WindowBytes)}
}

func windowServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{grpc.InitialWindowSize(WindowBytes), grpc.InitialConnWindowSize(WindowBytes)}
}

// MessageBytes is the largest message either side accepts when the per-rule
// cap is maxRuleBytes (0 or less: shared.DefaultMaxRuleBytes).
func MessageBytes(maxRuleBytes int64) int {
	if maxRuleBytes <= 0 {
		maxRuleBytes = shared.DefaultMaxRuleBytes
	}
	return int(maxRuleBytes) + MetadataBytes
}

// callLimits are the per-call options that enforce MessageBytes on what a
// client receives. What it sends is left to the receiver's limit on
// purpose: a plugin's oversized HostFS request then fails in the host, which
// learns of it (Config.HostFSFailed), instead of failing unseen in the
// plugin.
func callLimits(maxRuleBytes int64) []grpc.CallOption {
	return []grpc.CallOption{grpc.MaxCallRecvMsgSize(max(MessageBytes(maxRuleBytes), RequestBytes))}
}

// HostFSLimits bound what the host spends serving one provider's HostFS.
type HostFSLimits struct {
	// MaxReadBytes caps one file; a larger cap asked for becomes this one.
	// 0: shared.DefaultMaxRuleBytes.
	MaxReadBytes int64
	// CallBudget caps the bytes of file content one ReadFiles call returns.
	// The files past it are answered with an error that wraps ErrOverBudget
	// (and shared.ErrTooLarge), so one small request naming a large file
	// many times costs the host the budget, not the product. 0: no budget.
	CallBudget int64
	// InFlight, when set, is shared by every HostFS the host serves at once:
	// a read holds its cap's worth of it from the read until the answer is
	// handed to gRPC, so concurrent calls cannot together hold more.
	InFlight *Bytes
}

// ErrOverBudget is the error for a file a ReadFiles call did not read
// because the call's budget was spent. Asking again, in a new call, reads it.
var ErrOverBudget = errors.New("over the per-call budget of the host's filesystem")

// overBudgetError crosses the wire with the too-large kind, the nearest the
// protocol has, and is recognised again by its text (errorFromProto).
type overBudgetError struct{ path string }

func (e overBudgetError) Error() string {
	return fmt.Sprintf("read %s: %s", e.path, ErrOverBudget)
}

func (e overBudgetError) Unwrap() []error { return []error{ErrOverBudget, shared.ErrTooLarge} }

// Bytes is a counting semaphore of bytes: what the host's HostFS servers hold
// in memory at once. Its zero value holds nothing; use NewBytes.
type Bytes struct {
	mu      sync.Mutex
	size    int64
	free    int64
	changed chan struct{}
}

// NewBytes returns a semaphore of n bytes.
func NewBytes(n int64) *Bytes {
	return &Bytes{size: n, free: n, changed: make(chan struct{})}
}

// acquire waits until n bytes are free, or ctx ends. A request larger than
// the whole semaphore waits for all of it, so it still makes progress.
func (b *Bytes) acquire(ctx context.Context, n int64) (int64, error) {
	if b == nil {
		return 0, nil
	}
	n = min(n, b.size)
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return n, nil
		}
		ch := b.changed
		b.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

func (b *Bytes) release(n int64) {
	if b == nil || n == 0 {
		return
	}
	b.mu.Lock()
	b.free += n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}
