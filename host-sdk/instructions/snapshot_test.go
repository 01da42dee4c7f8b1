package instructions

import (
	"testing"
)

// snapshotV1Golden is a version 1 snapshot as earlier builds wrote it. A
// snapshot outlives the build that wrote it (a session resumed after an
// upgrade), so this exact text must keep restoring, and must be written back
// byte for byte.
const snapshotV1Golden = `{"version":1,"cwd":"/w","root":"/w","started":true,"dirs":[".","user-global"],` +
	`"loaded":[{"key":".\u0000AGENTS.md","dir":".","candidate":"AGENTS.md","path":"/w/AGENTS.md","resolvedPath":"/w/AGENTS.md",` +
	`"digest":"sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",` +
	`"trimmedDigest":"sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb"}],` +
	`"cache":[{"key":".\u0000AGENTS.md","resolvedPath":"/w/AGENTS.md","dev":1,"ino":7,"size":1,"mtimeNs":1000,"ctimeNs":1000,` +
	`"digest":"sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb",` +
	`"trimmedDigest":"sha256:ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb","recordedAtNs":5000000000}]}`

func TestSnapshotV1StillRestores(t *testing.T) {
	f := newFixture(t, "/w")
	f.m.WriteFile("/w/AGENTS.md", []byte("a"))
	if err := f.r.Restore([]byte(snapshotV1Golden)); err != nil {
		t.Fatal(err)
	}
	got, err := f.r.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != snapshotV1Golden {
		t.Fatalf("snapshot written back differs:\n got: %s\nwant: %s", got, snapshotV1Golden)
	}
	// The file's version differs from the cached one, so it is read again;
	// its bytes are the ones the snapshot loaded, so nothing is announced.
	wantChanges(t, f.baseline(), "")
	if l := f.r.Loaded(); len(l) != 1 || l[0].Path != "/w/AGENTS.md" {
		t.Fatalf("loaded: %+v", l)
	}
}
