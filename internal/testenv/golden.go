// Package testenv gives tests the real local services (isolated per test) and golden-file checks.
package testenv

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Golden compares got with the file at path. With UPDATE_GOLDEN=1 it rewrites the file instead; a
// missing golden file fails, so a new contract surface cannot land unrecorded.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file %s: %v (run with UPDATE_GOLDEN=1 to create it)", path, err)
	}
	if !bytes.Equal(want, got) {
		t.Fatalf("%s differs from the golden file; if the change is deliberate, rerun with UPDATE_GOLDEN=1\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}

// Eventually polls cond every 100 ms until it holds, failing the test after 30 s.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
