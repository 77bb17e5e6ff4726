package analystaccess

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRewriteChangesModTimeSecond: a rotation written in the same second as the grant still gets a
// later modification time in whole seconds, the only change ClickHouse 18.16 notices in users.d (seen:
// a rotation 0.3 s after its grant was never loaded, and the old password kept working).
func TestRewriteChangesModTimeSecond(t *testing.T) {
	dir := t.TempDir()
	r := record{WorkspaceID: "ws-1", User: "revtrack_analyst_0123456789abcdef", PasswordSHA256: strings.Repeat("a", 64)}
	if err := writeUserFile(dir, r); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, r.User+".xml")
	first, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range []string{"b", "c"} {
		r.PasswordSHA256 = strings.Repeat(h, 64)
		if err := writeUserFile(dir, r); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.ModTime().Unix() <= first.ModTime().Unix() {
			t.Errorf("rewrite %d: modified at %v, not a later second than %v", i+1, st.ModTime(), first.ModTime())
		}
		first = st
	}
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), strings.Repeat("c", 64)) || strings.Contains(string(b), strings.Repeat("b", 64)) {
		t.Fatalf("file: %s %v", b, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := removeUserFile(dir, r.User); err != nil {
		t.Fatal(err)
	}
	if err := removeUserFile(dir, r.User); err != nil {
		t.Errorf("removing twice: %v", err)
	}
	if err := writeUserFile(dir, record{WorkspaceID: "ws-1", User: "x'><y", PasswordSHA256: strings.Repeat("a", 64)}); err == nil {
		t.Error("a user name that is no identifier was written")
	}
}
