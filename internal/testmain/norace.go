//go:build !race

package testmain

// Race reports whether the binary was built with the race detector.
const Race = false
