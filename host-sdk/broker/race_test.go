//go:build race

package broker

// raceDetector: the race detector's shadow memory and its slowness (the
// flood then takes longer than the deadline on a busy machine) make a
// peak-RSS figure meaningless, so that test runs without it only.
const raceDetector = true
