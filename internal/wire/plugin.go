// Package wire carries the vocabulary of package shared between a host and
// its provider plugins: the go-plugin handshake and plugin set built from
// shared's constants, the gRPC adapters for the Provider and HostFS services,
// and the conversion between shared's plain Go types and the generated
// messages of shared/providerv1. Nothing outside this package sees a proto
// message, a gRPC status or a go-plugin client.
//
// It also turns transport failures into typed errors (see Error), so the host
// explains a failed provider without reading gRPC's or go-plugin's text.
//
// It is internal to the module: the plugin SDK and the host's broker are its
// only users, and neither exposes it.
package wire

import (
	"context"
	"io"
	"os/exec"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"github.com/hashicorp/go-plugin/runner"
	"google.golang.org/grpc"

	"github.com/rulebroker/rulebroker/shared"
	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// Handshake returns the go-plugin handshake built from shared's constants.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  shared.ProtocolVersion,
		MagicCookieKey:   shared.MagicCookieKey,
		MagicCookieValue: shared.MagicCookieValue,
	}
}

// VersionedPlugins returns the plugin sets per protocol version. impl is the
// provider to serve on the plugin side and nil on the host side.
func VersionedPlugins(impl shared.Provider) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{
		shared.ProtocolVersion: {shared.PluginName: &providerPlugin{impl: impl}},
	}
}

// providerPlugin is the go-plugin glue for the Provider service. It speaks
// gRPC only.
type providerPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	impl shared.Provider
}

// GRPCServer registers the provider on the plugin's gRPC server.
func (p *providerPlugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterProviderServer(s, &providerServer{impl: p.impl, broker: broker})
	return nil
}

// GRPCClient returns the host's view of a provider: a Provider.
func (p *providerPlugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return newProviderClient(c, broker), nil
}

// Serve runs impl as a provider plugin process and returns when the host is
// done with it. logger receives go-plugin's logs; stdout carries the
// handshake and nothing else.
func Serve(impl shared.Provider, logger hclog.Logger) {
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: VersionedPlugins(impl),
		GRPCServer:       pluginServer,
		Logger:           logger,
	})
}

// pluginServer is the plugin's gRPC server. It receives only the host's
// requests, which are small (RequestBytes). What it sends is bounded per
// Discover call by the host's per-rule cap, which arrives with the request
// (see streamSink), so its send limit is left to that check.
func pluginServer(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(RequestBytes))
	return goplugin.DefaultGRPCServer(append(opts, windowServerOptions()...))
}

// hostDialOptions are the options of the host's connection to a provider.
func hostDialOptions(maxRuleBytes int64) []grpc.DialOption {
	return append(windowDialOptions(), grpc.WithDefaultCallOptions(callLimits(maxRuleBytes)...))
}

// Config says how to start a provider process.
type Config struct {
	// Command returns the provider process, not yet started, with its whole
	// environment in Env (nothing of the host's is added, only go-plugin's
	// handshake variables) and Stdout and Stderr unset. socketDir is a fresh
	// directory, for this provider alone, where it creates its socket and
	// where the host's sockets for it are; go-plugin removes it on Kill.
	Command func(socketDir string) (*exec.Cmd, error)
	// StartTimeout bounds the start and the handshake.
	StartTimeout time.Duration
	// Logger receives go-plugin's logs and the provider's hclog output.
	Logger hclog.Logger
	// Stderr receives what the provider writes to stderr.
	Stderr io.Writer
	// MaxRuleBytes is the host's per-rule cap (0: shared.DefaultMaxRuleBytes).
	// The host refuses any message from the provider larger than it plus
	// MetadataBytes, and answers no read with more than it.
	MaxRuleBytes int64
	// HostFS bounds what serving the host's filesystem to this provider may
	// cost; its MaxReadBytes defaults to MaxRuleBytes.
	HostFS HostFSLimits
	// HostFSFailed, when set, is called for each HostFS call that failed in
	// transport rather than with a file's error: a request over the limit,
	// an answer that could not be sent. The provider's view of the host's
	// files was then incomplete, whatever it reports.
	HostFSFailed func(error)
}

// Client is a started provider process.
type Client struct {
	client *goplugin.Client
	mu     sync.Mutex // guards runner and runErr, set from go-plugin's start
	runner *procRunner
	runErr error
	// Provider calls the provider. Its errors are *Error values for every
	// transport or remote failure.
	Provider shared.Provider
	// PID is the provider's process id, 0 when unknown.
	PID int
}

