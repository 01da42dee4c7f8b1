package shared

import (
	"context"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"

	pb "github.com/rulebroker/rulebroker/shared/providerv1"
)

// ProtocolVersion is the current version of the provider protocol.
const ProtocolVersion = 1

// PluginName is the name of the provider plugin in the plugin set.
const PluginName = "provider"

// Handshake returns the handshake both sides must agree on. The cookie never
// changes once released; it only keeps a provider binary from being run by
// hand by mistake.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{
		ProtocolVersion:  ProtocolVersion,
		MagicCookieKey:   "RULEBROKER_PROVIDER_PLUGIN",
		MagicCookieValue: "3f6c1b0e-rulebroker-provider-7d2a9e54",
	}
}

// VersionedPlugins returns the plugin sets per protocol version. impl is the
// provider to serve on the plugin side and nil on the host side.
func VersionedPlugins(impl Provider) map[int]goplugin.PluginSet {
	return map[int]goplugin.PluginSet{
		ProtocolVersion: {PluginName: &ProviderPlugin{Impl: impl}},
	}
}

// ProviderPlugin is the go-plugin glue for the Provider service. It speaks
// gRPC only.
type ProviderPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	Impl Provider
}

// GRPCServer registers the provider on the plugin's gRPC server.
func (p *ProviderPlugin) GRPCServer(broker *goplugin.GRPCBroker, s *grpc.Server) error {
	pb.RegisterProviderServer(s, &providerServer{impl: p.Impl, broker: broker})
	return nil
}

// GRPCClient returns the host's view of a provider: a Provider.
func (p *ProviderPlugin) GRPCClient(_ context.Context, broker *goplugin.GRPCBroker, c *grpc.ClientConn) (interface{}, error) {
	return &providerClient{client: pb.NewProviderClient(c), broker: broker}, nil
}
