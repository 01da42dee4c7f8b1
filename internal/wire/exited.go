package wire

// Exited reports whether the provider process has exited (it crashed, was
// killed, or was stopped with Kill). A host that keeps providers running for
// a session checks it to notice a crash even when it has nothing to ask.
func (c *Client) Exited() bool { return c.client.Exited() }
