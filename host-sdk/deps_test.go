// Package hostsdk_test checks what the host SDK's packages link. A host that
// only reads rules, classifies them or reconciles instructions must not pull
// in the transport: gRPC, protobuf and go-plugin belong to the broker and the
// wire alone.
package hostsdk_test

import (
	"os/exec"
	"strings"
	"testing"
)

func TestTransportStaysOutOfTheVocabulary(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	// Relative to this folder, host-sdk/.
	pkgs := []string{
		"./ttsr", "./rulebook", "./instructions", "./workfs", "./lifecycle", "./diag", "./ruleset", "../shared",
	}
	forbidden := []string{"google.golang.org/grpc", "google.golang.org/protobuf", "github.com/hashicorp/go-plugin"}
	// One go list for all of them: each call loads the module's packages
	// again, a second or more under a loaded machine.
	args := append([]string{"list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(pkgs) {
		t.Fatalf("go list printed %d packages for %d asked:\n%s", len(lines), len(pkgs), out)
	}
	for _, line := range lines {
		fields := strings.Fields(line)
		for _, dep := range fields[1:] {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", fields[0], dep)
				}
			}
		}
	}
}

// stderr is what a failed command printed on its standard error.
func stderr(err error) []byte {
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.Stderr
	}
	return nil
}
