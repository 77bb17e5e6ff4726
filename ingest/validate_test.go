package ingest

import (
	"regexp"
	"strings"
	"testing"
)

// The expressions validID and validName implement (docs/TRACKING.md states the rules).
var (
	idRe   = regexp.MustCompile(`^[\x21-\x7e]{1,128}$`)
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,64}$`)
)

func checkValidators(t *testing.T, s string) {
	t.Helper()
	if got, want := validID(s), idRe.MatchString(s); got != want {
		t.Errorf("validID(%q) = %v, the expression says %v", s, got, want)
	}
	if got, want := validName(s), nameRe.MatchString(s); got != want {
		t.Errorf("validName(%q) = %v, the expression says %v", s, got, want)
	}
}

func TestValidatorsAreTheExpressions(t *testing.T) {
	for _, s := range []string{"", "a", "evt-1", "page_view", "checkout:step.2", "a b", "a\tb", "a\n", "\x7f", "\x20", "\x21",
		"~", "é", "a\xff", "ＡＢ", strings.Repeat("x", 64), strings.Repeat("x", 65), strings.Repeat("!", 128),
		strings.Repeat("!", 129), "name/slash", "UPPER", "a+b"} {
		checkValidators(t, s)
	}
	for c := range 256 {
		checkValidators(t, string([]byte{byte(c)}))
		checkValidators(t, "ok"+string([]byte{byte(c)}))
	}
}

func FuzzValidators(f *testing.F) {
	for _, s := range []string{"evt-1", "page_view", "a b", "é"} {
		f.Add(s)
	}
	f.Fuzz(checkValidators)
}
