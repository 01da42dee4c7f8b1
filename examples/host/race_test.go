//go:build race

package main

// raceBuild: the test binary is built with -race, so the provider-team build
// uses it too (and reuses the race-built packages already in the cache).
func init() { raceBuild = true }
