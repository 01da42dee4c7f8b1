// Package bench is rulebroker's benchmark command: it generates its own trees
// and measures the example host end to end, the instruction reconciler and
// the stream triggers, each next to the floor it should be compared with.
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/
//
// Every figure is the median, min and max of several repetitions inside one
// benchmark iteration (-short: one repetition, for CI, so it cannot rot).
// Wall times are in seconds (s-median, s-min, s-max); peak RSS (MB-peak-rss)
// is the kernel's ru_maxrss of the waited-for host, which Linux reports as
// the largest of the host and every descendant it waited for, that is the
// biggest single process of the run, not their sum. The floor ("cat") is
// `find DIR -type f -exec cat {} +` with its output discarded: every byte of
// every file read once, by as few processes as find needs.
//
// The package holds no code a program can import; it exists for its
// benchmarks.
package bench
