// Package diag holds the one warning type every part of the host SDK reports
// in: the broker, the rulebook, the stream triggers and the instruction
// reconciler. A warning never stops other files or providers from loading; it
// tells the host (and through it the user) what did not load and why.
package diag

// Warning is one problem the host SDK found.
type Warning struct {
	// Source names who found it: a provider's name (or its binary's path when
	// it failed before it could name itself), "instructions", "rulebook".
	Source string `json:"source,omitempty"`
	// Path is the file concerned, when there is one.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

// String renders the warning as "source: path: message", leaving out the
// parts that are empty.
func (w Warning) String() string {
	s := w.Message
	if w.Path != "" {
		s = w.Path + ": " + s
	}
	if w.Source != "" {
		s = w.Source + ": " + s
	}
	return s
}
