// Package workfs provides the host's implementations of shared.HostFS, the
// project's one filesystem abstraction:
//
//   - OS reads the real filesystem ("host path": Stat follows symlinks,
//     Resolve follows every link).
//   - Policy wraps any HostFS and confines every call to a set of allowed
//     roots, checking both the path asked for and the path it resolves to,
//     so a repository-owned symlink cannot point reads outside the roots.
//   - FindRoot finds the workspace root the providers and the instruction
//     reconciler must agree on.
//
// The in-memory tree for tests is in workfstest.
//
// Every error wraps fs.ErrNotExist, fs.ErrPermission, shared.ErrNotDir or
// shared.ErrTooLarge where those apply and names the path concerned. A
// symlink loop is reported as syscall.ELOOP, which is deliberately not
// fs.ErrNotExist: a loop is a broken file, not a missing one.
package workfs
