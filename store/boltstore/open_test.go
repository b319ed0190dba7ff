package boltstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestOpenNeverWrites: opening and closing a file, read-write or
// read-only, leaves its bytes as they were.
func TestOpenNeverWrites(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	writeCurrent(t, s, fixture()[2:])
	s.Close()
	before := fileHash(t, path)
	for range 3 {
		for _, ro := range []bool{false, true} {
			s, err := Open(path, Options{ReadOnly: ro})
			if err != nil {
				t.Fatal(err)
			}
			mustView(t, s, func(tx *Tx) error { _, err := tx.Sessions(); return err })
			s.Close()
			if fileHash(t, path) != before {
				t.Fatalf("opening the file (read-only %v) changed its bytes", ro)
			}
		}
	}
}

// TestOpenReadOnlyFile: a file the process cannot write (a read-only
// mount, another user's file) opens read-only.
func TestOpenReadOnlyFile(t *testing.T) {
	t.Parallel()
	if os.Geteuid() == 0 {
		t.Skip("root writes any file")
	}
	path := filepath.Join(t.TempDir(), "weft.db")
	s := openT(t, path)
	putSession(t, s, "s")
	s.Close()
	os.Chmod(path, 0o400)
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if _, err := ro.Sessions(); err != nil {
		t.Error(err)
	}
}

func TestNoCreate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, opt := range []Options{{NoCreate: true}, {ReadOnly: true}} {
		path := filepath.Join(dir, "missing", "folders", "weft.db")
		_, err := Open(path, opt)
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("%+v: error %v does not wrap fs.ErrNotExist or name %s", opt, err, path)
		}
		if strings.Count(err.Error(), path) != 1 {
			t.Errorf("%+v: error %q names the path more than once", opt, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%+v: Open made folders", opt)
		}
	}
	// Without NoCreate, read-write creates file and folders.
	path := filepath.Join(dir, "new", "weft.db")
	openT(t, path)
	if _, err := os.Stat(path); err != nil {
		t.Error(err)
	}
}

// TestOpenErrorsSayItOnce: an error from opening the file names it once
// (bbolt's own error already does), and a folder is not mistaken for a
// damaged file.
func TestOpenErrorsSayItOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, ro := range []bool{false, true} {
		_, err := Open(dir, Options{ReadOnly: ro})
		if err == nil || err.Error() != dir+" is a folder, not a database file" {
			t.Errorf("a folder (read-only %v): %v", ro, err)
		}
	}
	// /sys refuses new files even to root.
	path := "/sys/weft-test.db"
	if os.Geteuid() != 0 {
		locked := filepath.Join(dir, "locked")
		os.Mkdir(locked, 0o500)
		path = filepath.Join(locked, "x.db")
	}
	_, err := Open(path, Options{})
	if !errors.Is(err, fs.ErrPermission) {
		t.Skipf("opening %s: %v, not a permission error", path, err)
	}
	if n := strings.Count(err.Error(), path); n != 1 {
		t.Errorf("error %q names the path %d times", err, n)
	}
}

// TestOpenAfterReplaced: a weft waiting for the lock of a file that
// another process then replaces (a migration renames its result over it)
// opens the new file, not the old one it waited on.
func TestOpenAfterReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "weft.db")
	old := openT(t, path)
	putSession(t, old, "old")
	newer := filepath.Join(dir, "newer.db")
	s := openT(t, newer)
	putSession(t, s, "new")
	s.Close()

	done := make(chan *Store)
	go func() {
		s, err := Open(path, Options{Timeout: 5 * time.Second})
		if err != nil {
			t.Error(err)
		}
		done <- s
	}()
	waitHeld(t, path, 2) // old's, and the goroutine's waiting for the lock
	if err := os.Rename(newer, path); err != nil {
		t.Fatal(err)
	}
	old.Close()
	got := <-done
	if got == nil {
		return
	}
	defer got.Close()
	mustView(t, got, func(tx *Tx) error {
		if _, err := tx.Session("new"); err != nil {
			t.Errorf("opened the replaced file: %v", err)
		}
		return nil
	})
}

// waitHeld waits until this process holds path open n times: an Open
// that holds it is waiting for its lock. It skips the test where /proc
// cannot tell.
func waitHeld(t *testing.T, path string, n int) {
	t.Helper()
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // what /proc says
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot tell which files this process holds: %v", err)
		}
		held := 0
		for _, fd := range fds {
			if target, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && target == path {
				held++
			}
		}
		if held >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is held open %d times after 10 s, want %d", path, held, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestOpenEmptyFile: a file created but never written reads as an empty
// database, and stays empty.
func TestOpenEmptyFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "empty.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	mustView(t, s, func(tx *Tx) error {
		if all, err := tx.Sessions(); len(all) != 0 || err != nil {
			t.Errorf("Sessions = %v, %v", all, err)
		}
		if _, err := tx.Session("x"); !errors.Is(err, ErrNotFound) {
			t.Errorf("Session = %v", err)
		}
		return nil
	})
	if err := s.update(func(*Tx) error { return nil }); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Update of an empty read-only file: %v", err)
	}
	s.Close()
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Errorf("the file has %d bytes now", fi.Size())
	}
	if f, err := Check(path); err != nil || len(f) > 0 {
		t.Errorf("Check = %v, %v", f, err)
	}
}
