package shared

// The handshake both sides of a provider connection must agree on. The
// transport builds its go-plugin configuration from these constants; they
// are plain values here so that a host or a provider in another language can
// read them without linking any transport.
const (
	// ProtocolVersion is the current version of the provider protocol. A
	// later version is negotiated side by side with this one, never in its
	// place.
	ProtocolVersion = 1

	// MagicCookieKey and MagicCookieValue are the environment variable a host
	// sets when it starts a provider. They never change once released; they
	// only keep a provider binary from being run by hand by mistake.
	MagicCookieKey   = "RULEBROKER_PROVIDER_PLUGIN"
	MagicCookieValue = "3f6c1b0e-rulebroker-provider-7d2a9e54"

	// PluginName is the name of the provider service in the plugin set.
	PluginName = "provider"
)
