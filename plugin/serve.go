package plugin

// Serve runs p as a provider plugin process. It never returns while the host
// is connected. It logs as hclog JSON on stderr; stdout carries the go-plugin
// handshake and nothing else.
func Serve(p Provider) {
	panic("not yet implemented")
}
