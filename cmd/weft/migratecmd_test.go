package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/store/pgstore/pgtest"
)

// migrateSource makes a file with two sessions edited through the
// commands (a digest, tags, a snip, a memory policy, a fork) and returns
// it with the sessions' IDs.
func migrateSource(t *testing.T) (string, []string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "from.db")
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code, err := runCLI(db, args...)
		if code != 0 {
			t.Fatalf("weft %s: exit %d, %v\n%s", strings.Join(args, " "), code, err, errOut)
		}
		return out
	}
	sid := strings.TrimSpace(run("new", "auth design"))
	run("call", "append_messages", "session_id="+sid, `messages=[{"role":"user","content":"JWT or sessions?"},{"role":"assistant","content":"JWT, short-lived."},{"role":"user","content":"And revocation?"},{"role":"assistant","content":"A deny list."},{"role":"user","content":"Fine."}]`)
	run("call", "digest_messages", "session_id="+sid, "start_idx=0", "end_idx=1", "summary=Chose JWT")
	run("call", "tag_messages", "session_id="+sid, "ids=m3,m4", "tags=revocation")
	run("call", "snip_messages", "session_id="+sid, "ids=m5")
	run("memory", sid, "max_active_turns=8")
	fork := strings.TrimSpace(run("fork", sid, "--at", "1"))
	return db, []string{sid, fork}
}

// weft migrate --to copies a file into another that shows and lists the
// same; run again it copies nothing; a destination changed since is
// refused; --to is required and must be another store.
func TestMigrateCommandFileToFile(t *testing.T) {
	t.Parallel()
	from, ids := migrateSource(t)
	to := filepath.Join(t.TempDir(), "sub", "to.db")
	out, errOut, code, err := runCLI(from, "migrate", "--to", to)
	if code != 0 || !strings.Contains(out, "2 sessions (2 copied, 0 resumed, 0 updated, 0 skipped") || !strings.Contains(out, "verified 2 sessions") {
		t.Fatalf("migrate: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for _, id := range ids {
		if !strings.Contains(errOut, id) {
			t.Errorf("no progress line for %s:\n%s", id, errOut)
		}
	}
	sameOutput(t, from, to, "ls")
	for _, id := range ids {
		sameOutput(t, from, to, "show", id)
		sameOutput(t, from, to, "call", "list_operations", "session_id="+id)
	}

	out, _, code, err = runCLI(from, "migrate", "--to", to)
	if code != 0 || !strings.Contains(out, "(0 copied, 0 resumed, 0 updated, 2 skipped") {
		t.Errorf("migrate again: exit %d, %v\n%s", code, err, out)
	}

	// The copy moves on: it is no earlier state of the source's.
	if _, code, err := weft(t, to, "call", "append_messages", "session_id="+ids[0], `messages=[{"role":"user","content":"written in the copy"}]`); code != 0 {
		t.Fatal(err)
	}
	_, _, code, err = runCLI(from, "migrate", "--to", to)
	if code != 1 || err == nil || !strings.Contains(err.Error(), "does not overwrite") || !strings.Contains(err.Error(), ids[0]) {
		t.Errorf("migrate into a copy that moved on: exit %d, %v", code, err)
	}

	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"migrate"}, "migrate needs --to"},
		{[]string{"migrate", "--to", from}, "copies from"},
		{[]string{"migrate", "--to", to, "extra"}, "takes no arguments"},
	} {
		if _, _, code, err := runCLI(from, c.args...); code != 2 || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("weft %s: exit %d, %v; want 2 saying %q", strings.Join(c.args, " "), code, err, c.says)
		}
	}
	if _, _, code, err := runCLI(filepath.Join(t.TempDir(), "none.db"), "migrate", "--to", to); code != 1 || err == nil || !strings.Contains(err.Error(), "nothing to migrate") {
		t.Errorf("migrate from no file: exit %d, %v", code, err)
	}
}

// sameOutput checks that a command prints the same on two stores.
func sameOutput(t *testing.T, a, b string, args ...string) {
	t.Helper()
	outA, errA, codeA, _ := runCLI(a, args...)
	outB, errB, codeB, _ := runCLI(b, args...)
	if codeA != 0 || codeB != 0 || outA != outB || outA == "" {
		t.Errorf("weft %s: exit %d and %d, outputs differ:\n%s%s\n---\n%s%s", strings.Join(args, " "), codeA, codeB, outA, errA, outB, errB)
	}
}

// weft migrate --to postgres://… copies a file into a database, and
// weft --store URL migrate --to FILE back into a file: all three show
// the same.
func TestMigratePostgresCommand(t *testing.T) {
	t.Parallel()
	url := pgtest.FreshDB(t, os.Getenv(pgtest.ServerEnv))
	from, ids := migrateSource(t)
	if out, errOut, code, err := runCLI(from, "migrate", "--to", url); code != 0 || !strings.Contains(out, "2 copied") {
		t.Fatalf("migrate --to URL: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	back := filepath.Join(t.TempDir(), "back.db")
	if out, errOut, code, err := runCLI("", "--store", url, "migrate", "--to", back); code != 0 || !strings.Contains(out, "2 copied") {
		t.Fatalf("--store URL migrate --to FILE: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for _, id := range ids {
		want, _, _, _ := runCLI(from, "show", id)
		got, errOut, code, _ := runCLI("", "--store", url, "show", id)
		if code != 0 || got != want {
			t.Errorf("show %s on the database:\n%s%s\nwant\n%s", id, got, errOut, want)
		}
		sameOutput(t, from, back, "show", id)
	}
}
