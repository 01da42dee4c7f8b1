package trust

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLockRoundTripAndCheck(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "rulebroker-provider-x")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lockPath := filepath.Join(dir, "home", ".rulebroker", "plugins.lock")
	l, err := Read(lockPath)
	if err != nil || len(l.Entries) != 0 {
		t.Fatalf("a missing lock file is an empty lock: %v %v", l, err)
	}
	e, err := Trust(&l, bin, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "rulebroker-provider-x" || len(e.SHA256) != 64 {
		t.Fatalf("entry %+v", e)
	}
	// Trusting again replaces, not duplicates.
	if _, err := Trust(&l, bin, time.Now()); err != nil || len(l.Entries) != 1 {
		t.Fatalf("re-trust: %v, %d entries", err, len(l.Entries))
	}
	if err := Write(lockPath, l); err != nil {
		t.Fatal(err)
	}
	back, err := Read(lockPath)
	if err != nil || len(back.Entries) != 1 || back.Entries[0].SHA256 != e.SHA256 {
		t.Fatalf("read back %+v, %v", back, err)
	}
	if err := back.Check(bin, e.SHA256); err != nil {
		t.Fatalf("trusted binary refused: %v", err)
	}
	if err := back.Check(bin, strings.Repeat("0", 64)); !errors.Is(err, ErrChanged) {
		t.Fatalf("changed binary: %v", err)
	}
	if err := back.Check(bin+"2", e.SHA256); !errors.Is(err, ErrNotTrusted) {
		t.Fatalf("unknown path: %v", err)
	}
}

func TestReadRefusesJunkAndHugeLocks(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("{not json"), 0o600)
	if _, err := Read(junk); err == nil || !strings.Contains(err.Error(), "not a lock file") {
		t.Fatalf("junk: %v", err)
	}
	huge := filepath.Join(dir, "huge")
	os.WriteFile(huge, make([]byte, MaxLockBytes+1), 0o600)
	if _, err := Read(huge); err == nil || !strings.Contains(err.Error(), "cap") {
		t.Fatalf("huge: %v", err)
	}
}

func TestWorldWritableRefused(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "b")
	os.WriteFile(bin, []byte("x"), 0o755)
	os.Chmod(bin, 0o757)
	f, _ := os.Open(bin)
	defer f.Close()
	if err := CheckFile(f); err == nil || !strings.Contains(err.Error(), "world-writable") {
		t.Fatalf("world-writable binary: %v", err)
	}
	open := filepath.Join(dir, "open")
	os.Mkdir(open, 0o755)
	os.Chmod(open, 0o777)
	if err := CheckDir(open); err == nil || !strings.Contains(err.Error(), "world-writable") {
		t.Fatalf("world-writable dir: %v", err)
	}
	inner := filepath.Join(open, "plugins")
	os.Mkdir(inner, 0o755)
	if err := CheckDir(inner); err == nil || !strings.Contains(err.Error(), "sticky") {
		t.Fatalf("dir under a world-writable parent: %v", err)
	}
	os.Chmod(open, 0o777|os.ModeSticky)
	if err := CheckDir(inner); err != nil {
		t.Fatalf("a sticky parent (like /tmp) is fine: %v", err)
	}
}

// A lock file anyone can write would let anyone trust a binary: it is
// refused, and nothing it lists is trusted.
func TestReadRefusesAWorldWritableLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plugins.lock")
	if err := Write(path, Lock{Entries: []Entry{{Name: "x", Path: "/x", SHA256: "00"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := Read(path); err != nil {
		t.Fatalf("a private lock: %v", err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	l, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), "world-writable") || len(l.Entries) != 0 {
		t.Fatalf("got %+v, %v; want a world-writable refusal", l, err)
	}
}
