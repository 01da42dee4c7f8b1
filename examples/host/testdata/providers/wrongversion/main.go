// Command wrongversion speaks a protocol version the host does not know.
package main

import (
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/rulebroker/rulebroker/internal/wire"
	"github.com/rulebroker/rulebroker/shared"
)

func main() {
	hs := wire.Handshake()
	hs.ProtocolVersion = 99
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: hs,
		Plugins:         wire.VersionedPlugins(nil)[shared.ProtocolVersion],
		GRPCServer:      goplugin.DefaultGRPCServer,
	})
}