// Start starts the provider process and completes the handshake. A failure
// is an *Error of kind ErrStart, ErrJunk, ErrProtocol, ErrNoService,
// ErrTimeout or ErrCanceled, and no process is left behind. The start ends
// at StartTimeout or when ctx ends, whichever comes first, plus the bounded
// cleanup of Kill.
func Start(ctx context.Context, cfg Config) (*Client, error) {
	c := &Client{}
	c.client = goplugin.NewClient(&goplugin.ClientConfig{
		HandshakeConfig:  Handshake(),
		VersionedPlugins: VersionedPlugins(nil),
		RunnerFunc: func(_ hclog.Logger, spec *exec.Cmd, socketDir string) (runner.Runner, error) {
			cmd, err := cfg.Command(socketDir)
			if err == nil {
				// go-plugin's handshake variables, PLUGIN_UNIX_SOCKET_DIR among them.
				cmd.Env = append(cmd.Env, spec.Env...)
				var r *procRunner
				if r, err = newProcRunner(cmd); err == nil {
					c.mu.Lock()
					c.runner = r
					c.mu.Unlock()
					return r, nil
				}
			}
			c.mu.Lock()
			c.runErr = err
			c.mu.Unlock()
			return nil, err
		},
		SkipHostEnv:      true,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		Logger:           cfg.Logger,
		StartTimeout:     cfg.StartTimeout,
		Stderr:           cfg.Stderr,
		SyncStdout:       io.Discard,
		SyncStderr:       io.Discard,
		GRPCDialOptions:  hostDialOptions(cfg.MaxRuleBytes),
	})

	// go-plugin's start does not watch ctx; killing the process group when
	// ctx ends makes it return ("exited before we could connect") at once.
	type started struct {
		rpc goplugin.ClientProtocol
		err error
	}
	done := make(chan started, 1)
	go func() {
		rpc, err := c.client.Client()
		done <- started{rpc, err}
	}()
	var st started
	select {
	case st = <-done:
	case <-ctx.Done():
		c.killGroup()
		select {
		case st = <-done:
		case <-time.After(killWait):
			st.err = ctx.Err()
		}
		if st.err == nil {
			st.err = ctx.Err()
		}
	}
	if st.err != nil {
		c.Kill()
		c.mu.Lock()
		runErr := c.runErr
		c.mu.Unlock()
		if runErr != nil {
			return nil, startError(ctx, runErr)
		}
		if ctx.Err() != nil {
			return nil, startError(ctx, ctx.Err())
		}
		return nil, startError(ctx, st.err)
	}
	c.mu.Lock()
	r := c.runner
	c.mu.Unlock()
	if r != nil {
		r.mu.Lock()
		c.PID = r.pid
		r.mu.Unlock()
	}
	raw, err := st.rpc.Dispense(shared.PluginName)
	if err != nil {
		c.Kill()
		return nil, &Error{Kind: ErrNoService, Op: "start", Detail: firstLine(err.Error()), Err: err}
	}
	prov, ok := raw.(*providerClient)
	if !ok {
		c.Kill()
		return nil, &Error{Kind: ErrNoService, Op: "start", Detail: "the plugin set returned an unexpected type"}
	}
	prov.limits = cfg.HostFS
	prov.failed = cfg.HostFSFailed
	if prov.limits.MaxReadBytes <= 0 {
		prov.limits.MaxReadBytes = cfg.MaxRuleBytes
	}
	c.Provider = prov
	return c, nil
}

// Kill stops the provider: its whole process group first, so that nothing
// it started survives and nothing can hold go-plugin's cleanup up, then
// go-plugin's own cleanup, waited for at most killWait.
func (c *Client) Kill() {
	c.killGroup()
	done := make(chan struct{})
	go func() {
		c.client.Kill()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(killWait):
		// Only a process that left the provider's group and holds a
		// connection could get here; the host goes on without it.
	}
	// The HostFS server lives as long as the provider connection.
	if p, ok := c.Provider.(*providerClient); ok {
		p.closeHostFS()
	}
}

// killGroup kills the provider's process group, if it was started.
func (c *Client) killGroup() {
	c.mu.Lock()
	r := c.runner
	c.mu.Unlock()
	if r != nil {
		_ = r.Kill(context.Background())
	}
}
