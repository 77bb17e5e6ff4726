package analystaccess

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"text/template"
	"time"
)

// userFile is one workspace's analyst user in ClickHouse's users.d (18.16 and current versions read
// the same format). readonly = 1 refuses writes, DDL and SET (so none of the limits below can be
// lifted by the user); allow_databases is its own database only (`system` stays readable, as for
// every user). The profile bounds one query, and the quota and concurrency bound a workspace's
// share of a server every tenant's pipeline runs on.
var userFile = template.Must(template.New("user").Parse(`<?xml version="1.0"?>
<!--
  Written by revtrack for workspace {{.WorkspaceID}} (revtrack admin analyst, /api/admin/analyst-access);
  a rotation rewrites it and a revocation removes it: do not edit. Only the password's SHA-256 is here.
-->
<yandex>
    <profiles>
        <{{.User}}>
            <readonly>1</readonly>
            <max_execution_time>300</max_execution_time>
            <max_memory_usage>4000000000</max_memory_usage>
            <max_result_rows>10000000</max_result_rows>
            <result_overflow_mode>throw</result_overflow_mode>
            <max_concurrent_queries_for_user>4</max_concurrent_queries_for_user>
        </{{.User}}>
    </profiles>
    <quotas>
        <{{.User}}>
            <interval>
                <duration>3600</duration>
                <queries>2000</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>3600</execution_time>
            </interval>
        </{{.User}}>
    </quotas>
    <users>
        <{{.User}}>
            <password_sha256_hex>{{.PasswordSHA256}}</password_sha256_hex>
            <networks>
                <ip>::/0</ip>
            </networks>
            <profile>{{.User}}</profile>
            <quota>{{.User}}</quota>
            <allow_databases>
                <database>{{.User}}</database>
            </allow_databases>
        </{{.User}}>
    </users>
</yandex>
`))

// Names are generated (UserName) and hashes hex; checked again because they become XML element
// names and file names.
var (
	userNameRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,127}$`)
	sha256Re   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func userPath(dir, user string) string { return filepath.Join(dir, user+".xml") }

// writeUserFile writes the user's file atomically (the server must never read half of it, and it
// reads every *.xml of the directory, so the temporary name does not end in .xml), and leaves the
// file alone when it already holds the same content, since a rewrite makes the server reload.
func writeUserFile(dir string, r record) error {
	if !userNameRe.MatchString(r.User) || !sha256Re.MatchString(r.PasswordSHA256) || !workspaceIDRe.MatchString(r.WorkspaceID) {
		return fmt.Errorf("analyst user %q: not a generated name or hash", r.User)
	}
	var b bytes.Buffer
	if err := userFile.Execute(&b, r); err != nil {
		return err
	}
	path := userPath(dir, r.User)
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, b.Bytes()) {
		return nil
	}
	var prev time.Time
	if st, err := os.Stat(path); err == nil {
		prev = st.ModTime()
	}
	tmp := filepath.Join(dir, "."+r.User+".tmp")
	// 0644: the server may run as another user; the file holds no secret, only a hash of 128
	// random bits.
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write the analyst user into %s: %w", dir, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("write the analyst user into %s: %w", dir, err)
	}
	return bumpModTime(path, prev)
}

// bumpModTime makes a rewritten file's modification time differ from the previous one in whole
// seconds: ClickHouse 18.16 notices a changed users.d file by its mtime in seconds, so a rotation
// in the same second as the grant would never be loaded and the old password would keep working.
func bumpModTime(path string, prev time.Time) error {
	if prev.IsZero() {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.ModTime().Unix() > prev.Unix() {
		return nil
	}
	t := time.Unix(prev.Unix()+1, 0)
	return os.Chtimes(path, t, t)
}

func removeUserFile(dir, user string) error {
	if !userNameRe.MatchString(user) {
		return fmt.Errorf("analyst user %q: not a generated name", user)
	}
	if err := os.Remove(userPath(dir, user)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove the analyst user from %s: %w", dir, err)
	}
	return nil
}
