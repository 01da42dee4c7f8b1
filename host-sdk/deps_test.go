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
	for _, pkg := range pkgs {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range forbidden {
				if dep == f || strings.HasPrefix(dep, f+"/") {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
