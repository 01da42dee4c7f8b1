//go:build race

package main

// raceBuild: the test binary is built with -race, so the hosts and providers
// the tests start are replaced by a build without it (see plainChildren).
func init() { raceBuild = true }
